"""What the loader's frames cost in memory (issue 13's 2 GB target): ``leaderboard60`` at a rung of
``bench_scale.py`` simulated, ingested, then per frame the deep memory of every column, largest first,
and the resident set after the ingest. At 10^6 episodes the report holds these frames, so their sum is
a floor under its peak while all decisions stay in pandas.

    .venv/bin/python benchmarks/frame_memory.py [--rung 1e5]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _results import append_result
from bench_scale import RUNGS, _peak_mib, _status_mib


def _rss_mib() -> float:
    rss = _status_mib("VmRSS")
    return float("nan") if rss is None else rss


def main(argv=None) -> str:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rung", default="1e5", choices=sorted(RUNGS))
    args = ap.parse_args(argv)
    from rtanalysis.ingest import ingest
    from rtanalysis.simulate import simulate

    tasks, seeds = RUNGS[args.rung]
    with tempfile.TemporaryDirectory() as tmp:
        sim = simulate("leaderboard60", seed=0, tasks=tasks, seeds=seeds)
        logs = sim.write(Path(tmp) / "logs")["episodes"]
        del sim
        before = _rss_mib()
        lr, _ = ingest([str(logs)], Path(tmp) / "out")
        after, peak = _rss_mib(), _peak_mib()
    lines = [f"rung {args.rung}: {len(lr.episodes):,} episodes, {len(lr.steps):,} decisions; RSS before ingest "
             f"{before:.0f} MiB, after {after:.0f} MiB, peak {peak:.0f} MiB"]
    for name, frame in (("episodes", lr.episodes), ("steps", lr.steps)):
        mem = frame.memory_usage(deep=True, index=False) / 2**20
        text = mem[[str(frame[c].dtype) == "str" for c in frame.columns]].sum()
        lines.append(f"  {name}: {mem.sum():.1f} MiB ({text:.1f} in text columns); largest: "
                     + ", ".join(f"{c} {v:.1f}" for c, v in mem.sort_values(ascending=False).head(6).items()))
        # the alternative, side by side: the same text columns dictionary-encoded (pandas categoricals)
        cat = frame.astype({c: "category" for c in frame.columns if str(frame[c].dtype) == "str"})
        cmem = cat.memory_usage(deep=True, index=False) / 2**20
        lines.append(f"  {name} with categorical text: {cmem.sum():.1f} MiB (ratio {mem.sum() / cmem.sum():.2f}x); "
                     + ", ".join(f"{c} {cmem[c]:.1f}" for c in mem.sort_values(ascending=False).head(6).index))
    return "\n".join(lines)


if __name__ == "__main__":
    append_result("frame_memory.txt", main())
