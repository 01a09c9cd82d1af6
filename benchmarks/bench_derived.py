"""Derived quantities at scale, side by side: the capability of each row's episodes reduced to its
timing classes once per set of draws and kept (``Deriver``; the default), against recomputing it
for every scenario (what happens when nothing is kept: ``CAPABILITY_CACHE_BYTES = 0``, the cost
every λ and latency swap paid before the reduction, once capability no longer fitted the cache).
Parameter draws are random (the cost does not depend on their values). Prints the groups, the
Deriver set-up, the first scenario and a further one each way, the kept bytes and the ratio.

Then P(capable) of every row's capability classes, side by side on the same draws (merged from
``bench_capability.py``): the package's ``capable_probability`` (the logit once per distinct item and
clock, the length exponent once per distinct length, gathered per class) against the direct formula
(every term per class, what it did before 2026-12-05): seconds over all rows, the ratio, and whether
the two are bit-identical.

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
    from rtanalysis.model.studies.toy import random_param_draws

    return random_param_draws(d, S, np.random.default_rng(0))


def direct(p, d, m, k, items, xs, timed=False):
    """The formula term by term per class (the alternative)."""
    from scipy.special import log_expit

    logit = p.eta[:, m, k][:, None] + p.item[:, items] + d.type_offset[k]
    if p.timed_cap is not None:
        logit = logit + p.timed_cap[:, m][:, None] * np.broadcast_to(np.asarray(timed, dtype=float), np.shape(items))
    expo = np.exp(d.type_log_g[k] + p.length[:, k][:, None] * np.asarray(xs)[None, :])
    return np.exp(expo * log_expit(logit))


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
    capability(d, p, der)
    return 0


def capability(d, p, der) -> None:
    """P(capable) per row's capability classes: ``capable_probability`` against :func:`direct`."""
    from rtanalysis.model.derived import capable_probability
    from rtanalysis.schema import TIMED_CLOCKS

    seconds = {"package": 0.0, "direct": 0.0}
    same, classes = True, 0
    for r, s in zip(der.rows.itertuples(), der._row_cache):
        call = (p, d, int(r.m), int(r.k), s.items, s.xs)
        timed = r.clock in TIMED_CLOCKS
        t = time.perf_counter()
        a = capable_probability(*call, timed=timed)
        seconds["package"] += time.perf_counter() - t
        t = time.perf_counter()
        b = direct(*call, timed=timed)
        seconds["direct"] += time.perf_counter() - t
        same &= np.array_equal(a, b)
        classes += len(s.items)
    print(f"P(capable), {classes:,} capability classes: package (distinct items, lengths) {seconds['package']:7.2f} s, "
          f"direct (per class) {seconds['direct']:7.2f} s, ratio {seconds['direct'] / seconds['package']:.2f}x; "
          f"bit-identical: {same}")


if __name__ == "__main__":
    raise SystemExit(main())
