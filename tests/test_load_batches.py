"""The loader's internal block and batch sizes never change its output; the tables keep their contract."""

import copy
import gzip
import importlib

import orjson
import pandas as pd
import pytest

from rtanalysis import schema
from rtanalysis.io import EpisodeSink, load_rtlog, read_rtlog
from tests.conftest import GOOD_EPISODE

# the modules that read these constants (`rtanalysis.load` the attribute is a function)
files_module = importlib.import_module("rtanalysis.io.files")
sink_module = importlib.import_module("rtanalysis.io.sink")


def _records():
    """Good, bad, duplicate, step-less and very long episodes, with every optional step field."""
    out = []
    for i in range(40):
        e = copy.deepcopy(GOOD_EPISODE)
        e["episode_id"] = f"e{i}"
        e["clock"] = ("wall", "paused", "step")[i % 3]
        e["steps"] = [
            {"t_obs": 0.0, "latency": 0.3, "window": [0, 0.5], "action": "U", "tokens": 7, "fallback": i % 4 == 0},
            {"t_obs": 1.0, "t_act": None, "correct_at_obs": False, "reward": -1},
            {"t_obs": 2.0, "t_act": 2.9, "valid_at_exec": i % 2 == 0, "action": None},
        ][: i % 4]
        if i % 7 == 3:
            e["steps"].append({"t_obs": 0.0, "t_act": 0.1})  # out of order: quarantined
        if i % 9 == 5:
            e["steps"] = [{"t_obs": "late"}]  # fails typed decoding
        if i % 11 == 6:
            e["episode_id"] = "e1"  # duplicate
        if i % 5 == 0:
            e.pop("steps")
        out.append(orjson.dumps(e))
    long = copy.deepcopy(GOOD_EPISODE)
    long["episode_id"] = "long"
    long["meta"] = {"pad": "x" * 5000}
    long["steps"] = [{"t_obs": float(k), "latency": 0.5, "window": [0, 1]} for k in range(3000)]
    out.insert(17, orjson.dumps(long))
    out.insert(3, b"")  # blank lines do not count
    out.insert(9, b"{not json")
    return out


def _frames(res):
    return res.episodes, res.steps, res.quarantine, res.files


@pytest.mark.parametrize("gz", [False, True])
def test_block_and_batch_sizes_do_not_change_the_tables(tmp_path, monkeypatch, gz):
    blob = b"\n".join(_records()) + b"\n"
    path = tmp_path / ("log.jsonl.gz" if gz else "log.jsonl")
    path.write_bytes(gzip.compress(blob) if gz else blob)
    ref = load_rtlog(path)
    assert ref.n_quarantined > 0 and ref.n_accepted > 0 and len(ref.steps) > 3000
    for read_block, batch_bytes in [(97, 1), (4096, 3000), (1, 10**9)]:
        monkeypatch.setattr(files_module, "READ_BLOCK", read_block)
        monkeypatch.setattr(sink_module, "BATCH_BYTES", batch_bytes)
        got = load_rtlog(path)
        for a, b in zip(_frames(ref), _frames(got)):
            pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_damaged_gzip_same_with_small_blocks(tmp_path, monkeypatch):
    blob = gzip.compress(b"\n".join(_records()) + b"\n", mtime=0)
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(blob[: len(blob) // 2])
    ref = load_rtlog(path)
    assert (ref.quarantine["field"] == "<file>").sum() == 1
    monkeypatch.setattr(files_module, "READ_BLOCK", 61)
    got = load_rtlog(path)
    for a, b in zip(_frames(ref), _frames(got)):
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_tables_follow_the_schema_and_are_writable(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"\n".join(_records()))
    res = load_rtlog(path)
    assert list(res.steps.columns) == list(schema.STEP_COLUMNS)
    assert [str(d) for d in res.steps.dtypes] == list(schema.STEP_COLUMNS.values())
    assert [str(d) for d in res.episodes.dtypes[: len(schema.EPISODE_COLUMNS)]] == list(
        schema.EPISODE_COLUMNS.values())
    # the frames own their data: editing them works and does not touch a later load
    steps = res.steps
    for col in steps.columns:
        steps.loc[0, col] = steps[col].iloc[1]
    res.episodes.loc[0, "seed"] = 99
    again = load_rtlog(path)
    pd.testing.assert_frame_equal(again.steps, load_rtlog(path).steps)
    assert again.episodes.loc[0, "seed"] != 99 or GOOD_EPISODE["seed"] == 99


def test_a_sink_builds_its_tables_once(tmp_path):
    """read_rtlog feeds a sink without building the tables (adapters share one sink and finish it once);
    the tables are load_rtlog's; a second finish() is an error, not an empty result."""
    path = tmp_path / "a.jsonl"
    eps = [dict(copy.deepcopy(GOOD_EPISODE), episode_id=f"e{i}") for i in range(3)]
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in eps))
    sink = EpisodeSink()
    read_rtlog(path, sink)
    fed = sink.finish()
    ref = load_rtlog(path)
    assert len(fed.steps) == len(ref.steps) > 0
    pd.testing.assert_frame_equal(fed.episodes, ref.episodes)
    pd.testing.assert_frame_equal(fed.steps, ref.steps)
    with pytest.raises(RuntimeError, match="called already"):
        sink.finish()
    used = EpisodeSink()
    load_rtlog(path, sink=used)
    with pytest.raises(RuntimeError, match="read_rtlog"):
        used.finish()
