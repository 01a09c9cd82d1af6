"""Recovery study: simulate each regime (labelled / unlabelled, few / many episodes), fit, and report
90% interval coverage of p_capable, p_timely, share_timing, p_success and their mean absolute error.

Run: .venv/bin/python studies/recovery_study.py [--reps N] [--out DIR]
Compare two runs (issue 12: coverage must not fall by more than 0.03):
     .venv/bin/python studies/recovery_study.py --compare OLD.csv NEW.csv
Tables of result CSVs without fitting (a later file's presets replace an earlier one's), and their txt:
     .venv/bin/python studies/recovery_study.py --summary A.csv [B.csv ...] [OUT.txt]
Targets: coverage 85–95 %; MAE of share_timing ≤ 0.05 at 60 episodes per cell.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))

import pandas as pd  # noqa: E402
from _common import summary_to  # noqa: E402

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
    from rtanalysis.model.studies.calibrate import calibrate

    if argv is None and len(sys.argv) == 4 and sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3])
        return
    if argv is None and len(sys.argv) >= 3 and sys.argv[1] == "--summary":
        files = [a for a in sys.argv[2:] if a.endswith(".csv")]
        txt = [a for a in sys.argv[2:] if a.endswith(".txt")]
        summary(files, txt[0] if txt else None)
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
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        out.to_csv(os.path.join(args.out, "recovery_study.csv"), index=False)
    with summary_to(os.path.join(args.out, "recovery_study.txt") if args.out else None):
        tables(out)


def tables(out: pd.DataFrame) -> None:
    """Print coverage and MAE per (preset, labelled, size) × quantity, and the fits' diagnostics."""
    wide = out.pivot_table(index=["preset", "labelled", "size"], columns="quantity",
                           values=["coverage", "mae"]).round(3)
    print(wide.to_string())
    diag = out.groupby(["preset", "labelled", "size"])[["fits_ok", "worst_rhat", "worst_ess_bulk", "divergences"]].first()
    print(diag.round(3).to_string())


def summary(files: list[str], txt: str | None) -> pd.DataFrame:
    """The tables of one or more result CSVs, no fitting: a later file's presets replace an earlier
    file's (a rerun of some regimes, ``--regimes``), so the table shows the latest run of each."""
    out = None
    for f in files:
        new = pd.read_csv(f)
        out = new if out is None else pd.concat([out[~out["preset"].isin(new["preset"])], new], ignore_index=True)
    with summary_to(txt):
        print("# from " + ", ".join(os.path.basename(f) for f in files) + " (a later file's presets replace an earlier one's)")
        tables(out)
    return out


if __name__ == "__main__":
    main()
