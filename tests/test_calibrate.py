"""Calibration scoring (decomposition and counterfactuals) and predictive-check helpers, without fits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rtanalysis.model.calibrate import score_counterfactuals
from rtanalysis.model.checks import _quantile_of_first, _replicate_acted, predictive_p_value


def test_score_counterfactuals_labels_and_coverage():
    keys = dict(model=["a", "a", "a", "a"], task_type="t", clock="wall")
    cf = pd.DataFrame({**keys, "scenario": ["scale", "scale", "scale", "as:b"], "lambda": [1.0, 0.5, 2.0, 1.0],
                       "p_success": [0.5, 0.7, 0.2, 0.6], "p_success_lo": [0.4, 0.6, 0.15, 0.5],
                       "p_success_hi": [0.6, 0.8, 0.25, 0.65]})
    truth = cf[["model", "task_type", "clock", "scenario", "lambda"]].assign(p_success=[0.5, 0.75, 0.3, 0.61])
    s = score_counterfactuals(cf, truth).set_index("quantity")
    assert list(s.index) == ["p_success@x0.5", "p_success@x2", "p_success@as"]  # λ = 1 is not a counterfactual
    assert s.loc["p_success@x0.5", "covered"] and not s.loc["p_success@x2", "covered"]
    assert s.loc["p_success@x2", "abs_error"] == pytest.approx(0.1)
    assert s.loc["p_success@as", "scenario"] == "as:b"


def test_predictive_p_value_is_a_mid_p():
    rep = np.arange(100.0)
    assert predictive_p_value(rep, 49.5) == pytest.approx(0.5)
    assert predictive_p_value(rep, -1) == 1.0 and predictive_p_value(rep, 100) == 0.0
    assert predictive_p_value(np.zeros(10), 0.0) == 0.5


def test_latency_replicates_follow_family_censoring_and_silence():
    rng = np.random.default_rng(1)
    D, n = 200, 400
    mu, sd = np.zeros(D), np.ones(D)
    s, keep = _replicate_acted(mu, sd, None, None, n, 0, rng)
    assert (keep == n).all()
    med = _quantile_of_first(s, keep, 0.5)
    assert abs(med.mean()) < 0.02 and abs(_quantile_of_first(s, keep, 0.9).mean() - 1.2816) < 0.03
    # 40 censored (silent) decisions: the 40 largest are not seen
    s, keep = _replicate_acted(mu, sd, None, np.zeros(D), n, 40, rng)
    assert (keep == n - 40).all() and _quantile_of_first(s, keep, 0.99).mean() < 1.6
    # a silence mode with π = 0.1 and 40 silences: the silences are explained by the mode, no tail is cut
    s, keep = _replicate_acted(mu, sd, None, np.full(D, 0.1), n, 40, rng)
    assert abs(keep.mean() - (n - 40)) < 6 and _quantile_of_first(s, keep, 0.99).mean() > 2.0
    # Student-t(2.5) replicates have a heavier p99 than the normal's 2.33
    s, keep = _replicate_acted(mu, sd, np.full(D, 2.5), None, n, 0, rng)
    assert _quantile_of_first(s, keep, 0.99).mean() > 3.5
