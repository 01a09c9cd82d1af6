"""episode_structure: failed episodes logged short (truncated logs) and latencies alike within
episodes, recovered on simulations whose truth is known."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from rtanalysis import metrics, schema
from rtanalysis.simulate import simulate
from rtanalysis.simulate.core import simulate_misspec
from rtanalysis.simulate.misspec import Misspec
from rtanalysis.simulate.presets import MISSPEC_PRESETS


def _loaded(name, seed=1, **kw):
    return simulate(name, seed=seed, **kw).load()


def test_truncated_logs_show_failed_episodes_shorter_and_full_logs_do_not():
    cut = _loaded("truncated")
    s = metrics.episode_structure(cut.episodes, cut.steps)
    assert (s["failed_shorter_lo"] > 0.5).mean() >= 0.8, s[["failed_shorter", "failed_shorter_lo"]]
    full = _loaded("timeouts")  # the same design, every decision logged: failed episodes are not shorter
    s = metrics.episode_structure(full.episodes, full.steps)
    assert (s["failed_shorter_lo"] > 0.5).sum() <= 1
    assert (s["failed_shorter"] < 0.55).all()


def test_failed_shorter_is_the_mann_whitney_probability():
    L = _loaded("truncated", seed=3)
    s = metrics.episode_structure(L.episodes, L.steps, by=["task_type", "clock"])
    ep = L.episodes
    for r in s.itertuples():
        g = ep[(ep["task_type"] == r.task_type) & (ep["clock"] == r.clock)]
        u = stats.mannwhitneyu(g.loc[g["success"], "n_steps"], g.loc[~g["success"], "n_steps"]).statistic
        assert r.failed_shorter == pytest.approx(u / (g["success"].sum() * (~g["success"]).sum()))
        assert r.failed_shorter_lo < r.failed_shorter < r.failed_shorter_hi
        assert r.steps_failure == pytest.approx(g.loc[~g["success"], "n_steps"].mean())


def test_latency_icc_recovers_the_episode_share_of_log_latency_variance():
    """Episode slowness SD 0.5 on a decision SD of 0.5: ICC = 0.25 / (0.25 + 0.25) = 0.5 in every
    cell; without it, 0."""
    design, _ = MISSPEC_PRESETS["wall_only"]
    design = design.with_(tasks=20, seeds=6)
    sim = simulate_misspec(design, Misspec(episode_slowness=0.5), seed=4, reps=10)
    L = sim.load()
    s = metrics.episode_structure(L.episodes, L.steps)
    covered = (s["latency_icc_lo"] <= 0.5) & (0.5 <= s["latency_icc_hi"])
    assert covered.mean() >= 0.8, s[["latency_icc", "latency_icc_lo", "latency_icc_hi"]]
    assert abs(s["latency_icc"].mean() - 0.5) < 0.06
    plain = simulate_misspec(design, Misspec(), seed=4, reps=10).load()
    s0 = metrics.episode_structure(plain.episodes, plain.steps)
    assert abs(s0["latency_icc"].mean()) < 0.05 and (s0["latency_icc_lo"] < 0.1).all()


def test_ended_field_is_counted_and_groups_without_failures_are_nan():
    design, spec = MISSPEC_PRESETS["truncated"]
    sim = simulate_misspec(design.with_(tasks=3, seeds=2), replace(spec, log_ended=True), seed=1, reps=10)
    L = sim.load()
    s = metrics.episode_structure(L.episodes, L.steps)
    assert s["n_ended_failure"].sum() == (~L.episodes["success"]).sum() == s["n_failure"].sum()
    one = L.episodes[L.episodes["success"]]
    s1 = metrics.episode_structure(one, L.steps)
    assert s1["failed_shorter"].isna().all() and (s1["n_failure"] == 0).all()
    empty = metrics.episode_structure(schema.empty(schema.EPISODE_COLUMNS), schema.empty(schema.STEP_COLUMNS))
    assert len(empty) == 0 and "latency_icc" in empty


def test_the_report_names_what_the_logs_shape_shows():
    from rtanalysis.reporting.document import shape_notes

    cut = _loaded("realistic")
    notes = shape_notes(metrics.episode_structure(cut.episodes, cut.steps), 0.95)
    assert len(notes) == 2
    assert "end at the fatal decision" in notes[0] and "Latencies of one episode are alike" in notes[1]
    # the realistic preset says how its episodes ended: the model reads them so, and says it
    assert "survival reading" in notes[0] and "too narrow" in notes[1]
    with_slowness = shape_notes(metrics.episode_structure(cut.episodes, cut.steps), 0.95, slowness=True)
    assert "share a slowness" in with_slowness[1] and "too narrow" not in with_slowness[1]
    full = _loaded("timeouts")
    assert shape_notes(metrics.episode_structure(full.episodes, full.steps), 0.95) == []


def test_real_arena_logs_end_at_the_fatal_turn():
    """LLM Colosseum's season (an eliminated agent's log stops at the turn it died, and says so in
    `ended`): in every model's row failed battles are logged shorter than won ones, and battles'
    latencies are alike within a battle."""
    import rtanalysis

    L = rtanalysis.load(rtanalysis.example_data("llm-colosseum"))
    s = metrics.episode_structure(L.episodes, L.steps)
    assert len(s) == 4
    assert (s["failed_shorter_lo"] > 0.5).all(), s[["model", "failed_shorter", "failed_shorter_lo"]]
    assert (s["steps_failure"] < s["steps_success"]).all()
    ended = L.episodes["ended"].astype(str)
    assert s["n_ended_failure"].sum() == (ended == "failure").sum() > 0
    assert (s["latency_icc_lo"] > 0).all()
