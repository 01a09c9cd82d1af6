"""Loader throughput: a generated rtlog of N decisions (default 1,000,000), loaded on one core.

Prints decisions per CPU-second and the peak resident memory of each alternative, side by side:
  * rtanalysis.load_rtlog (msgspec typed decoding + vectorised rules + tidy frames), for one plain
    .jsonl, the same log as .jsonl.gz, and the same episodes split over 500 files (memory must not
    grow with the number of files)
  * a plain stdlib-json parse of the same lines (parse only: the floor a plain loop starts from)
  * orjson parse only
Each measurement runs in a fresh subprocess (imports included) so peak memory is its own. CPU
seconds, not wall time, are compared: the fair figure on a shared machine. Target: every loader
row >= 200,000 decisions per CPU-second.

Last runs (2-core AMD EPYC VM shared with other work; results/bench_load.txt has the tables):
load_rtlog 327k/335k decisions per CPU-s (.jsonl), 279k/312k (.jsonl.gz), 326k/334k (500 files),
peak ~475 MiB; before the columnar rework 208k / 209k / 222k and ~840 MiB on the same machine.

    python benchmarks/bench_load.py [--decisions 1000000] [--steps 20]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson


def generate(path: Path, n_decisions: int, steps_per_episode: int, n_files: int = 1, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    n_eps = n_decisions // steps_per_episode
    path.mkdir(parents=True, exist_ok=True)
    per_file = -(-n_eps // n_files)
    eid = 0
    for f in range(n_files):
        name = path / f"part{f:04d}.jsonl"
        with open(name, "wb") as fh:
            for _ in range(min(per_file, n_eps - eid)):
                lat = rng.lognormal(-0.5, 0.6, steps_per_episode)
                t = np.arange(steps_per_episode) * 1.0
                ok = rng.random(steps_per_episode) < 0.9
                steps = [{"t_obs": float(t[i]), "t_act": float(t[i] + lat[i]), "window": [0.0, 1.0], "action": "U",
                          "correct_at_obs": bool(ok[i]), "tokens": 120, "reward": 0.0} for i in range(steps_per_episode)]
                rec = {"schema": "rtlog/1", "run_id": "bench", "episode_id": f"e{eid}", "model": f"m{eid % 7}",
                       "task": f"task{eid % 50}", "task_type": "high_frequency", "clock": "wall", "seed": eid % 5,
                       "success": bool(ok.all()), "conditions": {"load": "M"}, "steps": steps}
                fh.write(orjson.dumps(rec) + b"\n")
                eid += 1


def _measure(kind: str, path: str) -> dict:
    t0 = time.perf_counter()
    c0 = time.process_time()
    if kind == "load_rtlog":
        from rtanalysis.io import load_rtlog

        res = load_rtlog(path, progress=False)
        n = len(res.steps)
    elif kind in ("json_parse", "orjson_parse"):
        loads = json.loads if kind == "json_parse" else orjson.loads
        n = 0
        files = sorted(Path(path).rglob("*.jsonl*")) if Path(path).is_dir() else [Path(path)]
        for f in files:
            opener = gzip.open if f.name.endswith(".gz") else open
            with opener(f, "rb") as fh:
                for line in fh:
                    n += len(loads(line)["steps"])
    dt = time.perf_counter() - t0
    return {"seconds": dt, "cpu_seconds": time.process_time() - c0, "decisions": n, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def run_child(kind: str, path: Path) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, __file__, "--child", kind, str(path)], capture_output=True, text=True,
                         env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--decisions", type=int, default=1_000_000)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--child", nargs=2)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(_measure(*a.child)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        generate(tmp / "one", a.decisions, a.steps)
        generate(tmp / "many", a.decisions, a.steps, n_files=500)
        src = tmp / "one" / "part0000.jsonl"
        gz = tmp / "one.jsonl.gz"
        with open(src, "rb") as fi, gzip.open(gz, "wb", compresslevel=6) as fo:
            fo.write(fi.read())
        print(f"generated {a.decisions:,} decisions ({a.decisions // a.steps:,} episodes), "
              f"{src.stat().st_size / 2**20:.0f} MiB jsonl, in {time.perf_counter() - t0:.1f} s")
        rows = [
            ("rtanalysis.load_rtlog, 1 .jsonl", run_child("load_rtlog", src)),
            ("rtanalysis.load_rtlog, 1 .jsonl.gz", run_child("load_rtlog", gz)),
            ("rtanalysis.load_rtlog, 500 files", run_child("load_rtlog", tmp / "many")),
            ("stdlib json parse only", run_child("json_parse", src)),
            ("orjson parse only", run_child("orjson_parse", src)),
        ]
    # CPU seconds are this process's own time on its one core: the fair figure on a shared machine
    base = rows[0][1]["cpu_seconds"]
    print(f"{'alternative':38s} {'wall s':>7s} {'CPU s':>7s} {'decisions/CPU-s':>15s} {'peak MiB':>9s} {'CPU ratio':>9s}")
    for name, r in rows:
        print(f"{name:38s} {r['seconds']:7.2f} {r['cpu_seconds']:7.2f} {r['decisions'] / r['cpu_seconds']:15,.0f} "
              f"{r['peak_rss_mb']:9.0f} {r['cpu_seconds'] / base:9.2f}")
    rates = [r["decisions"] / r["cpu_seconds"] for name, r in rows if name.startswith("rtanalysis")]
    print(f"target >= 200,000 decisions/s on one core, every loader row: "
          f"{'met' if min(rates) >= 200_000 else 'NOT met'} (slowest {min(rates):,.0f} per CPU-second)")


if __name__ == "__main__":
    main()
