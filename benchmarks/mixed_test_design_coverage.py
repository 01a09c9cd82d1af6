"""Coverage on the design of ``tests/test_model_recovery.py::test_recovery_on_the_simulator_mixed_design``
(the ``mixed`` preset, 4 tasks × 3 seeds = 12 episodes per cell, unlabelled, 2 chains × 300 draws) over
several simulation seeds: is the test's own seed typical, or does its one replicate sit at the edge?

Run:  .venv/bin/python benchmarks/mixed_test_design_coverage.py --seeds 11 27
Appends the per-seed table and the means to ``benchmarks/results/mixed_test_design_coverage.txt``.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))

import pandas as pd  # noqa: E402
from _results import append_result  # noqa: E402


def main(argv=None) -> pd.DataFrame:
    from rtanalysis import fit
    from rtanalysis.model.calibrate import score_fit
    from rtanalysis.simulate import simulate

    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs=2, default=(11, 27), help="simulation seeds [first, last)")
    args = ap.parse_args(argv)
    rows = []
    for seed in range(*args.seeds):
        sim = simulate("mixed", seed=seed, tasks=4, seeds=3, labelled=False)
        res = fit(sim.load(), draws=300, chains=2, seed=0, progress=False, tune=None)
        for ci in (0.9, 0.99):
            s = score_fit(res.decomposition(ci_prob=ci), sim.truth)
            for q, g in s.groupby("quantity"):
                rows.append((seed, ci, q, g["covered"].mean()))
    df = pd.DataFrame(rows, columns=["seed", "ci_prob", "quantity", "coverage"])
    wide = df.pivot_table(index=["ci_prob", "seed"], columns="quantity", values="coverage").round(2)
    means = df.groupby(["ci_prob", "quantity"])["coverage"].mean().unstack().round(3)
    append_result("mixed_test_design_coverage.txt",
                  f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; seeds {args.seeds[0]}..{args.seeds[1] - 1}"
                  f"\n{wide.to_string()}\nmean over seeds\n{means.to_string()}")
    return df


if __name__ == "__main__":
    main()
