"""How often PSIS-LOO (``fit(structure="auto")``, :mod:`rtanalysis.model.choice`) picks the
structure that generated the data: every misspecification preset (3 models × 2 task types, 60
episodes per cell), labelled and unlabelled, several replicates. ``difficulty_latency`` (hard items
are slow) is generated with item time intensities, ``clock_adaptive`` (the agent thinks less under the
wall clock) with a timed capability effect, ``speed_accuracy`` (thinking longer helps) labelled with a
latency shift of wrong decisions (unlabelled, no structure can see it: base); the others break other
assumptions and have none, so the base structure is the right answer there.

Run:   .venv/bin/python studies/structure_choice.py run --reps 3 --out studies/results/structure_choice.csv
       .venv/bin/python studies/structure_choice.py summary --out studies/results/structure_choice.csv
``run`` appends one row per structure per fit set (resumable), with the chosen fit's 90 % interval
coverage and MAE of p_capable, p_timely, p_success and share_timing against the preset's truth;
``summary`` prints the choice counts and those scores.
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

#: the structure each preset was generated with (the others: base)
GENERATED = {"difficulty_latency": "item_latency", "clock_adaptive": "clock_effects"}
#: ... where the decisions' labels are logged (latency by correctness needs them)
GENERATED_LABELLED = {**GENERATED, "speed_accuracy": "latency_by_correctness"}


def generated(preset: str, labelled: bool) -> str:
    return (GENERATED_LABELLED if labelled else GENERATED).get(preset, "base")


def run(args) -> None:
    from rtanalysis.model.studies.calibrate import score_fit
    from rtanalysis.model.fit import compare_structures
    from rtanalysis.simulate import simulate
    from rtanalysis.simulate.presets import MISSPEC_PRESETS

    presets = args.presets or list(MISSPEC_PRESETS)
    done = done_runs(args.out, ["preset", "labelled", "rep"])
    for r in range(args.reps):
        for preset in presets:
            for labelled in (True,) if args.labelled_only else (True, False):
                if (preset, labelled, r) in done:
                    continue
                t = time.time()
                sim = simulate(preset, seed=args.seed + r, labelled=labelled)
                table, fits = compare_structures(sim.load(), "normal", progress=False, draws=args.draws,
                                                 chains=args.chains, seed=args.seed + r, tune=args.tune, ci_prob=0.9)
                # the chosen fit's 90 % interval coverage and MAE of the decomposition (what structure="auto" reports)
                chosen_fit = fits[table.loc[table["chosen"], "structure"].iloc[0]]
                scores = score_fit(chosen_fit.decomposition(), sim.truth)
                for q, g in scores.groupby("quantity"):
                    table[f"{q}_coverage"] = g["covered"].mean()
                    table[f"{q}_mae"] = g["abs_error"].mean()
                table.insert(0, "preset", preset)
                table.insert(1, "labelled", labelled)
                table.insert(2, "rep", r)
                table.insert(3, "generated", generated(preset, labelled))
                table["seconds"] = round(time.time() - t, 1)
                table.to_csv(args.out, mode="a", header=not os.path.exists(args.out), index=False)
                chosen = table.loc[table["chosen"], "structure"].iloc[0]
                print(f"{time.strftime('%H:%M:%S')} {preset} labelled={labelled} rep={r} {table['seconds'].iloc[0]}s "
                      f"chosen {chosen} (generated {generated(preset, labelled)})", file=sys.stderr, flush=True)


def summary(args) -> pd.DataFrame:
    s = pd.read_csv(args.out)
    chosen = s[s["chosen"]]
    # the margin of the generating structure: elpd below the best (0 when it is the best)
    gen = s[s["structure"] == s["generated"]][["preset", "labelled", "rep", "elpd_diff", "se_diff"]]
    out = (chosen.assign(right=chosen["structure"] == chosen["generated"])
           .groupby(["preset", "generated", "labelled"], sort=False)
           .agg(fits=("rep", "size"), right=("right", "sum"), chosen=("structure", lambda x: ", ".join(sorted(set(x)))),
                max_pareto_k=("max_pareto_k", "max"), all_ok=("diagnostics_ok", "all"), seconds=("seconds", "mean"))
           .reset_index())
    runner_up = (s[~s["chosen"]].groupby(["preset", "labelled", "rep"])[["elpd_diff", "se_diff"]]
                 .apply(lambda g: g.sort_values("elpd_diff").iloc[0]).reset_index())
    print(out.to_string(index=False))
    print("\nthe generating structure's elpd below the best (0: it is the best):")
    print(gen.round(1).to_string(index=False))
    print("\nthe closest structure not chosen, per fit set (elpd_diff, se_diff):")
    print(runner_up.round(1).to_string(index=False))
    if "elpd_silent" in s:  # what the silent decisions add: each structure's elpd on them above the base's
        parts = s.pivot_table(index=["preset", "labelled", "rep"], columns="structure",
                              values=["elpd_outcomes", "elpd_latency", "elpd_silent"])
        lift = {part: parts[part].sub(parts[part]["base"], axis=0).drop(columns="base")
                for part in ("elpd_outcomes", "elpd_latency", "elpd_silent")}
        print("\neach structure's elpd above the base's, by part, mean over fit sets (silent decisions: "
              f"{int(s['n_silent'].mean())} per fit set on average):")
        print(pd.concat(lift, axis=1).groupby(level="preset", sort=False).mean().round(1).to_string())
    cols = [c for c in chosen.columns if c.endswith("_coverage") or c.endswith("_mae")]
    if cols:
        print("\nthe chosen fit's 90 % interval coverage and MAE, mean over fit sets:")
        print(chosen.groupby(["preset", "labelled"], sort=False)[cols].mean().round(3).to_string())
    right, total = int(out["right"].sum()), int(out["fits"].sum())
    best = s.loc[s.groupby(["preset", "labelled", "rep"])["elpd_loo"].idxmax()]
    n_best = int((best["structure"] == best["generated"]).sum())
    print(f"\ngenerating structure chosen in {right} of {total} fit sets; best elpd (converged or not) in {n_best}")
    wrong = chosen[chosen["structure"] != chosen["generated"]]
    if len(wrong):
        print("chosen otherwise:\n" + wrong[["preset", "labelled", "rep", "structure", "generated"]].to_string(index=False))
        failed = s[~s["diagnostics_ok"]][["preset", "labelled", "rep", "structure"]]
        print("fits that failed the gate (after the automatic retry):\n" + failed.to_string(index=False))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(required=True)
    r = sub.add_parser("run")
    r.add_argument("--reps", type=int, default=3)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--draws", type=int, default=500)
    r.add_argument("--chains", type=int, default=4)
    r.add_argument("--tune", default="auto", type=lambda x: x if x == "auto" else int(x))
    r.add_argument("--presets", nargs="*")
    r.add_argument("--labelled-only", action="store_true", help="labelled logs only")
    r.add_argument("--out", required=True)
    r.set_defaults(func=run)
    s = sub.add_parser("summary")
    s.add_argument("--out", required=True)
    s.set_defaults(func=summary)
    args = p.parse_args()
    with summary_to(Path(args.out).with_suffix(".txt") if args.func is summary else None):
        args.func(args)


if __name__ == "__main__":
    main()
