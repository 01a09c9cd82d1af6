"""The latency-cell lookup of every decision in the aggregation (``model.data.cell_rows``) against
the per-decision Python dictionary lookup it replaced, side by side on ``leaderboard60``; same rows
asserted, seconds and ratio printed, and the whole ``aggregate`` timed for scale.

    python benchmarks/bench_cell_lookup.py [--tasks 100 --seeds 32]

Results are appended to ``benchmarks/results/bench_cell_lookup.txt``.
"""

from __future__ import annotations

import argparse
import os
import time

from _results import append_result


def main(argv=None) -> int:
    import numpy as np

    from rtanalysis.model import data as md
    from rtanalysis.simulate import simulate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=32)
    args = ap.parse_args(argv)
    lr = simulate("leaderboard60", seed=0, tasks=args.tasks, seeds=args.seeds).load()
    t0 = time.perf_counter()
    d = md.aggregate(lr.episodes, lr.steps)
    whole = time.perf_counter() - t0
    # the decisions' (m, k, u) as the aggregation sees them: one row per observed latency cell member
    lat = d.latency[["m", "k", "u"]]
    cell_index = {tuple(r): j for j, r in enumerate(lat.to_numpy())}
    obs = lat.iloc[np.random.default_rng(0).integers(0, len(lat), len(lr.steps))].reset_index(drop=True)
    t0 = time.perf_counter()
    loop = np.array([cell_index[tuple(r)] for r in obs[["m", "k", "u"]].to_numpy()])
    t_loop = time.perf_counter() - t0
    t0 = time.perf_counter()
    vec = md.cell_rows(cell_index, obs)
    t_vec = time.perf_counter() - t0
    assert np.array_equal(loop, vec)
    text = (f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; leaderboard60 --tasks {args.tasks} --seeds "
            f"{args.seeds}: {len(lr.episodes):,} episodes, {len(obs):,} lookups (one per decision); load average "
            f"{tuple(round(x, 1) for x in os.getloadavg())}\n"
            f"dict lookup per decision {t_loop:8.2f} s\ncell_rows (vectorised)   {t_vec:8.2f} s   ratio "
            f"{t_loop / t_vec:.1f}x, same rows\nwhole aggregate (now)    {whole:8.2f} s\n")
    append_result("bench_cell_lookup.txt", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
