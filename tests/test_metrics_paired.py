"""Paired differences over shared (task, seed) units against hand arithmetic and scipy.stats."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rtanalysis.metrics import paired_difference
from tests.metrics_fixtures import episode_frame, load_fixture, row


@pytest.fixture(scope="module")
def episodes():
    return load_fixture().episodes


def test_models_paired_by_hand_and_scipy(episodes):
    table = paired_difference(episodes, a="mA", b="mB", over="model", quantity="success", by=("task_type", "clock"))
    r = row(table, task_type="tt", clock="wall")
    # units (t1,1) (t1,2) (t2,1) (t2,2) (t3,1): A = 1,1,0,1,0; B = 0,1,0,0,0; d = 1,0,0,1,0
    a = np.array([1, 1, 0, 1, 0.0])
    b = np.array([0, 1, 0, 0, 0.0])
    assert r["n_pairs"] == 5 and (r["mean_a"], r["mean_b"]) == (0.6, 0.2)
    assert r["difference"] == pytest.approx(0.4)
    # Σ(d − 0.4)² = 2·0.36 + 3·0.16 = 1.2 -> sd = sqrt(1.2 / 4)
    assert r["sd_difference"] == pytest.approx(math.sqrt(0.3))
    assert r["se"] == pytest.approx(math.sqrt(0.3 / 5))
    test = stats.ttest_rel(a, b)
    ci = test.confidence_interval(0.95)
    assert (r["difference_lo"], r["difference_hi"]) == pytest.approx((ci.low, ci.high))
    assert r["p_value"] == pytest.approx(test.pvalue)
    assert r["corr"] == pytest.approx(stats.pearsonr(a, b).statistic)
    # clustered on task: residual sums t1 0.6 − 0.4 = 0.2, t2 −0.4 + 0.6 = 0.2, t3 −0.4
    assert (r["cluster_by"], r["n_clusters"]) == ("task", 3)
    assert r["se_clustered"] == pytest.approx(math.sqrt(1.5 * (0.04 + 0.04 + 0.16)) / 5)
    assert (r["n_unpaired_a"], r["n_unpaired_b"]) == (0, 0)


def test_pooled_rows_and_arm_without_partner(episodes):
    table = paired_difference(episodes, a="mA", b="mB")
    assert list(table.columns[:2]) == ["task_type", "clock"]
    pooled = row(table, task_type="(all)", clock="wall")
    assert pooled["n_pairs"] == 5 and pooled["difference"] == pytest.approx(0.4)
    paused = row(table, task_type="tt", clock="paused")  # mB never ran paused
    assert paused["n_pairs"] == 0 and paused["n_unpaired_a"] == 3
    assert np.isnan(paused["difference"]) and np.isnan(paused["se"])


def test_clocks_compared_within_each_model(episodes):
    table = paired_difference(episodes, a="paused", b="wall", over="clock")
    assert list(table.columns[:2]) == ["model", "task_type"]
    r = row(table, model="mA", task_type="tt")
    # units (t1,1) (t1,2) (t2,1): paused 1,1,1; wall 1,1,0
    assert r["n_pairs"] == 3 and r["difference"] == pytest.approx(1 / 3)
    assert r["se"] == pytest.approx(stats.sem([0, 0, 1]))
    assert np.isnan(r["corr"])  # paused arm is constant: correlation undefined
    assert r["n_unpaired_b"] == 2
    assert row(table, model="mB", task_type="tt")["n_pairs"] == 0


def test_replicates_are_averaged_and_score_is_supported():
    frame = pd.DataFrame({
        "run_id": "r", "episode_id": [f"e{i}" for i in range(7)],
        "model": ["x", "x", "x", "y", "y", "y", "y"], "task": ["t1", "t1", "t2", "t1", "t2", "t3", None],
        "task_type": "k", "clock": "wall", "time_unit": "s", "seed": pd.array([1] * 7, dtype="Int64"),
        "success": [True, False, True, False, False, True, True],
        "score": [1.0, 3.0, 5.0, 0.0, 1.0, 2.0, 4.0],
    })
    ep = episode_frame(frame)
    table = paired_difference(ep, a="x", b="y", quantity="score", by=["task_type"], pool=())
    r = table.iloc[0]
    # x on (t1,1) averages 1 and 3 -> 2; pairs: t1 2 − 0 = 2, t2 5 − 1 = 4
    assert len(table) == 1 and r["n_pairs"] == 2 and r["difference"] == pytest.approx(3.0)
    assert r["sd_difference"] == pytest.approx(math.sqrt(2.0))
    # y has (t3,1) and (missing task, 1) with no x partner
    assert (r["n_units_a"], r["n_units_b"], r["n_unpaired_b"]) == (2, 4, 2)


def test_paired_recovers_known_difference_and_beats_unpaired():
    rng = np.random.default_rng(3)
    n_units, true_diff = 300, 0.1
    base = rng.uniform(0.2, 0.7, n_units)  # unit difficulty shared by both models
    u = rng.random(n_units)
    a, b = u < base + true_diff, u < base  # common random numbers -> strongly correlated arms
    frame = pd.DataFrame({
        "run_id": "r", "episode_id": [f"e{i}" for i in range(2 * n_units)],
        "model": ["a"] * n_units + ["b"] * n_units, "task": [f"t{i}" for i in range(n_units)] * 2,
        "task_type": "k", "clock": "wall", "time_unit": "s", "seed": pd.array([0] * 2 * n_units, dtype="Int64"),
        "success": np.r_[a, b],
    })
    ep = episode_frame(frame)
    r = paired_difference(ep, a="a", b="b", by=["task_type"], pool=()).iloc[0]
    assert abs(r["difference"] - true_diff) < 3 * r["se"]
    unpaired_se = math.sqrt(a.var(ddof=1) / n_units + b.var(ddof=1) / n_units)
    assert r["corr"] > 0.5 and r["se"] < 0.8 * unpaired_se


def test_identical_differences_give_no_interval():
    frame = pd.DataFrame({
        "run_id": "r", "episode_id": [f"e{i}" for i in range(6)], "model": ["x"] * 3 + ["y"] * 3,
        "task": ["t1", "t2", "t3"] * 2, "task_type": "k", "clock": "wall", "time_unit": "s",
        "seed": pd.array([1] * 6, dtype="Int64"), "success": [True] * 3 + [False] * 3,
    })
    r = paired_difference(episode_frame(frame), a="x", b="y", by=["task_type"], pool=()).iloc[0]
    assert (r["n_pairs"], r["difference"], r["se"]) == (3, 1.0, 0.0)
    assert np.isnan(r["difference_lo"]) and np.isnan(r["p_value"]) and np.isnan(r["difference_clustered_lo"])


def test_clear_errors(episodes):
    with pytest.raises(ValueError, match="no episode has model = 'mZ'"):
        paired_difference(episodes, a="mA", b="mZ")
    with pytest.raises(ValueError, match="cannot group by 'model'"):
        paired_difference(episodes, a="mA", b="mB", by=["model", "clock"])
    with pytest.raises(ValueError, match="both 'mA'"):
        paired_difference(episodes, a="mA", b="mA")
