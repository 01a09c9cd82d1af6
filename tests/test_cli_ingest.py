"""`rtanalysis ingest`: the files it writes, its summary line and its exit codes."""

import json

import orjson
import pandas as pd

from rtanalysis.cli import main
from tests.conftest import GOOD_EPISODE


def _logs(tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    good = [dict(GOOD_EPISODE, episode_id=f"e{i}", success=bool(i % 2)) for i in range(4)]
    (d / "a.jsonl").write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in good) + b'{"broken\n')
    (d / "b.jsonl").write_bytes(orjson.dumps(dict(GOOD_EPISODE, episode_id="e0")) + b"\n")  # duplicate
    return d


def test_ingest_writes_everything_and_reconciles(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["ingest", str(_logs(tmp_path)), "--out", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    assert "6 records" in line and "4 accepted" in line and "2 quarantined" in line
    summary = json.loads((out / "ingest.json").read_text())
    assert (summary["n_read"], summary["n_accepted"], summary["n_quarantined"]) == (6, 4, 2)
    assert [(f["n_read"], f["n_accepted"], f["n_quarantined"]) for f in summary["files"]] == [(5, 4, 1), (1, 0, 1)]
    q = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert [(r["line"], r["field"]) for r in q] == [(5, "<record>"), (1, "episode_id")]
    assert q[0]["file"].endswith("a.jsonl") and "not valid JSON" in q[0]["reason"] and q[0]["raw"] == '{"broken'
    episodes = pd.read_parquet(out / "episodes.parquet")
    steps = pd.read_parquet(out / "steps.parquet")
    assert len(episodes) == 4 and len(steps) == 8
    assert steps["outcome"].tolist() == ["ok", "late"] * 4
    success = pd.read_csv(out / "metrics_success.csv")
    assert success["n"].sum() == 4 and success["successes"].sum() == 2
    for key in ("latency", "validity", "hazard", "fallback", "score_variance", "observed_decomposition"):
        assert (out / f"metrics_{key}.csv").exists(), key


def test_ingest_exit_codes(tmp_path, capsys):
    assert main(["ingest", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert "missing" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["ingest", str(tmp_path / "empty"), "--out", str(tmp_path / "o")]) == 1
    assert "no records" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text("nonsense\n")
    assert main(["ingest", str(bad), "--out", str(tmp_path / "o")]) == 1
    assert "no record could be read" in capsys.readouterr().err
    # some bad records but something read: success
    bad.write_text("nonsense\n" + orjson.dumps(GOOD_EPISODE).decode() + "\n")
    assert main(["ingest", str(bad), "--out", str(tmp_path / "o")]) == 0
