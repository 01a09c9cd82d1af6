"""Latency summary and ECDF on hand-made fixtures."""

import math

import numpy as np
import pytest

from rtanalysis.io import EpisodeSink
from rtanalysis.metrics import latency_ecdf, latency_summary
from tests.metrics_fixtures import load_fixture, row

# mA wall acted latencies (fixture basic.jsonl), sorted; one silent decision
MA_WALL = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.5, 2.0]
# relative to window close: every close is 1.0 except the 2.0 s decision (close 1.6)
MA_WALL_REL = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 2.0 / 1.6, 1.5]


@pytest.fixture(scope="module")
def basic():
    return load_fixture()


def test_summary_by_hand(basic):
    table = latency_summary(basic.episodes, basic.steps)
    assert "time_unit" in table.columns
    wall = row(table, model="mA", clock="wall")
    assert (wall["n_decisions"], wall["n_acted"], wall["time_unit"]) == (10, 9, "s")
    mean = 7.0 / 9
    assert wall["mean"] == pytest.approx(mean)
    assert wall["sd"] == pytest.approx(math.sqrt(sum((x - mean) ** 2 for x in MA_WALL) / 8))
    # type-7 quantile: position q·(n − 1) in the sorted values, linear in between
    assert wall["p50"] == pytest.approx(0.6)  # position 4
    assert wall["p90"] == pytest.approx(1.5 + 0.2 * (2.0 - 1.5))  # position 7.2
    assert wall["p99"] == pytest.approx(1.5 + 0.92 * (2.0 - 1.5))  # position 7.92
    assert wall["max"] == 2.0
    assert wall["n_windowed"] == 9
    assert wall["rel_p50"] == pytest.approx(0.6)
    assert wall["rel_p90"] == pytest.approx(1.25 + 0.2 * (1.5 - 1.25))
    assert wall["rel_p99"] == pytest.approx(1.25 + 0.92 * (1.5 - 1.25))


def test_groups_without_decisions_are_nan_not_zero(basic):
    table = latency_summary(basic.episodes, basic.steps)
    mb = row(table, model="mB")
    assert mb["n_decisions"] == 0 and mb["n_acted"] == 0
    assert all(np.isnan(mb[c]) for c in ("mean", "sd", "p50", "p90", "p99", "max", "rel_p50"))


def test_only_silent_decisions_give_nan():
    sink = EpisodeSink()
    sink.add({"run_id": "r", "episode_id": "e", "model": "m", "task_type": "t", "clock": "wall", "success": False,
              "steps": [{"t_obs": 0, "t_act": None}, {"t_obs": 1, "t_act": None}]}, "x.jsonl", 1)
    res = sink.finish()
    table = latency_summary(res.episodes, res.steps)
    assert (table["n_decisions"].iloc[0], table["n_acted"].iloc[0]) == (2, 0)
    assert np.isnan(table["mean"].iloc[0]) and np.isnan(table["p50"].iloc[0])
    assert len(latency_ecdf(res.episodes, res.steps)) == 0


def test_seconds_and_tokens_never_pooled():
    res = load_fixture("units.jsonl")
    table = latency_summary(res.episodes, res.steps)
    assert sorted(table["time_unit"]) == ["s", "tokens"]
    sec = row(table, time_unit="s")
    tok = row(table, time_unit="tokens")
    assert (sec["n_acted"], sec["mean"]) == (2, pytest.approx(0.6))
    assert (tok["n_decisions"], tok["n_acted"], tok["mean"]) == (3, 2, pytest.approx(185.0))
    assert tok["rel_p50"] == pytest.approx((120 / 200 + 250 / 200) / 2)
    # even when the caller groups by model only
    assert len(latency_summary(res.episodes, res.steps, by=["model"])) == 2


def test_ecdf_points(basic):
    ecdf = latency_ecdf(basic.episodes, basic.steps)
    wall = ecdf[(ecdf["model"] == "mA") & (ecdf["clock"] == "wall")]
    assert list(wall["latency"]) == MA_WALL
    np.testing.assert_allclose(wall["ecdf"], np.arange(1, 10) / 9)
    # relative ECDF is over relative latencies: 1.25 is 8th of 9, 1.5 is 9th
    rel = dict(zip(wall["latency_rel"], wall["ecdf_rel"]))
    assert rel[1.25] == pytest.approx(8 / 9) and rel[1.5] == pytest.approx(1.0)
    assert sorted(wall["latency_rel"]) == pytest.approx(MA_WALL_REL)
    assert set(ecdf["model"]) == {"mA"}  # groups without actions have no points


def test_ecdf_ties_share_the_top_value():
    sink = EpisodeSink()
    steps = [{"t_obs": i, "latency": lat} for i, lat in enumerate([0.5, 0.2, 0.5, 0.9])]
    sink.add({"run_id": "r", "episode_id": "e", "model": "m", "task_type": "t", "clock": "wall", "success": True,
              "steps": steps}, "x.jsonl", 1)
    res = sink.finish()
    ecdf = latency_ecdf(res.episodes, res.steps)
    assert list(ecdf["latency"]) == [0.2, 0.5, 0.5, 0.9]
    assert list(ecdf["ecdf"]) == [0.25, 0.75, 0.75, 1.0]
    assert ecdf["latency_rel"].isna().all() and ecdf["ecdf_rel"].isna().all()  # no windows


def test_success_by_latency_bins_the_episode_median_relative_latency():
    import pandas as pd

    from rtanalysis import schema
    from rtanalysis.metrics import success_by_latency, wilson
    from tests.metrics_fixtures import episode_frame

    ep = episode_frame({"run_id": ["r"] * 4, "episode_id": ["a", "b", "c", "d"], "model": ["m"] * 4,
                        "task_type": ["t"] * 4, "clock": ["wall"] * 4, "time_unit": ["s"] * 4,
                        "success": [True, False, True, True]})
    # medians of latency / close: a 0.3, b 0.4 (both in [0.25, 0.5)), c 1.2 (in [1, 1.5)), d no window
    st = pd.DataFrame({"run_id": ["r"] * 6, "episode_id": ["a", "a", "b", "c", "d", "d"], "step": [0, 1, 0, 0, 0, 1],
                       "latency": [0.2, 0.4, 0.8, 2.4, 0.1, 0.2], "window_close": [1.0, 1.0, 2.0, 2.0, None, None]})
    st["no_action"] = False
    for col in ("model", "task_type", "clock"):
        st[col] = ep[col].iloc[0]
    table = success_by_latency(ep, schema.conform(st, schema.STEP_COLUMNS), ci_prob=0.9)
    assert table["bin"].tolist() == ["[0.25, 0.5)", "[1.0, 1.5)"]
    assert table["n"].tolist() == [2, 1] and table["successes"].tolist() == [1, 1]
    assert table["relative_latency"].tolist() == pytest.approx([0.35, 1.2])
    lo, hi = wilson([1, 1], [2, 1], 0.9)
    np.testing.assert_allclose(table["success_rate_lo"], lo)
    np.testing.assert_allclose(table["success_rate_hi"], hi)


def test_ecdf_thinned_to_exact_points_of_the_full_ecdf():
    rng = np.random.default_rng(3)
    sink = EpisodeSink()
    for e in range(30):  # 30 episodes x 100 decisions; a window on every other decision
        steps = [{"t_obs": i, "latency": float(lat), **({"window": [0, 1.0]} if i % 2 else {})}
                 for i, lat in enumerate(np.round(rng.lognormal(-0.5, 0.6, 100), 2))]  # rounded: ties
        sink.add({"run_id": "r", "episode_id": f"e{e}", "model": "m", "task_type": "t", "clock": "wall",
                  "success": True, "steps": steps}, "x.jsonl", e + 1)
    res = sink.finish()
    full = latency_ecdf(res.episodes, res.steps, max_points=None)
    thin = latency_ecdf(res.episodes, res.steps, max_points=50)
    assert len(full) == 3000 and 50 <= len(thin) <= 100
    # every kept row is a row of the full table: the same point of both ECDFs
    merged = thin.merge(full, on=list(full.columns), how="left", indicator=True)
    assert (merged["_merge"] == "both").all()
    assert thin["latency"].is_monotonic_increasing
    assert (thin["latency"].min(), thin["latency"].max()) == (full["latency"].min(), full["latency"].max())
    rel = thin.dropna(subset=["latency_rel"])
    assert len(rel) >= 50 and rel["ecdf_rel"].max() == 1.0
    assert rel["latency_rel"].min() == full["latency_rel"].min()
    # evenly spread: no gap in the latency ECDF wider than about 2/50
    assert np.diff(np.r_[0, thin["ecdf"]]).max() <= 2 / 49 + 1e-9
    # a group with fewer decisions than max_points keeps them all
    assert len(latency_ecdf(res.episodes, res.steps, max_points=5000)) == 3000
