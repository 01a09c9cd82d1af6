"""Files, directories, gzip and whole-file damage; counts reconcile per file."""

import gzip
import os

import orjson
import pytest

from rtanalysis.io import find_log_files, load_rtlog
from tests.conftest import GOOD_EPISODE


def _episode(i, run="r1"):
    return orjson.dumps(dict(GOOD_EPISODE, episode_id=f"e{i}", run_id=run)) + b"\n"


def test_directory_recursive_jsonl_and_gz(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "one.jsonl").write_bytes(_episode(1) + b"\n   \n" + _episode(2))
    with gzip.open(tmp_path / "a" / "b" / "two.jsonl.gz", "wb") as fh:
        fh.write(_episode(3) + _episode(4))
    (tmp_path / "a" / "notes.txt").write_text("not a log")
    res = load_rtlog(tmp_path)
    assert res.n_accepted == 4 and res.n_quarantined == 0
    assert res.n_read == 4  # blank lines are not records
    assert sorted(res.files["path"]) == sorted(str(p) for p in find_log_files([tmp_path]))
    assert res.files.set_index("path")["n_read"].to_dict() == {
        str(tmp_path / "a" / "b" / "two.jsonl.gz"): 2, str(tmp_path / "a" / "one.jsonl"): 2}


def test_several_paths_and_duplicates_across_files(tmp_path):
    (tmp_path / "x.jsonl").write_bytes(_episode(1) + _episode(2))
    (tmp_path / "y.jsonl").write_bytes(_episode(2) + _episode(3))
    res = load_rtlog([tmp_path / "x.jsonl", tmp_path / "y.jsonl"])
    assert (res.n_read, res.n_accepted, res.n_quarantined) == (4, 3, 1)
    per_file = res.files.set_index("path")
    assert per_file.loc[str(tmp_path / "y.jsonl"), "n_quarantined"] == 1
    assert (per_file["n_read"] == per_file["n_accepted"] + per_file["n_quarantined"]).all()


def test_truncated_gzip_keeps_lines_before_damage(tmp_path):
    data = b"".join(_episode(i) for i in range(200))
    blob = gzip.compress(data, mtime=0)
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(blob[: len(blob) * 2 // 3])
    res = load_rtlog(path)
    assert 0 < res.n_accepted < 200
    damage = res.quarantine[res.quarantine["field"] == "<file>"]
    assert len(damage) == 1
    assert damage["file"].iloc[0] == str(path)
    assert "damaged" in damage["reason"].iloc[0]
    assert res.n_read == res.n_accepted + res.n_quarantined
    # every accepted episode is intact: the ids form a prefix 0..k-1
    ids = sorted(int(e[1:]) for e in res.episodes["episode_id"])
    assert ids == list(range(len(ids)))


def test_corrupt_gzip_header(tmp_path):
    path = tmp_path / "bad.jsonl.gz"
    path.write_bytes(b"this is not gzip at all\n")
    res = load_rtlog(path)
    assert res.n_accepted == 0 and res.n_quarantined == 1
    assert res.quarantine["field"][0] == "<file>"


def test_not_utf8_line_is_quarantined_others_kept(tmp_path):
    path = tmp_path / "latin1.jsonl"
    bad = orjson.dumps(dict(GOOD_EPISODE, episode_id="x", model="mod\u00e8le")).replace("è".encode(), b"\xe8")
    path.write_bytes(_episode(1) + bad + b"\n" + _episode(2))
    res = load_rtlog(path)
    assert (res.n_read, res.n_accepted, res.n_quarantined) == (3, 2, 1)
    assert res.quarantine["line"][0] == 2
    assert "not valid UTF-8" in res.quarantine["reason"][0]


def test_unreadable_file(tmp_path):
    # /proc/self/mem opens but fails with EIO on read, even for root (chmod 0 would not stop root)
    path = tmp_path / "io-error.jsonl"
    os.symlink("/proc/self/mem", path)
    (tmp_path / "ok.jsonl").write_bytes(_episode(1))
    res = load_rtlog(tmp_path)
    assert (res.n_read, res.n_accepted, res.n_quarantined) == (2, 1, 1)
    q = res.quarantine.iloc[0]
    assert q["file"] == str(path) and q["field"] == "<file>" and "Input/output error" in q["reason"]


def test_a_directory_named_like_a_log_is_unreadable_not_fatal(tmp_path):
    (tmp_path / "weird.jsonl").mkdir()
    (tmp_path / "ok.jsonl").write_bytes(_episode(1))
    res = load_rtlog([tmp_path / "ok.jsonl", tmp_path / "weird.jsonl"])
    assert res.n_accepted == 1 and res.n_quarantined == 0  # a directory is searched, not read


def test_missing_path_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        load_rtlog(tmp_path / "nope.jsonl")


def test_raw_text_is_cut_at_1kB(tmp_path):
    rec = dict(GOOD_EPISODE, clock="bogus", meta={"pad": "x" * 5000})
    path = tmp_path / "big.jsonl"
    path.write_bytes(orjson.dumps(rec) + b"\n")
    res = load_rtlog(path)
    assert len(res.quarantine["raw"][0]) == 1024
