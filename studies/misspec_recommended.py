"""The misspecification study's result per preset under the structure the package recommends for it
(the one its checks point to), with a 95 % interval of each coverage from resampling whole
replicates (``misspec_study.coverage_table``): which coverages are shown to miss the issue's
[0.85, 0.97] band, and which only look low on few replicates. No fitting: it reads the score files.

The score files: ``misspec_study.py run --reps 12 --draws 400 --chains 2`` with ``--presets tick_latency
speed_accuracy`` (``speed_accuracy`` continued to 24 replicates, and labelled with
``--latency-by-correctness``: ``misspec_speed_accuracy_by_correctness_24reps_scores.csv``); ``--presets difficulty_latency --item-latency``; ``--presets clock_adaptive
--clock-effects``; ``--presets heavy_tail bimodal --latency-family auto`` (``--scores
studies/results/misspec_now12_<structure>_scores.csv``), and ``--reps 24 --presets timeouts
partial_fatality`` (``misspec_timeouts_partial_24reps_scores.csv``).

Run:  .venv/bin/python studies/misspec_recommended.py
Writes ``studies/results/misspec_recommended.csv`` and prints a Markdown table (also written to ``misspec_recommended.txt``).
"""

from __future__ import annotations

import pandas as pd
from _common import RESULTS, summary_to
from misspec_study import coverage_table, interval_markdown

#: preset -> (score file in studies/results, the structure fitted), or {labelled: that} where the
#: structure the checks point to depends on the labels
RECOMMENDED = {  # 12 replicates each on the model of 2026-12-05 (24 for timeouts, partial_fatality, speed_accuracy)
    "difficulty_latency": ("misspec_now12_item_latency_scores.csv", "structure item_latency"),
    # labelled: the latency-by-correctness check flags it (6 of 6) and points to the shift of wrong
    # decisions; unlabelled: no structure can fit it (the within-item latency-success check flags it in
    # 20 of 24 fits, ppc_detection_within_items.txt, and the report says so), so the default model
    "speed_accuracy": {True: ("misspec_speed_accuracy_by_correctness_24reps_scores.csv", "structure latency_by_correctness"),
                       False: ("misspec_speed_accuracy_24reps_scores.csv", "default")},
    "heavy_tail": ("misspec_now12_auto_scores.csv", "latency_family='auto'"),
    "bimodal": ("misspec_now12_auto_scores.csv", "latency_family='auto'"),
    "timeouts": ("misspec_timeouts_partial_24reps_scores.csv", "default"),
    "partial_fatality": ("misspec_timeouts_partial_24reps_scores.csv", "default"),
    "clock_adaptive": ("misspec_now12_clock_effects_scores.csv", "structure clock_effects"),
    "tick_latency": ("misspec_now12_default_scores.csv", "default"),
}
BAND = (0.85, 0.97)
#: fewer replicates than this give no verdict: a percentile bootstrap over so few is too narrow
MIN_REPS = 12


def _entries():
    """(preset, the labelled values, score file, structure) per :data:`RECOMMENDED` entry."""
    for preset, entry in RECOMMENDED.items():
        if isinstance(entry, dict):
            for labelled, (name, structure) in entry.items():
                yield preset, [labelled], name, structure
        else:
            yield preset, [True, False], *entry


def table() -> pd.DataFrame:
    parts = []
    for preset, labelled, name, structure in _entries():
        s = pd.read_csv(RESULTS / name)
        s = s[(s["preset"] == preset) & (s["labelled"].isin(labelled))]
        out = coverage_table(s)
        if "auto" in structure:  # the family LOO chose, per fit
            fits = s.drop_duplicates(["labelled", "rep"])["latency_family"].value_counts()
            structure += " → " + ", ".join(f"{f} {n} of {fits.sum()}" for f, n in fits.items())
        out.insert(1, "structure", structure)
        parts.append(out)
    out = pd.concat(parts, ignore_index=True)
    # shown outside the band: the whole replicate-resampled interval lies outside it
    out["verdict"] = "in band"
    out.loc[out["coverage_hi"] < BAND[0], "verdict"] = "below (shown)"
    out.loc[(out["coverage"] < BAND[0]) & (out["coverage_hi"] >= BAND[0]), "verdict"] = "below (not shown)"
    out.loc[out["coverage_lo"] > BAND[1], "verdict"] = "above (shown)"
    out.loc[(out["coverage"] > BAND[1]) & (out["coverage_lo"] <= BAND[1]), "verdict"] = "above (not shown)"
    out.loc[(out["reps"] < MIN_REPS) & (out["verdict"] != "in band"), "verdict"] = "outside (too few replicates)"
    return out


def main() -> None:
    out = table()
    out.round(4).to_csv(RESULTS / "misspec_recommended.csv", index=False)
    print(interval_markdown(out, by=("preset", "structure"), head="preset (structure)"))
    print("\n" + out.groupby("verdict").size().to_string())
    print("\n" + out[out["verdict"] != "in band"][["preset", "labelled", "quantity", "coverage", "coverage_lo",
                                                    "coverage_hi", "reps", "verdict"]].to_string(index=False))


if __name__ == "__main__":
    with summary_to(RESULTS / "misspec_recommended.txt"):
        main()
