"""Success rates on the hand-made fixture: counts, Wilson/Jeffreys bounds, clustered SE, grouping."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rtanalysis import schema
from rtanalysis.metrics import success_rates
from tests.metrics_fixtures import load_fixture, row

Z95 = 1.959963984540054


def wilson_by_hand(k, n):
    z2 = Z95**2
    centre = (k + z2 / 2) / (n + z2)
    half = Z95 / (n + z2) * math.sqrt(k * (n - k) / n + z2 / 4)
    return centre - half, centre + half


@pytest.fixture(scope="module")
def basic():
    return load_fixture()


def test_default_grouping_counts_and_wilson(basic):
    table = success_rates(basic.episodes)
    assert list(table.columns[:3]) == ["model", "task_type", "clock"]
    assert len(table) == 3  # mA paused, mA wall, mB wall
    wall = row(table, model="mA", clock="wall")
    assert (wall["n"], wall["successes"], wall["success_rate"]) == (5, 3, 0.6)
    assert (wall["success_rate_lo"], wall["success_rate_hi"]) == pytest.approx(wilson_by_hand(3, 5), abs=1e-12)
    mb = row(table, model="mB")
    assert (mb["n"], mb["successes"]) == (5, 1)
    assert (mb["success_rate_lo"], mb["success_rate_hi"]) == pytest.approx(wilson_by_hand(1, 5), abs=1e-12)


def test_clustered_se_on_task_by_hand(basic):
    table = success_rates(basic.episodes)
    wall = row(table, model="mA", clock="wall")
    # mA wall successes by task: t1 = (1, 1), t2 = (0, 1), t3 = (0); x̄ = 0.6
    # cluster residual sums: t1 0.8, t2 −0.2, t3 −0.6 -> Σ² = 1.04; G = 3
    se = math.sqrt(3 / 2 * (0.8**2 + 0.2**2 + 0.6**2)) / 5
    assert wall["cluster_by"] == "task" and wall["n_clusters"] == 3
    assert wall["se_clustered"] == pytest.approx(se, abs=1e-12)
    assert wall["success_rate_clustered_lo"] == pytest.approx(0.6 - Z95 * se, abs=1e-12)
    assert wall["success_rate_clustered_hi"] == 1.0  # 0.6 + 1.96·0.2498 > 1, clipped
    raw = row(success_rates(basic.episodes, small_sample=False), model="mA", clock="wall")
    assert raw["se_clustered"] == pytest.approx(math.sqrt(1.04) / 5, abs=1e-12)  # Miller's formula as printed
    mb = row(table, model="mB")
    # mB: t1 = (0, 1), t2 = (0, 0), t3 = (0); x̄ = 0.2; sums 0.6, −0.4, −0.2
    se_b = math.sqrt(1.5 * (0.36 + 0.16 + 0.04)) / 5
    assert mb["se_clustered"] == pytest.approx(se_b, abs=1e-12)


def test_jeffreys_method(basic):
    table = success_rates(basic.episodes, method="jeffreys")
    wall = row(table, model="mA", clock="wall")
    assert wall["method"] == "jeffreys"
    assert wall["success_rate_lo"] == pytest.approx(stats.beta.ppf(0.025, 3.5, 2.5))
    assert wall["success_rate_hi"] == pytest.approx(stats.beta.ppf(0.975, 3.5, 2.5))
    paused = row(table, model="mA", clock="paused")  # 3 of 3: upper bound 1 by the boundary rule
    assert paused["success_rate_hi"] == 1.0
    # all outcomes equal: clustered SE is 0 and its point "interval" is withheld
    assert paused["se_clustered"] == 0.0
    assert np.isnan(paused["success_rate_clustered_lo"]) and np.isnan(paused["success_rate_clustered_hi"])


def test_cluster_fallback_to_seed_then_episode(basic):
    ep = basic.episodes.copy()
    ep["task"] = pd.array([pd.NA] * len(ep), dtype="str")
    table = success_rates(ep)
    wall = row(table, model="mA", clock="wall")
    # seeds of mA wall: 1, 2, 1, 2, 1 -> clusters {1: (1, 0, 0), 2: (1, 1)}; x̄ = 0.6
    # residual sums: seed 1: 0.4 − 0.6 − 0.6 = −0.8; seed 2: 0.4 + 0.4 = 0.8
    assert wall["cluster_by"] == "seed" and wall["n_clusters"] == 2
    assert wall["se_clustered"] == pytest.approx(math.sqrt(2 * (0.64 + 0.64)) / 5, abs=1e-12)
    ep["seed"] = pd.array([pd.NA] * len(ep), dtype="Int64")
    wall = row(success_rates(ep), model="mA", clock="wall")
    assert wall["cluster_by"] == "episode" and wall["n_clusters"] == 5
    x = np.array([1, 1, 0, 1, 0.0])
    assert wall["se_clustered"] == pytest.approx(x.std(ddof=1) / math.sqrt(5), abs=1e-12)


def test_grouping_by_condition_keeps_missing_as_own_group(basic):
    table = success_rates(basic.episodes, by=["model", "load"])
    assert list(table.columns[:2]) == ["model", "load"]
    assert len(table) == 4  # mA H, mA L, mA missing (paused), mB missing
    h = row(table, model="mA", load="H")
    assert (h["n"], h["successes"]) == (2, 2)
    missing = table[table["load"].isna()]
    assert sorted(zip(missing["model"], missing["n"])) == [("mA", 3), ("mB", 5)]


def test_overall_when_by_is_empty(basic):
    table = success_rates(basic.episodes, by=[])
    assert len(table) == 1
    assert (table["n"].iloc[0], table["successes"].iloc[0]) == (13, 7)


def test_single_episode_and_empty_frame():
    ep = load_fixture().episodes.iloc[:1]
    one = success_rates(ep)
    assert one["n"].iloc[0] == 1 and one["success_rate"].iloc[0] == 1.0
    assert np.isnan(one["se_clustered"].iloc[0])  # one cluster: undefined, not 0
    assert one["n_clusters"].iloc[0] == 1
    empty = success_rates(schema.empty(schema.EPISODE_COLUMNS))
    assert len(empty) == 0 and "success_rate" in empty.columns


def test_bad_by_column_is_named(basic):
    with pytest.raises(ValueError, match="no episode column 'nope'"):
        success_rates(basic.episodes, by=["model", "nope"])
