"""Misspecification baseline: fit the current model to every misspecified preset
(``rtanalysis.simulate.presets.MISSPEC_PRESETS``; 3 models × 2 task types, 60 episodes per cell),
labelled and unlabelled, and score 90% interval coverage and MAE of p_capable, p_timely, p_success,
share_timing and the counterfactuals p_success at λ = 0.5, 2 and ``as:<model>``.

Run:   .venv/bin/python studies/misspec_study.py run --reps 3 --draws 400 --chains 2 \
           --scores studies/results/misspec_scores.csv
       .venv/bin/python studies/misspec_study.py summary --scores studies/results/misspec_scores.csv \
           --out studies/results/misspec_baseline.csv
       .venv/bin/python studies/misspec_study.py run ... --checks studies/results/misspec_checks.csv
       .venv/bin/python studies/misspec_study.py detection --checks studies/results/misspec_checks.csv \
           --out studies/results/misspec_detection.csv
``run`` appends one block of per-row scores per fit (replicates outermost, so an interrupted run
still covers every preset); ``summary`` aggregates them per preset × labelled × quantity. With
``--checks``, ``run`` also records which posterior predictive check families flag each fit, and
``detection`` gives each family's detection rate per preset with its binomial interval over replicates.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _common import done_runs, summary_to  # noqa: E402


def run(args) -> None:
    from rtanalysis.model import ModelSpec
    from rtanalysis.model.studies.calibrate import _one_replicate
    from rtanalysis.simulate.presets import MISSPEC_PRESETS

    presets = args.presets or list(MISSPEC_PRESETS)
    keys = ["preset", "labelled", "rep"]
    scored = done_runs(args.scores, keys)
    checked = done_runs(args.checks, keys) if args.checks else None
    reps = [args.only_rep] if args.only_rep is not None else range(args.reps)
    # latency by correctness needs the labels: an unlabelled fit of it would be the base model's
    runs = [(preset, labelled, r) for r in reps for preset in presets
            for labelled in ((True,) if args.latency_by_correctness else (True, False))]
    # the runs not yet scored first (replicates outermost), then those scored before --checks was given:
    # refitted (same seed, same fit) for their checks alone
    todo = [x for x in runs if x not in scored] + [x for x in runs if x in scored and checked is not None
                                                   and x not in checked]
    spec = ModelSpec.from_parts(args.latency_family, item_latency=args.item_latency, clock_effects=args.clock_effects,
                                latency_by_correctness=args.latency_by_correctness,
                                ended="ignore" if args.ignore_ended else "read", episode_effects=args.episode_effects)
    for preset, labelled, r in todo:
        t = time.time()
        on_fit = None
        if checked is not None and (preset, labelled, r) not in checked:
            def on_fit(res, preset=preset, labelled=labelled, r=r):  # the same fit's check families
                append_check_flags(res, args.checks, preset=preset, labelled=labelled, rep=r)
        s, diag = _one_replicate(preset, r, args.seed, args.draws, args.chains, 0.9, labelled, True, {}, spec,
                                 on_fit=on_fit)
        seconds = round(time.time() - t, 1)
        if (preset, labelled, r) not in scored:
            s.insert(0, "preset", preset)
            s.insert(1, "labelled", labelled)
            s["fit_ok"] = bool(diag["ok"])
            s["max_rhat"] = diag["max_rhat"]
            s["min_ess_bulk"] = diag["min_ess_bulk"]
            s["n_divergent"] = diag["n_divergent"]
            s["seconds"] = seconds
            s.to_csv(args.scores, mode="a", header=not os.path.exists(args.scores), index=False)  # one write per fit
        cov = s.groupby("quantity", sort=False)["covered"].mean().round(2).to_dict()
        print(f"{time.strftime('%H:%M:%S')} {preset} labelled={labelled} rep={r} {seconds}s {cov}", file=sys.stderr,
              flush=True)


def append_check_flags(res, path: str, **keys) -> None:
    """Append the fit's check families (:func:`rtanalysis.model.checks.family_flags` of its posterior
    predictive checks: rows, extreme rows, flagged) to the CSV at ``path``, headed by ``keys``."""
    from rtanalysis.model.checks import family_flags

    f = family_flags(res.ppc())
    f = f[f["kind"] == "posterior"][["family", "rows", "extreme_rows", "p_value", "flagged"]]
    for i, (name, value) in enumerate(keys.items()):
        f.insert(i, name, value)
    f["fit_ok"] = bool(res.diagnostics["ok"])
    f.to_csv(path, mode="a", header=not os.path.exists(path), index=False)


#: one line of the detection table: a preset, labelled or not, and a check family
DETECTION_KEYS = ["preset", "labelled", "family"]


def detection_table(flags: pd.DataFrame, ci: float = 0.95) -> pd.DataFrame:
    """Per preset × labelled × check family of the recorded flags (:func:`append_check_flags`): the
    replicates, how many flagged the family, the detection rate and its exact (Clopper–Pearson)
    binomial interval at ``ci`` over replicates (each replicate one independent fit). A family a fit
    had no row for (nothing to check) is not counted for that fit. A replicate recorded twice counts once."""
    from scipy.stats import binomtest

    f = flags.drop_duplicates(subset=["preset", "labelled", "rep", "family"])
    f = f[f["rows"] > 0]
    out = (f.groupby(DETECTION_KEYS, sort=False)
           .agg(reps=("rep", "nunique"), flagged=("flagged", "sum")).reset_index())
    out["flagged"] = out["flagged"].astype(int)
    out["rate"] = out["flagged"] / out["reps"]
    bounds = [binomtest(k, n).proportion_ci(confidence_level=ci, method="exact")
              for k, n in zip(out["flagged"], out["reps"])]
    out["rate_lo"] = [b.low for b in bounds]
    out["rate_hi"] = [b.high for b in bounds]
    return out


def detection(args) -> pd.DataFrame:
    out = detection_table(pd.concat([pd.read_csv(f) for f in args.checks], ignore_index=True))
    reps = out.groupby(["preset", "labelled"], sort=False)["reps"].max()
    print(f"replicates per preset: {reps.min()}-{reps.max()}")
    wide = out.pivot_table(index=["preset", "labelled"], columns="family", values="rate", sort=False).round(2)
    print("share of replicates with the family flagged (more extreme rows than chance, as the package flags it)\n"
          + wide.to_string())
    wide = out.assign(ci=out["rate_lo"].map("{:.2f}".format) + "-" + out["rate_hi"].map("{:.2f}".format)) \
        .pivot_table(index=["preset", "labelled"], columns="family", values="ci", aggfunc="first", sort=False)
    print("\n95% Clopper-Pearson interval of the rate, over replicates\n" + wide.to_string())
    if args.out:
        out.round(4).to_csv(args.out, index=False)
    return out


def replicate_bootstrap(s: pd.DataFrame, keys: list[str], n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per ``keys`` group: a 95 % percentile interval of the coverage from resampling whole replicates
    (``coverage_lo``, ``coverage_hi``). The cells of one replicate share its fit (intercepts, scales,
    the latency family), so their misses are not independent and the binomial SE over cells is too
    small; the replicates are the independent units. With few replicates (under about 12) a
    percentile bootstrap is too narrow: read it as a lower bound on the uncertainty there."""
    rng = np.random.default_rng(seed)
    rows = []
    for key, g in s.groupby(keys, sort=False):
        per_rep = g.groupby("rep")["covered"].agg(["sum", "size"])
        pick = rng.integers(0, len(per_rep), size=(n_boot, len(per_rep)))
        boot = per_rep["sum"].to_numpy()[pick].sum(axis=1) / per_rep["size"].to_numpy()[pick].sum(axis=1)
        rows.append((*key, *np.quantile(boot, [0.025, 0.975])))
    return pd.DataFrame(rows, columns=[*keys, "coverage_lo", "coverage_hi"])


#: one scored row: a replicate's cell, quantity and scenario
ROW_KEYS = ["preset", "labelled", "rep", "quantity", "model", "task_type", "clock", "scenario"]
#: one line of a summary
LINE_KEYS = ["preset", "labelled", "quantity"]


def coverage_table(s: pd.DataFrame) -> pd.DataFrame:
    """Per preset × labelled × quantity of the scores ``s``: coverage (with its replicate-resampled
    interval), MAE, bias, cells, replicates and the fits' diagnostics. A row scored twice (two workers
    ran one replicate) counts once."""
    s = s.drop_duplicates(subset=ROW_KEYS)
    out = (s.groupby(LINE_KEYS, sort=False)
           .agg(coverage=("covered", "mean"), mae=("abs_error", "mean"), bias=("estimate", "mean"),
                n_cells=("covered", "size"), reps=("rep", "nunique"), fits_ok=("fit_ok", "mean"),
                worst_rhat=("max_rhat", "max"), divergences=("n_divergent", "sum"))
           .reset_index())
    out["bias"] = out["bias"] - s.groupby(LINE_KEYS, sort=False)["truth"].mean().to_numpy()
    return out.merge(replicate_bootstrap(s, LINE_KEYS), on=LINE_KEYS)


def summary(args) -> pd.DataFrame:
    out = coverage_table(pd.concat([pd.read_csv(f) for f in args.scores], ignore_index=True))
    wide = out.pivot_table(index=["preset", "labelled"], columns="quantity", values="coverage", sort=False).round(2)
    print("coverage of 90% intervals\n" + wide.to_string())
    wide = out.assign(ci=out["coverage_lo"].map("{:.2f}".format) + "-" + out["coverage_hi"].map("{:.2f}".format)) \
        .pivot_table(index=["preset", "labelled"], columns="quantity", values="ci", aggfunc="first", sort=False)
    print("\n95% interval of the coverage, replicates resampled\n" + wide.to_string())
    wide = out.pivot_table(index=["preset", "labelled"], columns="quantity", values="mae", sort=False).round(3)
    print("\nMAE\n" + wide.to_string())
    if args.out:
        out.round(4).to_csv(args.out, index=False)
    print("\n" + markdown(out))
    print("\ncoverage (95% interval, replicates resampled) as docs/validation.md gives it\n" + interval_markdown(out))
    return out


def interval_markdown(out: pd.DataFrame, by: tuple[str, ...] = ("preset",), head: str = "preset") -> str:
    """One line per ``by`` × labelled: each quantity's coverage with its replicate-resampled interval, and
    the share_timing MAE (the tables of ``docs/validation.md``); a second ``by`` column (a structure) is
    shown in brackets after the first."""
    qs = list(dict.fromkeys(out["quantity"]))
    lines = [f"| {head} | labelled | reps | " + " | ".join(f"`{q}`" for q in qs) + " | share_timing MAE |",
             "|" + "---|" * (4 + len(qs))]
    for key, g in out.groupby([*by, "labelled"], sort=False):
        g = g.set_index("quantity")
        label = f"`{key[0]}`" + "".join(f" ({k})" for k in key[1:-1])
        cells = [f"{g.loc[q, 'coverage']:.2f} ({g.loc[q, 'coverage_lo']:.2f}–{g.loc[q, 'coverage_hi']:.2f})"
                 if q in g.index else "" for q in qs]
        mae = f"{g.loc['share_timing', 'mae']:.3f}" if "share_timing" in g.index else ""
        lines.append(f"| {label} | {'yes' if key[-1] else 'no'} | {int(g['reps'].max())} | " + " | ".join(cells)
                     + f" | {mae} |")
    return "\n".join(lines)


def markdown(out: pd.DataFrame) -> str:
    """One line per preset × labelled: coverage / MAE of each quantity, replicates and cells."""
    qs = list(dict.fromkeys(out["quantity"]))
    head = "| preset | labelled | reps | " + " | ".join(f"`{q}` cov / MAE" for q in qs) + " |"
    lines = [head, "|" + "---|" * (3 + len(qs))]
    for (preset, lab), g in out.groupby(["preset", "labelled"], sort=False):
        g = g.set_index("quantity")
        cells = [f"{g.loc[q, 'coverage']:.2f} / {g.loc[q, 'mae']:.3f}" if q in g.index else "" for q in qs]
        lines.append(f"| `{preset}` | {'yes' if lab else 'no'} | {int(g['reps'].max())} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--reps", type=int, default=3)
    r.add_argument("--draws", type=int, default=400)
    r.add_argument("--chains", type=int, default=2)
    r.add_argument("--seed", type=int, default=100)
    r.add_argument("--presets", nargs="*", default=None)
    r.add_argument("--latency-family", default="normal", choices=("normal", "t", "mixture", "auto"),
                   help="the fit's latency family (auto: chosen by LOO per fit)")
    r.add_argument("--item-latency", action="store_true",
                   help="fit item time intensities (ModelSpec structure 'item_latency')")
    r.add_argument("--clock-effects", action="store_true", help="fit clock effects (structure 'clock_effects')")
    r.add_argument("--latency-by-correctness", action="store_true",
                   help="fit a latency shift of wrong decisions (structure 'latency_by_correctness'; labelled fits only)")
    r.add_argument("--episode-effects", action=argparse.BooleanOptionalAction, default=True,
                   help="let an episode's decisions share a slowness (ModelSpec(episode_effects=True), the default); "
                        "--no-episode-effects: decisions independent (the default model before)")
    r.add_argument("--ignore-ended", action="store_true",
                   help="read every log as the whole episode (ModelSpec(ended='ignore'), the earlier model)")
    r.add_argument("--only-rep", type=int, default=None, help="run this replicate only (a second worker)")
    r.add_argument("--scores", default="studies/results/misspec_scores.csv")
    r.add_argument("--checks", default=None,
                   help="also append each fit's posterior predictive check families (flagged or not) to this CSV; "
                        "`detection` summarises them")
    r.set_defaults(func=run)
    s = sub.add_parser("summary")
    s.add_argument("--scores", nargs="+", default=["studies/results/misspec_scores.csv"],
                   help="one or more score files of `run` (pooled; a replicate scored twice counts once)")
    s.add_argument("--out", default="studies/results/misspec_baseline.csv")
    s.set_defaults(func=summary)
    d = sub.add_parser("detection", help="detection rates of the check families from `run --checks` files")
    d.add_argument("--checks", nargs="+", required=True)
    d.add_argument("--out", default=None, help="the table as CSV (and the printed summary beside it as .txt)")
    d.set_defaults(func=detection)
    args = ap.parse_args(argv)
    with summary_to(Path(args.out).with_suffix(".txt") if args.cmd in ("summary", "detection") and args.out else None):
        args.func(args)


if __name__ == "__main__":
    main()
