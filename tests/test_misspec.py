"""Misspecified presets: Monte Carlo truth against exact and brute-force checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rtanalysis.simulate import simulate
from rtanalysis.simulate.engine import TRUTH_COLUMNS, simulate_arrays, truth_table
from rtanalysis.simulate.core import simulate_misspec
from rtanalysis.simulate.misspec import COUNTERFACTUAL_TRUTH_COLUMNS, Misspec, mc_truth
from rtanalysis.simulate.presets import MISSPEC_PRESETS

KEYS = ["model", "task_type", "clock"]


def _small(name="timeouts", **kw):
    design, spec = MISSPEC_PRESETS[name]
    return design.with_(tasks=4, seeds=3, **kw), spec


@pytest.mark.parametrize("name", sorted(MISSPEC_PRESETS))
def test_every_misspec_preset_has_complete_truth_and_loads(name):
    sim = simulate(name, seed=3, tasks=3, seeds=2)
    assert list(sim.truth.columns) == TRUTH_COLUMNS
    assert sim.truth[["p_capable", "p_timely", "p_success", "share_timing"]].notna().all().all()
    assert np.allclose(sim.truth["p_success"], sim.truth["p_capable"] * sim.truth["p_timely"])
    cf = sim.counterfactual_truth
    assert list(cf.columns) == COUNTERFACTUAL_TRUTH_COLUMNS
    n_m = len(sim.design.models)
    per_row = cf.groupby(KEYS).size()
    assert (per_row == 3 + n_m - 1).all() and len(per_row) == len(sim.truth)
    assert set(cf.loc[cf["scenario"] == "scale", "lambda"]) == {0.5, 1.0, 2.0}
    loaded = sim.load()
    assert loaded.n_quarantined == 0 and loaded.n_accepted == len(sim.records)
    again = simulate(name, seed=3, tasks=3, seeds=2)
    assert again.records == sim.records and again.truth.equals(sim.truth)


def test_monte_carlo_truth_matches_the_exact_truth_when_well_specified():
    design, _ = _small("timeouts")  # give-up times, no outcome mechanism: the engine's truth is exact
    arrays = simulate_arrays(design, 4)
    exact = truth_table(design, arrays)
    reps = 3000
    mc, cf, _ = mc_truth(design, Misspec(), arrays, reps=reps, seed=4)
    m = exact.merge(mc, on=KEYS, suffixes=("", "_mc"))
    for q in ("p_capable", "p_success", "p_timely_marginal", "p_late", "p_silent", "p_correct"):
        se = np.sqrt(m[q] * (1 - m[q]) / (reps * m["n_episodes"])) + 1e-4
        assert (np.abs(m[q] - m[f"{q}_mc"]) < 5 * se).all(), q
    # λ-scaled and borrowed-latency truth = the exact truth of the design with that latency
    for lam in (0.5, 2.0):
        scaled = design.with_(task_types=tuple(t.__class__(**{**t.__dict__, "latency_median": t.latency_median * lam})
                                               for t in design.task_types))
        ex = truth_table(scaled, simulate_arrays(scaled, 4))
        got = cf[(cf["scenario"] == "scale") & (cf["lambda"] == lam)].merge(ex, on=KEYS, suffixes=("", "_ex"))
        se = np.sqrt(got["p_success_ex"] * (1 - got["p_success_ex"]) / (reps * got["n_episodes"])) + 1e-4
        assert len(got) == len(ex) and (np.abs(got["p_success"] - got["p_success_ex"]) < 5 * se).all(), lam
    other = design.models[1]
    swapped = design.with_(models=tuple(m.__class__(**{**m.__dict__, "log_latency": other.log_latency,
                                                       "silence": other.silence}) for m in design.models))
    ex = truth_table(swapped, simulate_arrays(swapped, 4))
    got = cf[cf["scenario"] == f"as:{other.name}"].merge(ex, on=KEYS, suffixes=("", "_ex"))
    se = np.sqrt(got["p_success_ex"] * (1 - got["p_success_ex"]) / (reps * got["n_episodes"])) + 1e-4
    assert len(got) == 2 * len(design.task_types) and (np.abs(got["p_success"] - got["p_success_ex"]) < 5 * se).all()


@pytest.mark.parametrize("name", ["speed_accuracy", "bimodal", "clock_adaptive", "tick_latency"])
def test_observed_rates_agree_with_the_monte_carlo_truth(name):
    """Brute force: the logged outcomes of many episodes per cell match the truth's rates."""
    design, spec = MISSPEC_PRESETS[name]
    sim = simulate_misspec(design.with_(tasks=30, seeds=10), spec, seed=5, reps=100)
    ep = sim.episodes
    obs = ep.groupby(KEYS, sort=False).agg(success=("success", "mean"), capable=("capable", "mean"), n=("success", "size"))
    m = sim.truth.merge(obs.reset_index(), on=KEYS)
    for q, col in (("p_success", "success"), ("p_capable", "capable")):
        se = np.sqrt(m[q] * (1 - m[q]) / m["n"]) + 0.005
        assert (np.abs(m[q] - m[col]) < 4 * se).all(), (q, m[[q, col]])


def test_each_mechanism_shows_in_the_logs():
    sa = simulate("speed_accuracy", seed=1).decisions
    sa = sa[~sa["silent"]].assign(log_latency=lambda f: np.log(f["latency"]))
    by = sa.groupby(["model", "task_type", "correct"])["log_latency"].mean().unstack()
    assert (by[True] - by[False]).mean() > 0.2  # within a cell, right answers took longer
    ca = simulate("clock_adaptive", seed=1)
    paused = ca.episodes[ca.episodes["clock"] == "paused"]["capable"].mean()
    assert paused > ca.truth["p_capable"].mean() + 0.1  # wall thinks less: less capable
    tl = simulate("tick_latency", seed=1)
    st = tl.load().steps
    step = st[(st["clock"] == "step") & st["latency"].notna()]
    ticks = {"fast": 2.0, "slow": 10.0}
    assert np.allclose(step["latency"], step["task_type"].astype(str).map(ticks))
    assert step["fallback"].fillna(False).astype(bool).any()
    bm = simulate("bimodal", seed=1).decisions
    logl = np.log(bm.loc[(bm["task_type"] == "fast") & ~bm["silent"], "latency"])
    assert logl.skew() > 0.3  # a right-skewed mixture in log-latency


def test_counterfactual_truth_is_monotone_in_lambda():
    sim = simulate("difficulty_latency", seed=2, tasks=4, seeds=3)
    cf = sim.counterfactual_truth[sim.counterfactual_truth["scenario"] == "scale"]
    wide = cf.pivot_table(index=KEYS, columns="lambda", values="p_success")
    assert (wide[0.5] >= wide[1.0] - 0.01).all() and (wide[1.0] >= wide[2.0] - 0.01).all()
    assert pd.Series(wide[0.5] - wide[2.0]).mean() > 0.1


# ----------------------------------------------------------------------------- the real-benchmark regime
REAL_REGIME = ["truncated", "episode_effects", "wall_only", "llm_latency", "nonfatal_skip", "realistic", "agent_task"]


@pytest.mark.parametrize("name", ["truncated", "episode_effects", "llm_latency", "nonfatal_skip", "realistic",
                                  "agent_task"])
def test_observed_rates_of_the_real_regime_agree_with_the_monte_carlo_truth(name):
    """Brute force as above, on the regime's presets: truth is over each episode's natural length,
    whatever the log keeps of it."""
    design, spec = MISSPEC_PRESETS[name]
    sim = simulate_misspec(design.with_(tasks=40, seeds=8), spec, seed=6, reps=100)
    obs = sim.episodes.groupby(KEYS, sort=False).agg(success=("success", "mean"), capable=("capable", "mean"),
                                                     n=("success", "size"))
    m = sim.truth.merge(obs.reset_index(), on=KEYS)
    assert len(m) == len(sim.truth)
    for q, col in (("p_success", "success"), ("p_capable", "capable")):
        se = np.sqrt(m[q] * (1 - m[q]) / m["n"]) + 0.005
        assert (np.abs(m[q] - m[col]) < 4 * se).all(), (q, m[[q, col]])


def test_truncation_changes_the_logs_not_the_truth():
    """With every wrong action fatal, the truth of a truncated design is the engine's exact truth,
    while each failed episode's log ends at its first fatal decision."""
    design, _ = _small("timeouts")
    arrays = simulate_arrays(design, 4)
    exact = truth_table(design, arrays)
    reps = 3000
    mc, _, _ = mc_truth(design, Misspec(truncate=True), arrays, reps=reps, seed=4)
    m = exact.merge(mc, on=KEYS, suffixes=("", "_mc"))
    for q in ("p_capable", "p_success", "p_late", "p_correct"):
        se = np.sqrt(m[q] * (1 - m[q]) / (reps * m["n_episodes"])) + 1e-4
        assert (np.abs(m[q] - m[f"{q}_mc"]) < 5 * se).all(), q

    sim = simulate("truncated", seed=2)
    ep, dec = sim.episodes, sim.decisions
    fatal_wrong = ~dec["correct"] & ~dec["fatal"]  # a wrong last decision that ended it (misses are "fatal")
    last = dec.groupby("episode").tail(1).set_index("episode")
    failed = ~ep["success"].to_numpy()
    short = (ep["n_steps"] < ep["n_steps_natural"]).to_numpy()
    assert short.any() and failed[short].all()  # only failures are cut short
    assert (ep.loc[~failed, "n_steps"] == ep.loc[~failed, "n_steps_natural"]).all()
    # a failed episode ends at a fatal miss or a wrong action; nothing fatal comes before its end
    ended_by = last["fatal"] | fatal_wrong.groupby(dec["episode"]).last()
    assert ended_by[failed & short].all()
    before = dec[dec.groupby("episode").cumcount(ascending=False) > 0]
    assert not before["fatal"].any()
    # the logs are valid rtlog and keep the truncated lengths
    loaded = sim.load()
    assert loaded.n_quarantined == 0 and len(loaded.steps) == len(dec) < ep["n_steps_natural"].sum()


def test_a_wrong_action_fatal_only_sometimes_is_survived():
    design, spec = MISSPEC_PRESETS["nonfatal_skip"]
    sim = simulate_misspec(design.with_(tasks=6, seeds=4), spec, seed=1, reps=50)
    ep, dec = sim.episodes, sim.decisions
    wrong_in_success = dec[dec["episode"].isin(np.flatnonzero(ep["success"]))]["correct"]
    assert (~wrong_in_success).mean() > 0.05  # successful episodes carry survived wrong moves
    # and survived misses: a missed turn is a no-op
    missed = dec["silent"] | dec["late"] | dec["early"]
    assert (missed & ~dec["fatal"]).sum() > 10 * (missed & dec["fatal"]).sum() > 0


def test_episode_ability_truth_matches_quadrature():
    """One decision per episode: P(capable) = E_a[expit(logit + a)], a ~ Normal(0, sd), by
    Gauss-Hermite quadrature on each decision's known logit."""
    from scipy import special

    design, _ = MISSPEC_PRESETS["agent_task"]
    design = design.with_(tasks=6, seeds=2)
    arrays = simulate_arrays(design, 3)
    sd, reps = 1.2, 4000
    mc, _, _ = mc_truth(design, Misspec(episode_ability=sd), arrays, reps=reps, seed=3)
    x, w = np.polynomial.hermite_e.hermegauss(40)
    logit = special.logit(arrays["decisions"]["p_correct"])  # one decision per episode, in episode order
    p_ep = special.expit(logit[:, None] + sd * x[None, :]) @ (w / w.sum())
    ep = arrays["episodes"]
    for _, row in mc.iterrows():
        mi = [m.name for m in design.models].index(row["model"])
        ki = [t.name for t in design.task_types].index(row["task_type"])
        e = (ep["model"] == mi) & (ep["k"] == ki)
        exact = p_ep[e].mean()
        se = np.sqrt(exact * (1 - exact) / (reps * e.sum()))
        assert abs(row["p_capable"] - exact) < 5 * se + 1e-4, (row["model"], row["task_type"])
    # without the effect the same cells are more capable where p_correct > 0.5 (Jensen): the effect is there
    plain = truth_table(design, arrays)
    assert (plain.set_index(KEYS)["p_capable"] - mc.set_index(KEYS)["p_capable"]).abs().max() > 0.02


def test_episode_effects_cluster_misses_and_slowness_within_episodes():
    """A negative ability-slowness correlation shows in the logs: an episode's mean log-latency and its
    share of wrong decisions rise together, more for the model with ρ = -0.7 than for ρ = 0."""
    design, spec = MISSPEC_PRESETS["episode_effects"]
    sim = simulate_misspec(design.with_(tasks=30, seeds=6), spec, seed=2, reps=20)
    dec = sim.decisions
    dec = dec[(dec["clock"] == "paused") & ~dec["silent"]].assign(log_lat=lambda f: np.log(f["latency"]),
                                                                   wrong=lambda f: ~f["correct"])
    # per-episode deviations from the cell mean (the cell's own level removed)
    per_ep = dec.groupby(["model", "task_type", "episode"])[["log_lat", "wrong"]].mean()
    dev = per_ep - per_ep.groupby(level=["model", "task_type"]).transform("mean")
    corr = {m: dev.xs(m, level="model").corr().iloc[0, 1] for m in ("strong-slow", "balanced")}
    assert corr["strong-slow"] > 0.2 and corr["strong-slow"] > corr["balanced"] + 0.15, corr


def test_overhead_latency_and_ended_field():
    lat = simulate("llm_latency", seed=1).decisions
    for k, median in (("fast", 0.5), ("slow", 2.6)):
        assert lat.loc[(lat["task_type"] == k) & ~lat["silent"], "latency"].min() >= 0.5 * median - 1e-4
    design, spec = MISSPEC_PRESETS["truncated"]
    from dataclasses import replace

    sim = simulate_misspec(design.with_(tasks=3, seeds=2), replace(spec, log_ended=True), seed=1, reps=20)
    loaded = sim.load()
    assert loaded.n_quarantined == 0
    got = loaded.episodes["ended"].astype(str).to_numpy()
    assert (got == np.where(sim.episodes["success"], "horizon", "failure")).all()
    # the presets that end at the fatal decision say so, as a harness writing the contract would
    assert simulate("truncated", seed=1, tasks=2, seeds=2).records[0]["ended"] in ("horizon", "failure")
    assert "ended" not in simulate("timeouts", seed=1, tasks=2, seeds=2).records[0]


def test_wall_only_and_agent_task_have_no_paused_runs():
    for name in ("wall_only", "agent_task", "realistic"):
        sim = simulate(name, seed=0, tasks=3, seeds=2)
        assert set(sim.episodes["clock"]) == {"wall"}
    at = simulate("agent_task", seed=0)
    assert (at.episodes["n_steps"] == 1).all()
    st = at.load().steps
    # a trial past its limit but inside the grace period acted late (labelled); beyond it, silent
    late = st[st["t_act"].notna() & (st["latency"] > st["window_close"])]
    assert len(late) and late["correct_at_obs"].notna().all()
    assert st["t_act"].isna().any()
