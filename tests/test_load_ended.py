"""The episode field ``ended`` (how the episode ended) reaches the episodes table, in either key dtype
and through a dataset written by ``ingest --dataset``; a log without it keeps the hash it had."""

import pandas as pd
import pytest

import rtanalysis
from rtanalysis.io import load_rtlog
from rtanalysis.model.inputs import data_hash
from rtanalysis.reporting.ingest import ingest
from rtanalysis.scale import read_dataset
from tests.test_load_rules import _write

ENDINGS = [(True, "horizon"), (False, "failure"), (False, "cut"), (False, None)]


def _records(with_ended=True):
    return [{"run_id": "r", "episode_id": f"e{i}", "model": "m", "task_type": "t", "clock": "wall", "success": s,
             **({"ended": e} if e and with_ended else {}), "steps": [{"t_obs": 0.0, "latency": 0.5, "window": [0, 1]}]}
            for i, (s, e) in enumerate(ENDINGS)]


@pytest.mark.parametrize("key_dtype", ["str", "category"])
def test_ended_reaches_the_episodes_table(tmp_path, key_dtype):
    res = rtanalysis.load(_write(tmp_path, _records()), key_dtype=key_dtype)
    assert res.n_quarantined == 0
    assert list(res.episodes["ended"].astype(object).where(res.episodes["ended"].notna(), None)) == \
        [e for _, e in ENDINGS]


def test_ended_survives_a_dataset_round_trip(tmp_path):
    path = _write(tmp_path, _records())
    result, _ = ingest([str(path)], tmp_path / "ds", dataset=True)
    back = read_dataset(tmp_path / "ds")
    pd.testing.assert_series_equal(back.episodes["ended"].astype(object), result.episodes["ended"].astype(object))


def test_a_log_without_ended_keeps_its_hash(tmp_path):
    """The column is hashed only where some episode gives it: the same logs hash as before it existed."""
    without = load_rtlog(_write(tmp_path, _records(with_ended=False), "without.jsonl"))
    with_it = load_rtlog(_write(tmp_path, _records(), "with.jsonl"))
    assert data_hash(without.episodes.drop(columns="ended"), without.steps) == data_hash(without.episodes,
                                                                                        without.steps)
    assert data_hash(with_it.episodes, with_it.steps) != data_hash(without.episodes, without.steps)
