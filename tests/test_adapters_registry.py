"""The adapter registry: format detection, one sink for mixed formats, options, errors."""

import json

import pytest

import rtanalysis
from rtanalysis.adapters import FORMATS, detect_format, load

from .adapters_fixtures import SLOT_COLUMNS, freeway_rows, rtgym_run_dir
from .conftest import GOOD_EPISODE


@pytest.fixture
def mixed(tmp_path):
    rtlog = tmp_path / "a.jsonl"
    rtlog.write_text(json.dumps(GOOD_EPISODE) + "\n{not json}\n")
    slots = tmp_path / "slots.csv"
    slots.write_text(",".join(SLOT_COLUMNS) + "\nm,s1,1,qa,0,0,2,1,true,false,1\nm,s1,2,qa,5,5,7,,,false,\n")
    run = rtgym_run_dir(tmp_path / "runs", "freeway", "E", 8192, "planning", 0,
                        episodes={(0, 0): freeway_rows(11)}, finished=[(1000, 89)],
                        header={"planning_model_config": None})
    return rtlog, slots, run


def test_detection(mixed, tmp_path):
    rtlog, slots, run = mixed
    assert [detect_format(p) for p in (rtlog, slots, run, run.parent)] == [
        "rtlog", "response-slots", "realtimegym", "realtimegym"]
    other = tmp_path / "other.csv"
    other.write_text("x,y\n1,2\n")
    with pytest.raises(ValueError, match="format='table'"):
        detect_format(other)
    with pytest.raises(FileNotFoundError, match="nope"):
        detect_format(tmp_path / "nope")


def test_mixed_formats_share_one_result(mixed):
    rtlog, slots, run = mixed
    res = rtanalysis.load([rtlog, slots, run], model="r1", progress=None)
    assert res.n_read == 4 and res.n_accepted == 3 and res.n_quarantined == 1
    assert sorted(res.episodes["model"]) == ["m", "model-a", "r1"]
    per_file = res.files.set_index("path")
    assert per_file.loc[str(rtlog), "n_quarantined"] == 1 and per_file.loc[str(slots), "n_accepted"] == 1
    assert (res.files["n_read"] == res.files["n_accepted"] + res.files["n_quarantined"]).all()


def test_options_and_formats_are_checked(mixed):
    rtlog, slots, run = mixed
    with pytest.raises(ValueError, match="unknown format 'csvx'.*realtimegym"):
        load(rtlog, format="csvx")
    with pytest.raises(ValueError, match="model not taken"):
        load(rtlog, model="x")
    assert {"model", "success_rule", "seed_map"} <= set(FORMATS["realtimegym"].options)
    assert set(FORMATS["table"].options) >= {"mapping", "constants"}
    # an explicit format overrides detection
    assert load(slots, format="response-slots").n_accepted == 1


def test_cli_options_feed_load(mixed, tmp_path):
    import argparse

    from rtanalysis.adapters.cli import add_cli_options, options_from_args

    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None)  # ingest already defines it: kept as is
    add_cli_options(parser)
    f = tmp_path / "t.csv"
    f.write_text("ep,won,m\n1,true,a\n2,false,a\n")
    args = parser.parse_args(["--mapping", '{"episode_id": "ep", "success": "won", "model": "m"}',
                              "--constants", '{"clock": "wall", "task_type": "x"}', "--run-id", "r9"])
    opts = options_from_args(args)
    assert set(opts) == {"mapping", "constants", "run_id"}
    res = load(f, format="table", **opts)
    assert res.episodes["run_id"].tolist() == ["r9", "r9"] and res.episodes["success"].tolist() == [True, False]
    _, _, run = mixed
    opts = options_from_args(parser.parse_args(["--model", "r1", "--success-rule", "0.99"]))
    assert load(run, **opts).episodes["success"].tolist() == [True]  # 89/89
    with pytest.raises(ValueError, match="--mapping: not valid JSON"):
        options_from_args(parser.parse_args(["--mapping", "{episode_id: ep}"]))


def test_to_rtlog_round_trip_and_schema(mixed, tmp_path):
    import gzip

    import jsonschema
    import pandas as pd

    from rtanalysis.adapters import to_rtlog
    from rtanalysis.io import json_schema, load_rtlog

    _, slots, run = mixed
    out = tmp_path / "converted.jsonl.gz"
    direct = to_rtlog([slots, run], out, model="r1")
    again = load_rtlog(out)
    assert again.n_accepted == direct.n_accepted == 2 and again.n_quarantined == 0
    drop = ["source_file", "source_line"]
    pd.testing.assert_frame_equal(again.episodes.drop(columns=drop), direct.episodes.drop(columns=drop))
    pd.testing.assert_frame_equal(again.steps, direct.steps)
    validator = jsonschema.Draft202012Validator(json_schema())
    for line in gzip.open(out, "rt"):
        validator.validate(json.loads(line))
