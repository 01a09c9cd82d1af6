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
