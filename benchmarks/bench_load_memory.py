"""The memory a large load leaves behind, side by side: after the loader has built the tables,
glibc's heap still holds the freed decoded records; with ``release_freed_memory`` (the default, at
``TRIM_MIN_DECISIONS`` or more decisions) it goes back to the OS, without it (the threshold raised out
of reach) it stays resident. For each way, in a fresh process: the load through ``rtanalysis.load``
(what ``ingest`` and ``report`` call), its seconds and peak; the resident set after it; then the two
stages that follow in ``rtanalysis report`` — the metrics tables (``compute_all``) and the model's
aggregates (``aggregate``) — with their peaks. Linux only (VmHWM, reset per stage).

    .venv/bin/python benchmarks/bench_load_memory.py --logs DIR_OR_FILE
    .venv/bin/python benchmarks/bench_load_memory.py [--rung 1e6]   # simulated leaderboard60
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import append_result
from bench_scale import RUNGS, _peak_mib, _reset_peak, _status_mib

WAYS = ("returned", "kept")


def _child(logs: str, way: str) -> dict:
    import importlib

    from rtanalysis.adapters import load
    from rtanalysis.metrics import compute_all
    from rtanalysis.model.data import aggregate

    if way == "kept":  # (the package's ``load`` function hides the subpackage of that name from attribute access)
        importlib.import_module("rtanalysis.io.sink").TRIM_MIN_DECISIONS = float("inf")
    out = {}
    _reset_peak()
    t = time.perf_counter()
    lr = load([logs], progress=False)
    out["load"] = (time.perf_counter() - t, _peak_mib())
    out["rss_after_load"] = _status_mib("VmRSS")
    for name, fn in (("metrics", compute_all), ("aggregate", aggregate)):
        _reset_peak()
        t = time.perf_counter()
        fn(lr.episodes, lr.steps)
        out[name] = (time.perf_counter() - t, _peak_mib())
    out["decisions"] = len(lr.steps)
    return out


def _run(logs: str, way: str) -> dict:
    p = subprocess.run([sys.executable, __file__, "_child", "--logs", logs, "--way", way], stdout=subprocess.PIPE,
                       text=True)
    lines = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
    return json.loads(lines[-1][7:]) if lines and not p.returncode else {"error": f"exit {p.returncode}"}


def main(argv=None) -> str | None:
    ap = argparse.ArgumentParser()
    ap.add_argument("command", nargs="?", default="compare", choices=["compare", "_child"])
    ap.add_argument("--logs", default=None, help="rtlog files (a file or folder); default: simulate --rung")
    ap.add_argument("--rung", default="1e6", choices=sorted(RUNGS))
    ap.add_argument("--way", default="returned", choices=WAYS)
    args = ap.parse_args(argv)
    if args.command == "_child":
        print("RESULT " + json.dumps(_child(args.logs, args.way)))
        return None
    with tempfile.TemporaryDirectory() as tmp:
        logs = args.logs
        if logs is None:
            from rtanalysis.simulate import simulate

            tasks, seeds = RUNGS[args.rung]
            logs = str(simulate("leaderboard60", seed=0, tasks=tasks, seeds=seeds).write(Path(tmp))["episodes"])
        load_at_start = os.getloadavg()
        res = {way: _run(logs, way) for way in WAYS}
    ok = [w for w in WAYS if "error" not in res[w]]
    lines = [f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average at start {load_at_start}; "
             f"{res[ok[0]]['decisions']:,} decisions" if ok else "# every way failed",
             f"{'freed heap':<12}{'load s':>8}{'load MiB':>10}{'RSS after':>11}{'metrics s':>11}{'metrics MiB':>13}"
             f"{'aggregate s':>13}{'aggregate MiB':>15}"]
    for way in WAYS:
        r = res[way]
        if "error" in r:
            lines.append(f"{way:<12}{r['error']}")
            continue
        lines.append(f"{way:<12}{r['load'][0]:8.1f}{r['load'][1]:10.0f}{r['rss_after_load']:11.0f}"
                     f"{r['metrics'][0]:11.1f}{r['metrics'][1]:13.0f}{r['aggregate'][0]:13.1f}{r['aggregate'][1]:15.0f}")
    if len(ok) == 2:
        a, b = res["returned"], res["kept"]
        lines.append(f"returned / kept: RSS after load {a['rss_after_load'] / b['rss_after_load']:.2f}x, "
                     f"metrics peak {a['metrics'][1] / b['metrics'][1]:.2f}x, "
                     f"aggregate peak {a['aggregate'][1] / b['aggregate'][1]:.2f}x, "
                     f"load time {a['load'][0] / b['load'][0]:.2f}x")
    lines.append(f"# load average at end {os.getloadavg()}")
    return "\n".join(lines)


if __name__ == "__main__":
    text = main()
    if text is not None:
        append_result("bench_load_memory.txt", text)
