"""Recovery study: simulate each regime (labelled / unlabelled, few / many episodes), fit, and report
90% interval coverage of p_capable, p_timely, share_timing, p_success and their mean absolute error.

Run: .venv/bin/python benchmarks/recovery_study.py [--reps N] [--out DIR]
Targets: coverage 85–95 %; MAE of share_timing ≤ 0.05 at 60 episodes per cell.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))

import pandas as pd  # noqa: E402

REGIMES = ("timing_dominated", "capability_dominated", "mixed")
#: episodes per model × task_type × clock cell = tasks × seeds
SIZES = {"few (20/cell)": dict(tasks=4, seeds=5), "many (60/cell)": dict(tasks=12, seeds=5)}


def main(argv=None):
    from rtanalysis.model.calibrate import calibrate

    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--out", default=None)
    ap.add_argument("--regimes", nargs="*", default=list(REGIMES))
    args = ap.parse_args(argv)
    parts = []
    for regime in args.regimes:
        for labelled in (True, False):
            for size, kw in SIZES.items():
                t = time.time()
                tab = calibrate(regime, reps=args.reps, seed=100, draws=args.draws, chains=args.chains, ci_prob=0.9,
                                labelled=labelled, **kw)
                tab["size"] = size
                tab["seconds"] = round(time.time() - t, 1)
                parts.append(tab)
                print(tab.to_string(index=False), file=sys.stderr, flush=True)
    out = pd.concat(parts, ignore_index=True)
    wide = out.pivot_table(index=["preset", "labelled", "size"], columns="quantity",
                           values=["coverage", "mae"]).round(3)
    print(wide.to_string())
    diag = out.groupby(["preset", "labelled", "size"])[["fits_ok", "worst_rhat", "worst_ess_bulk", "divergences"]].first()
    print(diag.round(3).to_string())
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        out.to_csv(os.path.join(args.out, "recovery_study.csv"), index=False)


if __name__ == "__main__":
    main()
