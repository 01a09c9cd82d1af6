"""Ingest on a Dask LocalCluster (2 workers): tables, quarantine, per-file counts and aggregates
exactly as one process gives them, with bad records and duplicates across workers' batches."""

import orjson
import pandas as pd
import pytest

from rtanalysis.cli import main
from rtanalysis.model.data import aggregate
from rtanalysis.scale import aggregate_dataset, read_dataset
from rtanalysis.scale.distributed import aggregate_on_cluster, batches, ingest_distributed, local_client, log_units
from rtanalysis.simulate import simulate
from tests.test_scale_dataset import assert_model_data_equal

distributed = pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def client():
    c = local_client(2, processes=False)
    yield c
    c.close()
    c.cluster.close()


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """Six files: simulated episodes split up, a broken line, a rule broken, duplicates across files."""
    d = tmp_path_factory.mktemp("logs")
    recs = simulate("mixed", seed=11, tasks=3, seeds=2).records
    n = len(recs) // 5
    for j in range(5):
        lines = [orjson.dumps(r) for r in recs[j * n:(j + 1) * n]]
        if j == 1:
            lines.insert(3, b'{"broken')
            bad = dict(recs[0], episode_id="bad-latency")
            bad["steps"] = [dict(bad["steps"][0], latency=-1.0)]
            lines.append(orjson.dumps(bad))
        (d / f"part{j}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    dups = [recs[0], recs[n + 1], recs[5 * n - 1]]  # first seen in part0, part1 and part4
    (d / "z_dups.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in dups))
    return d


def test_batches_are_contiguous_and_cover_all(logs):
    units = log_units([str(logs)])
    for n in (1, 2, 4, 10):
        cut = batches(units, n)
        assert [u for b in cut for u in b] == units and len(cut) == min(n, len(units))


def test_distributed_ingest_equals_single_process(client, logs, tmp_path):
    import rtanalysis

    one = rtanalysis.load([str(logs)])
    assert one.n_quarantined == 5  # broken line, negative latency, three duplicates
    res = ingest_distributed([str(logs)], tmp_path / "ds", client, n_parts=4)
    assert res.reloaded_parts >= 1 and res.n_parts == 4
    pd.testing.assert_frame_equal(res.quarantine, one.quarantine)
    pd.testing.assert_frame_equal(res.files, one.files)
    back = read_dataset(tmp_path / "ds")
    for name in ("episodes", "steps", "quarantine", "files"):
        pd.testing.assert_frame_equal(getattr(back, name), getattr(one, name), obj=name)
    expected = aggregate(one.episodes, one.steps)
    assert_model_data_equal(expected, aggregate_on_cluster(tmp_path / "ds", client))
    assert_model_data_equal(expected, aggregate_dataset(tmp_path / "ds"))


def test_cli_ingest_workers(logs, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["ingest", str(logs), "--out", str(out), "--workers", "2"]) == 0
    line = capsys.readouterr().out
    assert "5 quarantined" in line and (out / "dataset.json").is_file()
    q = [orjson.loads(x) for x in (out / "quarantine.jsonl").read_bytes().splitlines()]
    assert [r["field"] for r in q].count("episode_id") == 3
