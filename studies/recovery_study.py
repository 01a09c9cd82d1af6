"""Recovery study: simulate each regime (labelled / unlabelled, few / many episodes), fit, and report
90% interval coverage of p_capable, p_timely, share_timing, p_success and their mean absolute error.

Run: .venv/bin/python studies/recovery_study.py [--reps N] [--out DIR]
Compare two runs (issue 12: coverage must not fall by more than 0.03):
     .venv/bin/python studies/recovery_study.py --compare OLD.csv NEW.csv
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


def compare(old_csv: str, new_csv: str) -> pd.DataFrame:
    """Per line and decomposition quantity: coverage and MAE of two runs, and the change."""
    keys = ["preset", "labelled", "size", "quantity"]
    m = pd.read_csv(old_csv).merge(pd.read_csv(new_csv), on=keys, suffixes=("_old", "_new"))
    m = m[m["quantity"].isin(["p_capable", "p_timely", "p_success", "share_timing"])]
    m["coverage_change"] = m["coverage_new"] - m["coverage_old"]
    out = m[keys + ["coverage_old", "coverage_new", "coverage_change", "mae_old", "mae_new"]].round(3)
    print(out.to_string(index=False))
    print(f"largest fall {-out['coverage_change'].min():.3f}; lines falling by more than 0.03: "
          f"{int((m['coverage_change'] < -0.03 - 1e-9).sum())} of {len(m)}")
    print(m.groupby("quantity")[["coverage_old", "coverage_new"]].mean().round(3).to_string())
    return out


def main(argv=None):
    from rtanalysis.model.calibrate import calibrate

    if argv is None and len(sys.argv) == 4 and sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3])
        return

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
