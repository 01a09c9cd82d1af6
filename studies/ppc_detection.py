"""Which posterior predictive checks flag which misspecification (issue 12 §4): for each preset,
simulate, fit, run ``FitResult.ppc()`` and record, per check family
(``rtanalysis.model.checks.CHECK_FAMILIES``), its rows and extreme rows (p < 0.025 or > 0.975).
A well-specified preset (``mixed``) gives the false-flag rates of the same families.

    .venv/bin/python studies/ppc_detection.py [--reps 2 --draws 300 --chains 2] [--presets ...]
    .venv/bin/python studies/ppc_detection.py --summary-only     # the unlabelled table (the default --out)
    .venv/bin/python studies/ppc_detection.py --labelled --out studies/results/ppc_detection_labelled.csv

Rows are appended to ``--out`` (one block per fit, resumable). The summary prints, per preset ×
family, the share of replicates in which the family is flagged as the package flags it (more
extreme rows than chance: ``checks.family_flags``), in which any row is extreme (the multiplicity
of dozens of cells: a well-specified model is "flagged" this way in most fits), and the share of
rows extreme (nominal 5 %).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))

import pandas as pd  # noqa: E402
from _common import done_runs, summary_to  # noqa: E402

#: families recorded before the timing shares were one family (rows and extremes add up)
OLD_FAMILIES = {"share_early": "timing_shares", "share_late_or_silent": "timing_shares",
                "share_silent": "timing_shares"}


def one(preset: str, rep: int, draws: int, chains: int, labelled: bool = False,
        item_latency: bool = False, latency_family: str = "normal", clock_effects: bool = False,
        latency_by_correctness: bool = False) -> pd.DataFrame:
    from rtanalysis import ModelSpec, fit
    from rtanalysis.simulate import simulate

    sim = simulate(preset, seed=rep, labelled=labelled)
    spec = ModelSpec.from_parts(latency_family, item_latency=item_latency, clock_effects=clock_effects,
                                latency_by_correctness=latency_by_correctness)
    res = fit(sim.load(), spec, draws=draws, chains=chains, seed=rep, progress=False, tune=None)
    from rtanalysis.model.checks import family_flags

    out = family_flags(res.ppc())[["family", "rows", "extreme_rows"]]
    out.insert(0, "preset", preset)
    out.insert(1, "rep", rep)
    out["fit_ok"] = bool(res.diagnostics["ok"])
    out["latency_family"] = res.spec.latency_family  # the one fitted (``auto`` chooses per fit)
    return out


def main(argv=None) -> int:
    from rtanalysis.simulate.presets import MISSPEC_PRESETS

    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--draws", type=int, default=300)
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--presets", nargs="*", default=["mixed", *MISSPEC_PRESETS])
    ap.add_argument("--out", default="studies/results/ppc_detection_within_items.csv")
    ap.add_argument("--summary-only", action="store_true")
    ap.add_argument("--labelled", action="store_true", help="decision labels logged (adds the latency-by-"
                    "correctness check); use another --out")
    ap.add_argument("--item-latency", action="store_true", help="fit item time intensities; use another --out")
    ap.add_argument("--clock-effects", action="store_true", help="fit clock effects; use another --out")
    ap.add_argument("--latency-by-correctness", action="store_true",
                    help="fit a latency shift of wrong decisions (with --labelled); use another --out")
    ap.add_argument("--latency-family", default="normal", choices=("normal", "t", "mixture", "auto"),
                    help="the fit's latency family; use another --out")
    args = ap.parse_args(argv)
    if args.summary_only:
        with summary_to(Path(args.out).with_suffix(".txt")):
            print(summary(pd.read_csv(args.out)))
        return 0
    done = done_runs(args.out, ["preset", "rep"])
    for rep in range(args.reps):
        for preset in args.presets:
            if (preset, rep) in done:
                continue
            t = time.time()
            block = one(preset, rep, args.draws, args.chains, args.labelled, args.item_latency, args.latency_family,
                        args.clock_effects, args.latency_by_correctness)
            block.to_csv(args.out, mode="a", header=not os.path.exists(args.out), index=False)
            print(f"{preset} rep {rep}: {time.time() - t:.0f} s", file=sys.stderr, flush=True)
    with summary_to(Path(args.out).with_suffix(".txt")):
        print(summary(pd.read_csv(args.out)))
    return 0


def summary(got: pd.DataFrame) -> str:
    from scipy.stats import binom

    from rtanalysis.model.checks import FAMILY_ALPHA, ROW_RATE

    got = (got.assign(family=got["family"].replace(OLD_FAMILIES))
           .groupby(["preset", "rep", "family"], as_index=False)[["rows", "extreme_rows"]].sum())
    p = binom.sf(got["extreme_rows"] - 1, got["rows"], ROW_RATE)
    got["flagged"] = (got["extreme_rows"] > 0) & (p <= FAMILY_ALPHA)
    got["any"] = got["extreme_rows"] > 0
    parts = []
    for title, col in (("share of replicates with the family flagged (more extreme rows than chance, "
                        "binomial p <= 0.05): the package's flag", "flagged"),
                       ("share of replicates with >= 1 extreme row (no multiplicity correction)", "any")):
        t = got.pivot_table(index="preset", columns="family", values=col, aggfunc="mean")
        parts.append(title + "\n" + t.round(2).to_string())
    rows = got.groupby(["preset", "family"])[["rows", "extreme_rows"]].sum()
    share = (rows["extreme_rows"] / rows["rows"]).unstack()
    parts.append("share of rows extreme\n" + share.round(3).to_string())
    fit_level = got.groupby(["preset", "rep"])["flagged"].any().groupby("preset").mean()
    parts.append("share of replicates with any family flagged (what the report's model-checks paragraph says)\n"
                 + fit_level.round(2).to_string())
    reps = got.groupby("preset")["rep"].nunique()
    parts.append("replicates per preset: " + ", ".join(f"{k} {v}" for k, v in reps.items()))
    return "\n\n".join(parts)


if __name__ == "__main__":
    raise SystemExit(main())
