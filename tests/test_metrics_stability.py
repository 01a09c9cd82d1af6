"""First-failure hazard, fallback use and between-episode variance."""

import math

import numpy as np
import pytest

from rtanalysis import schema
from rtanalysis.io import EpisodeSink
from rtanalysis.metrics import failure_hazard, fallback_summary, score_variance, wilson
from tests.metrics_fixtures import load_fixture, row


def _episodes(first_failures, n_steps=4, model="m"):
    """Episodes whose first failed decision (content wrong) is at the given step (None = never)."""
    sink = EpisodeSink()
    for i, first in enumerate(first_failures):
        steps = [{"t_obs": float(t), "latency": 0.1, "window": [0, 1], "correct_at_obs": first is None or t < first}
                 for t in range(n_steps)]
        sink.add({"run_id": "r", "episode_id": f"{model}{i}", "model": model, "task_type": "t", "clock": "wall",
                  "success": first is None, "steps": steps}, "x.jsonl", i + 1)
    return sink.finish()


def test_hazard_known_first_failures():
    res = _episodes([0, 1, 1, 3, None, None])
    h = failure_hazard(res.episodes, res.steps)
    assert list(h["step"]) == [0, 1, 2, 3]
    assert list(h["n_at_risk"]) == [6, 5, 3, 3]
    assert list(h["n_failed"]) == [1, 2, 0, 1]
    np.testing.assert_allclose(h["hazard"], [1 / 6, 2 / 5, 0, 1 / 3])
    np.testing.assert_allclose(h["survival"], [5 / 6, 5 / 6 * 3 / 5, 1 / 2, 1 / 2 * 2 / 3])
    lo, hi = wilson([1, 2, 0, 1], [6, 5, 3, 3])
    np.testing.assert_allclose(h["hazard_lo"], lo)
    np.testing.assert_allclose(h["hazard_hi"], hi)


def test_hazard_fixture_censors_unknown_outcomes():
    res = load_fixture()
    h = failure_hazard(res.episodes, res.steps)
    wall = h[(h["model"] == "mA") & (h["clock"] == "wall")]
    # first failures: a1 none (2 steps), a2 step 1 (late), a3 step 0 (early), a5 step 0 (silent);
    # a4 is unknown at step 1, so it is at risk at step 0 only and censored at step 1
    assert list(wall["step"]) == [0, 1]
    assert list(wall["n_at_risk"]) == [5, 2]
    assert list(wall["n_failed"]) == [2, 1]
    assert list(wall["n_censored"]) == [0, 1]
    np.testing.assert_allclose(wall["hazard"], [0.4, 0.5])
    np.testing.assert_allclose(wall["survival"], [0.6, 0.3])
    assert set(h["model"]) == {"mA"}  # mB and paused have no decisions: no rows


def test_hazard_recovers_constant_truth():
    rng = np.random.default_rng(5)
    true_h, n_ep, n_steps = 0.2, 400, 10
    draws = rng.geometric(true_h, size=n_ep) - 1  # first failure step, 0-based
    res = _episodes([int(d) if d < n_steps else None for d in draws], n_steps=n_steps)
    h = failure_hazard(res.episodes, res.steps)
    pooled = h["n_failed"].sum() / h["n_at_risk"].sum()
    se = math.sqrt(true_h * (1 - true_h) / h["n_at_risk"].sum())
    assert abs(pooled - true_h) < 3 * se
    early = h[h["step"] < 4]  # enough at risk: each step's interval should cover the truth
    assert ((early["hazard_lo"] <= true_h) & (true_h <= early["hazard_hi"])).all()


def test_hazard_empty_input():
    h = failure_hazard(schema.empty(schema.EPISODE_COLUMNS), schema.empty(schema.STEP_COLUMNS))
    assert len(h) == 0 and {"step", "hazard", "n_at_risk"} <= set(h.columns)


def test_fallback_by_hand():
    res = load_fixture()
    fb = fallback_summary(res.episodes, res.steps)
    wall = row(fb, model="mA", clock="wall")
    # run r1 logs `fallback` (a1: false, false; a2: -, true), so by the fallback rule every
    # decision of r1 without the field is false: 1 fallback (a2 s1) of all 10 decisions
    assert (wall["n_episodes"], wall["n_decisions"], wall["n_labelled"], wall["n_fallback"]) == (5, 10, 10, 1)
    assert wall["fallback_rate"] == pytest.approx(1 / 10)
    # every mA wall episode has decisions, all labelled: a2 has 1 fallback -> mean 1/5, share 1/5
    assert wall["n_episodes_labelled"] == 5
    assert wall["fallback_per_episode"] == pytest.approx(0.2)
    assert wall["share_episodes_with_fallback"] == pytest.approx(0.2)
    mb = row(fb, model="mB")
    assert np.isnan(mb["fallback_rate"]) and np.isnan(mb["fallback_per_episode"])  # no labels: not 0


def test_score_and_success_variance_by_hand():
    res = load_fixture()
    var = score_variance(res.episodes)
    wall = row(var, model="mA", clock="wall")
    # scores 10, 8, 2, 6 (a5 has none): mean 6.5, Σ(x − x̄)² = 12.25 + 2.25 + 20.25 + 0.25 = 35
    assert (wall["n_episodes"], wall["n_scored"]) == (5, 4)
    assert wall["score_mean"] == pytest.approx(6.5)
    assert wall["score_var"] == pytest.approx(35 / 3)
    assert wall["score_sd"] == pytest.approx(math.sqrt(35 / 3))
    # success 1, 1, 0, 1, 0: p̂ = 0.6, s² = (3·0.16 + 2·0.36) / 4 = 0.3
    assert wall["success_var"] == pytest.approx(0.3)
    mb = row(var, model="mB")
    assert mb["n_scored"] == 0 and np.isnan(mb["score_mean"]) and np.isnan(mb["score_var"])
    one = score_variance(res.episodes.iloc[:1])
    assert np.isnan(one["score_var"].iloc[0]) and one["score_mean"].iloc[0] == 10
