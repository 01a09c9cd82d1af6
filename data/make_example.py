"""Regenerate ``data/example/``: the bundled example benchmark with known truth.

    .venv/bin/python data/make_example.py            # rewrites data/example/ byte for byte

The rtlog episodes and ``truth.csv`` come from the ``mixed`` preset of :mod:`rtanalysis.simulate`
(six models with different speed/skill trade-offs, the four realtime-pressure families, paused +
wall clocks and the step clock on ``high_frequency``, 12 tasks × 5 seeds per cell). A small
response-slot table (``response_slots/slots.csv``, docs: ``/work/shared/spec/adapters.md`` §3) is
generated beside it in its own folder, so loading ``data/example`` as rtlog does not see it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special

from rtanalysis.simulate import simulate

SEED = 20261202
PRESET = "mixed"
HERE = Path(__file__).resolve().parent
OUT = HERE / "example"

#: response-slot benchmark: scenario -> (window start, window end) after the trigger, slot difficulty
SLOT_SCENARIOS = {
    "live_commentary": (0.0, 3.0, -1.0),
    "proactive_alert": (1.0, 6.0, -0.5),
    "qa_followup": (0.0, 10.0, 0.3),
}
#: model -> (skill logit, median latency s, silence probability, invalid-output probability)
SLOT_MODELS = {
    "strong-slow": (1.4, 3.2, 0.02, 0.02),
    "balanced": (0.6, 1.8, 0.03, 0.05),
    "weak-fast": (-0.3, 0.7, 0.02, 0.10),
    "silent-prone": (0.9, 2.0, 0.15, 0.03),
}
STREAMS_PER_SCENARIO = 4
SLOTS_PER_STREAM = 6


def response_slots(seed: int = SEED) -> pd.DataFrame:
    """One row per (model, slot) in the response-slot table format; triggers shared by all models."""
    env, out = np.random.default_rng(seed).spawn(2)
    slots = []
    for scenario, (w0, w1, difficulty) in SLOT_SCENARIOS.items():
        for s in range(STREAMS_PER_SCENARIO):
            triggers = np.cumsum(env.uniform(15.0, 40.0, SLOTS_PER_STREAM)).round(2)
            item = env.normal(0.0, 0.5, SLOTS_PER_STREAM)
            for j, t in enumerate(triggers):
                slots.append((f"{scenario}-{s:02d}", f"slot{j:02d}", scenario, t, w0, w1, difficulty + item[j]))
    rows = []
    for model, (skill, median, silence, invalid_p) in SLOT_MODELS.items():
        for stream, slot, scenario, t, w0, w1, diff in slots:
            silent = out.random() < silence
            latency = float(np.exp(np.log(median) + 0.5 * out.standard_normal()))
            invalid = (not silent) and out.random() < invalid_p
            correct = (not silent) and (not invalid) and out.random() < special.expit(skill - diff)
            rows.append({
                "model": model, "stream_id": stream, "slot_id": slot, "scenario": scenario,
                "trigger_s": t, "window_start_s": round(t + w0, 2), "window_end_s": round(t + w1, 2),
                "response_s": None if silent else round(t + latency, 2),
                "correct": bool(correct), "invalid": bool(invalid),
                "score": None if silent else round(float(out.beta(8, 2) if correct else out.beta(2, 5)), 3),
            })
    return pd.DataFrame(rows)


def _markdown(frame: pd.DataFrame, digits: int = 3) -> str:
    cols = list(frame.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in frame.itertuples(index=False):
        cells = [f"{v:.{digits}f}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _names(frame: pd.DataFrame, mask) -> str:
    return ", ".join(f"`{m}`" for m in frame.loc[mask, "model"]) or "none"


def readme(sim, slots: pd.DataFrame, sizes: dict[str, int]) -> str:
    d = sim.design
    ep = sim.episodes
    models = "\n".join(f"| {m.name} | {m.skill:+.2f} | {m.log_latency:+.2f} | {m.silence:.2f} |" for m in d.models)
    families = "\n".join(
        f"| {t.name} | {t.difficulty:+.1f} | {t.latency_median:g} {t.time_unit} | "
        f"{', '.join(f'[{w[0]:g}, {w[1]:g}]' + (f' ({w[2]:.0%})' if len(t.windows) > 1 else '') for w in t.windows)} | "
        f"{t.steps_range[0]}–{t.steps_range[1]} | {t.fatality:g} | {t.tick if t.tick else '–'} | {t.give_up or '–'} |"
        for t in d.task_types)
    inter = ", ".join(f"{m} × {k}: {v:+.1f}" for (m, k), v in d.interactions.items())
    cols = ["model", "task_type", "clock", "n_episodes", "p_capable", "p_timely", "p_success", "share_timing",
            "p_on_time", "p_early", "p_late", "p_silent", "median_latency"]
    by_clock = ep.groupby("clock", sort=False)["success"].agg(["size", "mean"])
    by_model = sim.truth[sim.truth["clock"] == "wall"].groupby("model", sort=False).apply(
        lambda g: pd.Series({"p_capable": np.average(g["p_capable"], weights=g["n_episodes"]),
                             "p_success": np.average(g["p_success"], weights=g["n_episodes"]),
                             "share_timing": np.average(g["share_timing"], weights=g["n_episodes"] * (1 - g["p_success"]))}),
        include_groups=False).reset_index()
    step_types = ", ".join(f"`{t.name}` tick {t.tick:g} {t.time_unit}" for t in d.task_types if t.tick)
    size_lines = "\n".join(f"| `{name}` | {n / 1024:.0f} KiB |" for name, n in sizes.items())
    return f"""# Example benchmark (simulated, known truth)

Generated by `data/make_example.py` (preset `{PRESET}` of `rtanalysis.simulate`, seed {SEED}); rerun it to
reproduce these files byte for byte. Every number below is the simulator's exact truth, so an
analysis of this folder can be checked against it.

## Design
- {len(d.models)} models × {len(d.task_types)} task types (the four realtime-pressure families) × clocks
  `paused`, `wall` (all families) and `step` ({step_types}; default action on a late decision).
- {d.n_tasks} tasks × {d.seeds_per_task} seeds = {d.n_tasks * d.seeds_per_task} paired episodes per model × task type × clock cell:
  the same (task, seed) gives the same items, windows and number of decisions to every model and clock.
- {len(ep)} episodes, {len(sim.arrays['decisions']['step'])} decisions, run_id `{sim.run_id}`; labels
  (`correct_at_obs`, `valid_at_exec`) are logged.
- Content correctness: logit = skill − difficulty − model×type − item − decision, with item SD {d.sd_item},
  decision SD {d.sd_step}, model × type SD {d.sd_model_task} (realised draws) plus fixed {inter}.
- Latency: lognormal, log median = log(family median) + model log-latency, log SD per family.
- An episode succeeds when every decision is content-correct and no missed window is fatal
  (each miss is fatal with probability `fatality`); under `paused` nothing can miss.

| model | skill (logit) | log latency | silence |
|---|---|---|---|
{models}

| task type | difficulty | median latency | windows [open, close] (share) | decisions | fatality | step tick | give-up |
|---|---|---|---|---|---|---|---|
{families}

Observed success rate by clock: {", ".join(f"{c} {r['mean']:.2f} (n={int(r['size'])})" for c, r in by_clock.iterrows())}.

## Files
| file | size |
|---|---|
{size_lines}

- `episodes.jsonl.gz`: rtlog v1, one episode per line.
- `truth.csv`: one row per model × task type × timed clock (definitions in `docs/simulate.md`).
- `design.json`: the full design and seed.
- `response_slots/slots.csv`: a response-slot table ({len(slots)} rows: {len(SLOT_MODELS)} models × {len(SLOT_SCENARIOS)} scenarios ×
  {STREAMS_PER_SCENARIO} streams × {SLOTS_PER_STREAM} slots) in the format of the adapters spec §3, not rtlog; its
  own folder keeps it out of rtlog loading of `data/example`.

## What the truth says (wall clock, averaged over task types)
{_markdown(by_model)}

Mostly timing failures (share_timing > 0.5): {_names(by_model, by_model["share_timing"] > 0.5)}; mostly
capability failures (share_timing < 0.25): {_names(by_model, by_model["share_timing"] < 0.25)}. Fast models answer
too early on `adversarial_interruption`, whose windows open late.

## Truth table
{_markdown(sim.truth[cols])}
"""


def main(out: Path = OUT) -> int:
    sim = simulate(PRESET, seed=SEED)
    paths = sim.write(out)
    slots = response_slots()
    (out / "response_slots").mkdir(parents=True, exist_ok=True)
    slots.to_csv(out / "response_slots" / "slots.csv", index=False, lineterminator="\n")
    files = [paths["episodes"], paths["truth"], paths["design"], out / "response_slots" / "slots.csv"]
    sizes = {str(p.relative_to(out)): p.stat().st_size for p in files}
    (out / "README.md").write_text(readme(sim, slots, sizes), encoding="utf-8")
    print(f"{sim.summary()}; wrote {out} ({sum(sizes.values()) / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
