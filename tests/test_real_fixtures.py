"""Logs written by the harnesses themselves (tests/data/real/, README there) load and ingest.

Each fixture is read through ``rtanalysis.load`` with the detected adapter; counts reconcile; the
fields the harness logs come through, checked against the raw files read independently here (the
csv/gzip/lzma modules, inspect-ai's own log reader); ``rtanalysis ingest`` exits 0 on each.
"""

import csv
import io
import json
import lzma
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rtanalysis
from rtanalysis import cli
from rtanalysis.adapters import detect_format

REAL = Path(__file__).parent / "data" / "real"
RTG = REAL / "realtimegym"
# inspect-ai's own deprecation notices (tenacity, pandas 3.1), not ours
pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter:DeprecationWarning",
                                        "ignore:The inplace keyword")


@pytest.fixture(scope="module")
def rtg():
    return rtanalysis.load(RTG)


def _raw_csv(path: Path) -> pd.DataFrame:
    data = lzma.decompress(path.read_bytes()) if path.suffix == ".xz" else path.read_bytes()
    return pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)


def _args(run_dir: Path) -> dict:
    head = run_dir.joinpath("args.log").read_text().split("\n\n")[0]
    return dict(line.split(": ", 1) for line in head.splitlines())


def test_realtimegym_runs_load_whole(rtg):
    assert detect_format(RTG) == "realtimegym"
    run_dirs = sorted(p.parent for p in RTG.rglob("args.log"))
    n_csv = sum(1 for d in run_dirs for _ in d.glob("*.csv*"))
    assert rtg.n_read == rtg.n_accepted + rtg.n_quarantined
    assert rtg.n_quarantined == 0, rtg.quarantine
    assert rtg.n_accepted == n_csv == len(rtg.episodes)
    ep = rtg.episodes
    # model names from the run's own config files (agile runs use one model for both threads)
    assert set(ep["model"]) == {"stub-a", "stub-b"}
    assert set(ep["task_type"]) == {"freeway", "snake", "overcooked"}
    assert set(ep["mode"]) == {"reactive", "planning", "agile"}
    assert set(ep["cognitive_load"]) == {"E", "H"}
    assert set(ep["time_unit"]) == {"tokens", "s"} and (ep["clock"] == "step").all()


def test_realtimegym_episode_fields_match_the_raw_files(rtg):
    ep = rtg.episodes.set_index(["run_id", "episode_id"])
    checked = 0
    for args_log in sorted(RTG.rglob("args.log")):
        run_dir = args_log.parent
        args = _args(run_dir)
        results = re.findall(r"seed: (\d+) reward: (\S+) total_time", args_log.read_text())
        for csv_path in sorted(run_dir.glob("*.csv*")):
            raw = _raw_csv(csv_path)
            row = ep.loc[(f"{run_dir.parent.name}:{run_dir.name}", csv_path.name.split(".")[0])]
            meta = json.loads(row["meta"])
            assert row["n_steps"] == len(raw)
            # the final cumulative reward is the score args.log records for that episode
            final = float(raw["reward"].iloc[-1])
            assert (meta["env_seed"], final) in {(int(s), float(r)) for s, r in results}
            assert meta["raw_score"] == final
            assert meta["latency_source"] == ("tokens" if args["time_unit"] == "token" else "tick")
            checked += 1
    assert checked == len(rtg.episodes)


def test_realtimegym_decisions_match_the_raw_csvs(rtg):
    st = rtg.steps
    for csv_path in sorted(RTG.rglob("*.csv*")):
        run_dir = csv_path.parent
        args = _args(run_dir)
        raw = _raw_csv(csv_path)
        run_id = f"{run_dir.parent.name}:{run_dir.name}"  # <model>:<directory>; folders named by model
        mine = st[(st["run_id"] == run_id) & (st["episode_id"] == csv_path.name.split(".")[0])]
        tp = float(args["time_pressure"])
        acted = raw["action"] != ""
        assert list(mine["no_action"]) == list(~acted)
        assert list(mine.loc[acted.to_numpy(), "action"]) == list(raw.loc[acted, "action"])
        assert (mine["window_close"] == tp).all()
        if args["time_unit"] == "seconds":
            # seconds mode logs no per-decision time: every acted latency is the tick length
            assert (mine.loc[acted.to_numpy(), "latency"] == tp).all()
            if args["mode"] == "planning":  # no plan column: whether it fell back is unknown
                assert "plan" not in raw.columns and mine["fallback"].isna().all()
            continue
        if args["mode"] == "planning":
            empty_plan = (raw["plan"] == "").to_numpy()
            assert list(mine["fallback"]) == list(empty_plan)
        else:
            assert not mine["fallback"].any()
            tokens = raw["model1_token_num"].astype(float).to_numpy()
            assert np.array_equal(mine.loc[acted.to_numpy(), "latency"].to_numpy(), tokens[acted.to_numpy()])


def test_realtimegym_planning_runs_fall_back_sometimes(rtg):
    st = rtg.steps.merge(rtg.episodes[["run_id", "episode_id", "mode"]], on=["run_id", "episode_id"])
    token_planning = st[(st["mode"] == "planning") & (st["time_unit"] == "tokens")]
    rate = token_planning["fallback"].astype(float).mean()
    assert 0 < rate < 0.5


def test_inspect_logs_load_and_match_inspects_reader():
    read_eval_log = pytest.importorskip("inspect_ai.log").read_eval_log

    path = REAL / "inspect"
    assert detect_format(path) == "inspect"
    res = rtanalysis.load(path)
    assert res.n_read == res.n_accepted + res.n_quarantined and res.n_quarantined == 0
    stopped, finished, n = set(), set(), 0
    for f in sorted(path.glob("*.eval")):
        log = read_eval_log(str(f))
        for s in log.samples:
            n += 1
            key = (log.eval.task, f"{s.id}#{s.epoch}")
            (stopped if s.limit is not None and s.limit.type in ("time", "working") else finished).add(key)
    assert len(res.episodes) == n and set(res.episodes["task_type"]) == {"reaction", "lookup"}
    assert stopped and finished  # the limits stopped some samples and not others
    st = res.steps.set_index(["task_type", "episode_id"])
    assert all(st.loc[k, "outcome"] == "silent" for k in stopped)
    assert all(st.loc[k, "latency"] > 0 for k in finished)
    # time_limit is the window; a working_limit gives none (inspect enforces it only at model calls)
    assert (st.loc["lookup", "window_close"] == 2).all() and st.loc["reaction", "window_close"].isna().all()
    assert (res.episodes["clock"] == "wall").all()


def test_slot_table_outcomes_match_a_hand_count():
    path = REAL / "response_slots" / "slots.csv"
    res = rtanalysis.load(path)
    assert detect_format(path) == "response-slots" and res.n_quarantined == 0
    counts = {"silent": 0, "wrong": 0, "early": 0, "late": 0, "ok": 0}
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:  # rtlog outcome: no response; wrong content (or invalid) whatever the timing; window
        if r["response_s"] == "":
            counts["silent"] += 1
        elif r["correct"] != "True" or r["invalid"] == "True":
            counts["wrong"] += 1
        elif float(r["response_s"]) < float(r["window_start_s"]):
            counts["early"] += 1
        elif float(r["response_s"]) > float(r["window_end_s"]):
            counts["late"] += 1
        else:
            counts["ok"] += 1
    got = res.steps["outcome"].value_counts()
    assert len(res.steps) == len(rows)
    assert {k: int(got.get(k, 0)) for k in counts} == counts


def test_terminal_bench_and_harbor_results_load_whole():
    """The runs written by terminal-bench's and harbor's own result models (mapping: test_adapters_terminal_bench)."""
    for fixture, fmt, n_files in (("terminal_bench", "terminal-bench", 3), ("harbor", "harbor", 48)):
        path = REAL / fixture
        assert detect_format(path) == fmt
        res = rtanalysis.load(path)
        assert res.n_read == res.n_accepted + res.n_quarantined and res.n_quarantined == 0
        assert len(res.files) == n_files and (res.episodes["clock"] == "wall").all()
        outcomes = set(res.steps["outcome"])
        assert {"ok", "wrong", "silent"} <= outcomes  # on time, a capability failure, a timeout or error


@pytest.mark.parametrize("fixture", ["realtimegym", "inspect", "response_slots", "terminal_bench", "harbor",
                                     "llm_colosseum"])
def test_ingest_exits_zero(fixture, tmp_path, capsys):
    if fixture == "inspect":
        pytest.importorskip("inspect_ai")
    path = REAL / fixture / "slots.csv" if fixture == "response_slots" else REAL / fixture
    code = cli.main(["ingest", str(path), "--out", str(tmp_path / "out")])
    assert code == 0
    summary = json.loads((tmp_path / "out" / "ingest.json").read_text())
    assert summary["n_read"] == summary["n_accepted"] + summary["n_quarantined"] > 0
