"""The loader's text keys as ``str`` against pandas categoricals (``key_dtype``), side by side: per
stage that reads every decision — load, metrics (``compute_all``), the model's aggregates — the
seconds, the resident set before and the peak, each key dtype in a fresh process on the same log.

    .venv/bin/python benchmarks/key_dtype_memory.py [--rung 1e6] [--logs FILE]

``--logs``: an existing ``leaderboard60`` log (e.g. one ``bench_scale.py`` wrote); otherwise the rung is
simulated first (untimed). Results go to ``benchmarks/results/key_dtype_memory.txt``.
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

KEY_DTYPES = ("str", "category")
STAGES = ("load", "metrics", "aggregate")


def _child(logs: str, key_dtype: str) -> dict:
    from rtanalysis import load
    from rtanalysis.metrics import compute_all
    from rtanalysis.model.data import aggregate

    out = {}

    def stage(name, fn, *args, **kwargs):
        before = _status_mib("VmRSS")
        _reset_peak()
        t0 = time.perf_counter()
        result = fn(*args, **kwargs)
        out[name] = (time.perf_counter() - t0, before, _peak_mib())
        return result

    lr = stage("load", load, logs, progress=False, key_dtype=key_dtype)
    out["frames_mib"] = {t: float(getattr(lr, t).memory_usage(deep=True).sum()) / 2**20 for t in ("episodes", "steps")}
    out["decisions"] = len(lr.steps)
    stage("metrics", compute_all, lr.episodes, lr.steps)
    stage("aggregate", aggregate, lr.episodes, lr.steps)
    return out


def _run(logs: str, key_dtype: str) -> dict:
    cmd = [sys.executable, __file__, "_child", "--logs", logs, "--key-dtype", key_dtype]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads([x for x in p.stdout.splitlines() if x.startswith("RESULT ")][-1][7:])


def _table(res: dict, label: str) -> str:
    lines = [f"{label}: {res['str']['decisions']:,} decisions; per stage seconds, resident MiB before, peak MiB",
             f"{'stage':<12}" + "".join(f"{k + ' s':>12}{k + ' before':>16}{k + ' peak':>14}" for k in KEY_DTYPES)]
    for s in STAGES:
        lines.append(f"{s:<12}" + "".join(f"{res[k][s][0]:12.1f}{res[k][s][1]:16.0f}{res[k][s][2]:14.0f}"
                                          for k in KEY_DTYPES))
    for t in ("episodes", "steps"):
        lines.append(f"{t + ' MiB':<12}" + "".join(f"{res[k]['frames_mib'][t]:42.1f}" for k in KEY_DTYPES))
    peak = {k: max(res[k][s][2] for s in STAGES) for k in KEY_DTYPES}
    lines.append(f"largest peak: str {peak['str']:.0f} MiB, category {peak['category']:.0f} MiB "
                 f"({peak['str'] / peak['category']:.2f}x); load average {os.getloadavg()[0]:.1f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd")
    ch = sub.add_parser("_child")
    ch.add_argument("--logs", required=True)
    ch.add_argument("--key-dtype", required=True, choices=KEY_DTYPES)
    ap.add_argument("--rung", default="1e6", choices=sorted(RUNGS))
    ap.add_argument("--logs", default=None)
    args = ap.parse_args(argv)
    if args.cmd == "_child":
        print("RESULT " + json.dumps(_child(args.logs, args.key_dtype)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        logs = args.logs
        if logs is None:
            from rtanalysis.simulate import simulate

            tasks, seeds = RUNGS[args.rung]
            logs = str(simulate("leaderboard60", seed=0, tasks=tasks, seeds=seeds).write(Path(tmp))["episodes"])
        res = {k: _run(logs, k) for k in KEY_DTYPES}
    append_result("key_dtype_memory.txt", _table(res, f"leaderboard60 rung {args.rung}" if args.logs is None
                                                 else f"the log given with --logs ({Path(args.logs).name})"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
