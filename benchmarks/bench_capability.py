"""P(capable) of every decomposition row's capability classes, side by side: the package's
``capable_probability`` (the logit computed once per distinct item and clock, the length exponent once
per distinct length, both gathered per class) against the direct formula (every term computed per
class, what it did before 2026-12-05), on the same parameter draws. Prints the seconds over all rows,
the ratio, and whether the two give bit-identical numbers.

    .venv/bin/python benchmarks/bench_capability.py [--aggregates PICKLE | --tasks 100 --seeds 3] [--draws 4000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _leaderboard import add_data_arguments, leaderboard_aggregates
from _results import append_result


def direct(p, d, m, k, items, xs, timed=False):
    """The formula term by term per class (the alternative)."""
    from scipy.special import log_expit

    logit = p.eta[:, m, k][:, None] + p.item[:, items] + d.type_offset[k]
    if p.timed_cap is not None:
        logit = logit + p.timed_cap[:, m][:, None] * np.broadcast_to(np.asarray(timed, dtype=float), np.shape(items))
    expo = np.exp(d.type_log_g[k] + p.length[:, k][:, None] * np.asarray(xs)[None, :])
    return np.exp(expo * log_expit(logit))


def main(argv=None) -> str:
    from rtanalysis.model.derived import Deriver, capable_probability
    from rtanalysis.model.toy import random_param_draws
    from rtanalysis.schema import TIMED_CLOCKS

    ap = argparse.ArgumentParser()
    add_data_arguments(ap)
    ap.add_argument("--draws", type=int, default=4000)
    args = ap.parse_args(argv)
    d, label = leaderboard_aggregates(args)
    p = random_param_draws(d, args.draws, np.random.default_rng(0))
    der = Deriver(d)
    seconds = {"package": 0.0, "direct": 0.0}
    same, classes = True, 0
    for j, (r, s) in enumerate(zip(der.rows.itertuples(), der._row_cache)):
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
    return (f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {label}; {len(d.episodes):,} episodes, "
            f"{len(der.rows)} rows, {classes:,} capability classes, {args.draws} draws\n"
            f"package (distinct items, lengths) {seconds['package']:7.2f} s\n"
            f"direct (per class)                {seconds['direct']:7.2f} s\n"
            f"ratio direct / package {seconds['direct'] / seconds['package']:.2f}x; bit-identical: {same}")


if __name__ == "__main__":
    append_result("bench_capability.txt", main())
