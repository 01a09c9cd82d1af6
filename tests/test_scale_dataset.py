"""Partitioned Parquet dataset (``ingest --dataset``) and the DuckDB aggregates: the same tables and
the same sufficient statistics as the in-memory pandas path, on every simulate preset."""

import dataclasses

import numpy as np
import orjson
import pandas as pd
import pytest

from rtanalysis.cli import main
from rtanalysis.reporting.ingest import ingest
from rtanalysis.model.data import aggregate
from rtanalysis.scale import aggregate_dataset, is_dataset, read_dataset
from rtanalysis.simulate import PRESETS, simulate
from tests.conftest import GOOD_EPISODE


def assert_model_data_equal(a, b):
    """Integers and group keys exact; sums, quantile edges and reference scales to rounding."""
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, pd.DataFrame):
            pd.testing.assert_frame_equal(x.reset_index(drop=True), y.reset_index(drop=True),
                                          check_exact=False, rtol=1e-12, atol=1e-12, obj=f.name)
        elif isinstance(x, np.ndarray):
            assert x.shape == y.shape, f.name
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12, err_msg=f.name)
        else:
            assert x == y, f.name


def _logs(tmp_path, preset, **size):
    paths = simulate(preset, seed=3, **size).write(tmp_path / "logs")
    return [str(paths["episodes"])]


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_duckdb_aggregates_equal_pandas_on_every_preset(tmp_path, preset):
    size = {"tasks": 2, "seeds": 1} if preset == "leaderboard60" else {"tasks": 3, "seeds": 2}
    result, _ = ingest(_logs(tmp_path, preset, **size), tmp_path / "ds", dataset=True)
    assert len(result.steps) > 100
    assert_model_data_equal(aggregate(result.episodes, result.steps), aggregate_dataset(tmp_path / "ds"))


@pytest.mark.parametrize("preset", ["truncated", "nonfatal_skip"])
def test_duckdb_aggregates_equal_pandas_where_logs_end_at_the_fatal_decision(tmp_path, preset):
    """The survival reading's tables (episodes ended by failure, their last decisions, natural lengths)
    are the same from DuckDB as from pandas."""
    result, _ = ingest(_logs(tmp_path, preset, tasks=3, seeds=2), tmp_path / "ds", dataset=True)
    a, b = aggregate(result.episodes, result.steps), aggregate_dataset(tmp_path / "ds")
    assert a.survival and (a.truncated["ml"] > 0).any()
    assert (a.truncated["tl"] > 0).any() == (preset == "truncated")  # silent misses carry no label
    assert_model_data_equal(a, b)


def test_unlabelled_and_bad_records_round_trip(tmp_path):
    """Unlabelled decisions, zero latencies, a missing task and a condition key; a broken line,
    a duplicate across files. The dataset reads back into the very LoadResult the logs give."""
    sim = simulate("mixed", seed=5, tasks=3, seeds=2, labelled=False)
    recs = sim.records
    recs[0]["steps"][0]["latency"] = 0.0
    recs[0]["steps"][0].pop("t_act", None)
    recs[1].pop("task")
    recs[2]["conditions"] = {"load": "high"}
    d = tmp_path / "logs"
    d.mkdir()
    (d / "a.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs) + b'{"broken\n')
    (d / "b.jsonl").write_bytes(orjson.dumps(recs[4]) + b"\n")
    result, _ = ingest([str(d)], tmp_path / "ds", dataset=True)
    assert result.n_quarantined == 2 and result.episodes["task"].isna().sum() == 1
    back = read_dataset(tmp_path / "ds")
    for name in ("episodes", "steps", "quarantine", "files"):
        pd.testing.assert_frame_equal(getattr(result, name), getattr(back, name), obj=name)
    assert_model_data_equal(aggregate(result.episodes, result.steps), aggregate_dataset(tmp_path / "ds"))


def test_cli_ingest_dataset_layout_and_fit_input(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    eps = [dict(GOOD_EPISODE, episode_id=f"e{i}", model=("org/m a" if i % 2 else "b")) for i in range(4)]
    (logs / "a.jsonl").write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in eps))
    out = tmp_path / "out"
    assert main(["ingest", str(logs), "--out", str(out), "--dataset"]) == 0
    assert is_dataset(out) and not (out / "steps.parquet").exists()
    assert (out / "steps" / "model=org%2Fm%20a" / "part-00000.parquet").is_file()
    import rtanalysis

    lr = rtanalysis.load(str(out))  # what `rtanalysis fit DIR` and `report DIR` load
    assert sorted(lr.episodes["model"].unique()) == ["b", "org/m a"] and len(lr.steps) == 8


@pytest.mark.slow
def test_report_reads_a_dataset_directory(tmp_path):
    logs = _logs(tmp_path, "long_horizon", tasks=2, seeds=1)
    assert main(["ingest", *logs, "--out", str(tmp_path / "ds"), "--dataset"]) == 0
    assert main(["report", str(tmp_path / "ds"), "--out", str(tmp_path / "rep"), "--no-fit", "--quiet"]) == 0
    one = pd.read_csv(tmp_path / "rep" / "metrics_success.csv")
    assert main(["report", *logs, "--out", str(tmp_path / "rep2"), "--no-fit", "--quiet"]) == 0
    pd.testing.assert_frame_equal(one, pd.read_csv(tmp_path / "rep2" / "metrics_success.csv"))
    assert (tmp_path / "rep" / "report.md").read_text().count("episodes") > 0


def test_duckdb_aggregates_equal_pandas_on_the_realtimegym_example(tmp_path):
    # real harness output: tick-constant (seconds) and capped-at-the-budget (tokens) latency cells
    import rtanalysis

    src = str(rtanalysis.example_data("realtimegym") / "episodes.jsonl.gz")
    result, _ = ingest([src], tmp_path / "ds", dataset=True)
    got = aggregate_dataset(tmp_path / "ds")
    assert_model_data_equal(aggregate(result.episodes, result.steps), got)
    assert (got.latency["n_at_close"] > 0).all() and not got.latency["informative"].any()
