"""Memory across repeated fits in one process (a notebook, an SBC or calibration run): the resident set
and the live numba dispatchers after each of N fits of the SBC design, with the compiled log-density
re-used in the process (the package's behaviour) and, side by side, loaded again from the on-disk cache
for every fit (the behaviour before 2026-12-04, which leaked: PyTensor's numba backend registers every
fused kernel as a global numba overload that is never released).

    .venv/bin/python benchmarks/bench_fit_memory.py [--fits 12] [--family normal]

Each mode runs in a fresh process (``_run``) so neither inherits the other's compiled functions.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from pathlib import Path

from _results import append_result
from bench_scale import _status_mib


def _run(fits: int, family: str, reload: bool) -> list[dict]:
    import numpy as np
    from numba.core.registry import CPUDispatcher
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "studies"))  # sbc_study lives there
    from sbc_study import sbc_design

    from rtanalysis.model import sampler
    from rtanalysis.model import ModelSpec, fit
    from rtanalysis.model.studies.sbc import _load, generate, prior_draws, template_from_design

    t = template_from_design(sbc_design(), seed=0)
    _, p_all = prior_draws(t, fits, 0, family)
    rows = [{"fit": -1, "seconds": 0.0, "rss_mib": _status_mib("VmRSS"), "dispatchers": 0}]
    for j in range(fits):
        if reload:
            sampler._LOADED.clear()  # as before: every fit loads (and links) the functions again
        recs = generate(t, p_all.take([j]), np.random.default_rng([0, j]))
        t0 = time.perf_counter()
        res = fit(_load(recs), ModelSpec(family), draws=200, chains=2, seed=j, progress=False, tune=None)
        seconds = time.perf_counter() - t0
        del res
        gc.collect()
        rows.append({"fit": j, "seconds": seconds, "rss_mib": _status_mib("VmRSS"),
                     "dispatchers": sum(type(o) is CPUDispatcher for o in gc.get_objects())})
    return rows


def main(argv=None) -> str:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fits", type=int, default=12)
    ap.add_argument("--family", default="normal")
    ap.add_argument("--_child", choices=["reuse", "reload"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._child:
        print(json.dumps(_run(args.fits, args.family, args._child == "reload")))
        return ""
    out = {}
    for mode in ("reuse", "reload"):
        proc = subprocess.run([sys.executable, __file__, "--fits", str(args.fits), "--family", args.family,
                               "--_child", mode], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).parent)
        out[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
    lines = [f"{args.fits} fits of the SBC design ({args.family} latency, 2 chains x 200 draws) in one process",
             f"{'fit':>4} {'reuse s':>8} {'reuse MiB':>10} {'reuse disp':>11} {'reload s':>9} {'reload MiB':>11} "
             f"{'reload disp':>12}"]
    for a, b in zip(out["reuse"], out["reload"], strict=True):
        lines.append(f"{a['fit']:>4} {a['seconds']:>8.1f} {a['rss_mib']:>10.0f} {a['dispatchers']:>11} "
                     f"{b['seconds']:>9.1f} {b['rss_mib']:>11.0f} {b['dispatchers']:>12}")

    def growth(rows):  # MiB per fit after the first (the first loads or compiles everything once)
        return (rows[-1]["rss_mib"] - rows[1]["rss_mib"]) / (len(rows) - 2)

    def mean_s(rows):
        return sum(r["seconds"] for r in rows[2:]) / (len(rows) - 2)

    g_reuse, g_reload = growth(out["reuse"]), growth(out["reload"])
    lines.append(f"RSS growth per fit after the first: reuse {g_reuse:.1f} MiB, reload {g_reload:.1f} MiB; "
                 f"seconds per fit after the first: reuse {mean_s(out['reuse']):.2f}, reload "
                 f"{mean_s(out['reload']):.2f} (ratio {mean_s(out['reload']) / mean_s(out['reuse']):.2f}x)")
    text = "\n".join(lines)
    append_result("bench_fit_memory.txt", text)
    return text


if __name__ == "__main__":
    main()
