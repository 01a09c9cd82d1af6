"""Which posterior predictive checks flag which misspecification (issue 12 §4): for each preset,
simulate, fit, run ``FitResult.ppc()`` and record, per check family, the share of replicates where
at least one of the family's rows is extreme (p < 0.025 or > 0.975) and the share of its rows that
are. A well-specified preset (``mixed``) gives the false-flag rates of the same families.

    .venv/bin/python benchmarks/ppc_detection.py [--reps 2 --draws 300 --chains 2] [--presets ...]

Rows are appended to ``--out`` (one block per fit, resumable); the summary prints per preset ×
family. A family-level "any row extreme" has the multiplicity of its rows (dozens of cells), so
the row share is the rate to compare with the nominal 5 %.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))

import pandas as pd  # noqa: E402

#: a check's family: its name up to the quantile or miss class
FAMILY = {"log_latency_p10": "latency_body", "log_latency_p50": "latency_body", "log_latency_p90": "latency_body",
          "log_latency_p99": "latency_tail"}


def family(check: str) -> str:
    if check in FAMILY:
        return FAMILY[check]
    return "success_given_misses" if check.startswith("success_given_misses") else check


def one(preset: str, rep: int, draws: int, chains: int) -> pd.DataFrame:
    from rtanalysis import fit
    from rtanalysis.simulate import simulate

    sim = simulate(preset, seed=rep, labelled=False)
    res = fit(sim.load(), draws=draws, chains=chains, seed=rep, progress=False, tune=None)
    ppc = res.ppc()
    ppc["family"] = ppc["check"].map(family)
    out = ppc.groupby("family").agg(rows=("extreme", "size"), extreme_rows=("extreme", "sum")).reset_index()
    out.insert(0, "preset", preset)
    out.insert(1, "rep", rep)
    out["fit_ok"] = bool(res.diagnostics["ok"])
    return out


def main(argv=None) -> int:
    from rtanalysis.simulate.presets import MISSPEC_PRESETS

    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--draws", type=int, default=300)
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--presets", nargs="*", default=["mixed", *MISSPEC_PRESETS])
    ap.add_argument("--out", default="benchmarks/results/ppc_detection.csv")
    args = ap.parse_args(argv)
    done = set()
    if os.path.exists(args.out):
        old = pd.read_csv(args.out)
        done = set(zip(old["preset"], old["rep"]))
    for rep in range(args.reps):
        for preset in args.presets:
            if (preset, rep) in done:
                continue
            t = time.time()
            block = one(preset, rep, args.draws, args.chains)
            block.to_csv(args.out, mode="a", header=not os.path.exists(args.out), index=False)
            print(f"{preset} rep {rep}: {time.time() - t:.0f} s", file=sys.stderr, flush=True)
    got = pd.read_csv(args.out)
    got["any"] = got["extreme_rows"] > 0
    table = got.groupby(["preset", "family"]).agg(reps=("rep", "nunique"), flagged_reps=("any", "mean"),
                                                   extreme_row_share=("extreme_rows", "sum"), rows=("rows", "sum"))
    table["extreme_row_share"] = table["extreme_row_share"] / table["rows"]
    print(table.round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
