"""compute_all / write_metrics: stable keys, empty input, custom grouping, reproducible files."""

import pandas as pd
import pytest

from rtanalysis import schema
from rtanalysis.metrics import compute_all, write_metrics
from tests.metrics_fixtures import load_fixture

KEYS = ["success", "latency", "latency_ecdf", "success_by_latency", "validity", "hazard", "fallback", "reliability",
        "score_variance", "episode_structure", "observed_decomposition"]


def test_keys_and_default_grouping():
    res = load_fixture()
    tables = compute_all(res.episodes, res.steps)
    assert list(tables) == KEYS
    for key, table in tables.items():
        assert list(table.columns[:3]) == ["model", "task_type", "clock"], key
        assert len(table) > 0, key


def test_condition_grouping():
    res = load_fixture()
    tables = compute_all(res.episodes, res.steps, by=["model", "load"])
    assert list(tables["validity"].columns[:2]) == ["model", "load"]
    assert list(tables["latency"].columns[:3]) == ["model", "load", "time_unit"]
    h = tables["success"]
    assert h.loc[(h["model"] == "mA") & (h["load"] == "L"), "n"].item() == 3


def test_empty_input_gives_empty_tables_with_columns():
    tables = compute_all(schema.empty(schema.EPISODE_COLUMNS), schema.empty(schema.STEP_COLUMNS))
    assert list(tables) == KEYS
    for key, table in tables.items():
        assert len(table) == 0, key
        assert "model" in table.columns, key


def test_write_metrics_is_reproducible(tmp_path):
    res = load_fixture()
    paths = write_metrics(compute_all(res.episodes, res.steps), tmp_path / "out")
    assert [p.name for p in paths] == [f"metrics_{k}.csv" for k in KEYS]
    again = write_metrics(compute_all(res.episodes, res.steps), tmp_path / "again")
    for p, q in zip(paths, again):
        assert p.read_bytes() == q.read_bytes()
    success = pd.read_csv(paths[0])
    assert success.loc[success["model"] == "mB", "successes"].item() == 1
    with pytest.raises(ValueError, match="no episode column"):
        compute_all(res.episodes, res.steps, by=["nope"])


def test_subset_of_episodes_with_all_steps():
    res = load_fixture()
    ma = res.episodes[res.episodes["model"] == "mA"]
    sub = compute_all(ma, res.steps)
    full = compute_all(res.episodes, res.steps)
    for key in KEYS:
        expected = full[key][full[key]["model"] == "mA"].reset_index(drop=True)
        pd.testing.assert_frame_equal(sub[key], expected, check_dtype=False)


def test_shared_episode_rows_change_no_table():
    """compute_all finds each decision's episode once for all tables: every table equals the one
    its function computes alone, on a simulated dataset and on a subset of its episodes."""
    from rtanalysis.metrics import METRICS
    from rtanalysis.simulate import simulate

    res = simulate("mixed", seed=1, tasks=2, seeds=2).load()
    for episodes in (res.episodes, res.episodes[res.episodes["clock"] != "paused"].reset_index(drop=True)):
        tables = compute_all(episodes, res.steps)
        for key, fn in METRICS.items():
            pd.testing.assert_frame_equal(tables[key], fn(episodes, res.steps, None, 0.95), obj=key)
