"""Derived quantities at scale, side by side: the capability of each row's episodes reduced to its
timing classes once per set of draws and kept (``Deriver``; the default), against recomputing it
for every scenario (what happens when nothing is kept: ``CAPABILITY_CACHE_BYTES = 0``, the cost
every λ and latency swap paid before the reduction, once capability no longer fitted the cache).
Parameter draws are random (the cost does not depend on their values). Prints the groups, the
Deriver set-up, the first scenario and a further one each way, the kept bytes and the ratio.

    .venv/bin/python benchmarks/bench_derived.py --dataset DIR [--draws 4000]
    .venv/bin/python benchmarks/bench_derived.py [--tasks 100 --seeds 3] [--draws 4000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _model_data(args):
    if args.dataset:
        from rtanalysis.scale import aggregate_dataset

        return aggregate_dataset(args.dataset)
    from rtanalysis.model.data import aggregate
    from rtanalysis.simulate import simulate

    lr = simulate("leaderboard60", seed=0, tasks=args.tasks, seeds=args.seeds).load()
    return aggregate(lr.episodes, lr.steps)


def _random_draws(d, S: int):
    from rtanalysis.model.toy import random_param_draws

    return random_param_draws(d, S, np.random.default_rng(0))


def _timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main(argv=None) -> int:
    from rtanalysis.model import derived

    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default=None, help="a Parquet dataset (rtanalysis ingest --dataset)")
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--draws", type=int, default=4000)
    args = ap.parse_args(argv)
    d = _model_data(args)
    p = _random_draws(d, args.draws)
    t = time.perf_counter()
    der = derived.Deriver(d)
    setup = time.perf_counter() - t
    a = sum(len(s.items) for s in der._row_cache)
    b = sum(len(s.class_weight) for s in der._row_cache)
    pairs = sum(s.weight.nnz for s in der._row_cache)
    print(f"{len(d.episodes):,} episodes, {len(der.rows)} rows, {args.draws} draws: {a:,} capability classes, "
          f"{b:,} timing classes, {pairs:,} joint groups; Deriver set-up {setup:.1f} s")
    first = _timed(lambda: der.compute(p))
    kept = _timed(lambda: der.compute(p, lam=2.0))
    print(f"  kept (default)      first scenario {first:6.1f} s, a further one {kept:6.2f} s, "
          f"kept {p.n * b * 8 / 2**20:.0f} MiB")
    derived.CAPABILITY_CACHE_BYTES = 0
    again = derived.Deriver(d)
    first0 = _timed(lambda: again.compute(p))
    further0 = _timed(lambda: again.compute(p, lam=2.0))
    print(f"  recomputed each     first scenario {first0:6.1f} s, a further one {further0:6.2f} s")
    print(f"  ratio per further scenario: {further0 / kept:.0f}x; a report runs ~86 (5 λ + 60 swaps + 21 curve points)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
