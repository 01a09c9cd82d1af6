"""Terminal-Bench and Harbor results (tests/data/real/terminal_bench, tests/data/real/harbor) → rtlog tables.

The fixtures were written by the harnesses' own result models (make_terminal_bench.py, make_harbor.py);
expected values are computed here from the raw JSON with json/datetime/yaml/tomllib.
"""

import json
import shutil
import tomllib
from datetime import datetime
from pathlib import Path

import pytest
import yaml

import rtanalysis
from rtanalysis.adapters import detect_format, to_rtlog

REAL = Path(__file__).parent / "data" / "real"
TB = REAL / "terminal_bench"
HARBOR = REAL / "harbor"
TB_ERRORS = {"unknown_agent_error", "context_length_exceeded", "output_length_exceeded", "fatal_llm_parse_error",
             "agent_installation_failed"}


def _seconds(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def _tb_trials():
    for f in sorted(TB.glob("runs/*/results.json")):
        for i, t in enumerate(json.loads(f.read_text())["results"]):
            yield f.parent.name, i, t


def _tb_limit(task: str) -> float:
    return float(yaml.safe_load((TB / "tasks" / task / "task.yaml").read_text())["max_agent_timeout_sec"])


def _expected(resolved, timed_out: bool, error: str | None, latency: float | None) -> dict:
    """What one trial's decision should be: outcome-level fields (None = absent)."""
    if resolved and latency is not None:
        return {"latency": latency, "correct": True, "success": not timed_out, "cause": None}
    if timed_out or error:
        return {"latency": None, "correct": None, "success": False, "cause": "timeout" if timed_out else error}
    return {"latency": latency, "correct": resolved, "success": bool(resolved), "cause": None}


def _records(path, **options) -> tuple[dict, rtanalysis.LoadResult]:
    """The rtlog records the adapter writes (no_action_cause is not a table column yet), by episode."""
    out = Path(options.pop("tmp")) / "out.jsonl"
    res = to_rtlog(path, out, **options)
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    return {(r["run_id"], r["episode_id"]): r for r in recs}, res


@pytest.fixture(scope="module")
def tb():
    return rtanalysis.load(TB)


def test_tb_detected_and_counts_reconcile(tb):
    run = next(TB.glob("runs/*/results.json"))
    assert detect_format(TB) == detect_format(run) == detect_format(run.parent) == "terminal-bench"
    n_trials = sum(1 for _ in _tb_trials())
    # per-trial results.json files repeat the run's trials: they are not read a second time
    assert len(list(TB.glob("runs/*/*/*/results.json"))) == n_trials
    assert tb.n_read == tb.n_accepted + tb.n_quarantined == n_trials and tb.n_quarantined == 0
    assert len(tb.files) == 3


def test_tb_trials_map_as_the_raw_json_says(tb, tmp_path):
    recs, _ = _records(TB, tmp=tmp_path)
    st = tb.steps.set_index(["run_id", "episode_id"])
    ep = tb.episodes.set_index(["run_id", "episode_id"])
    seen = set()
    for run_id, _, t in _tb_trials():
        key = (run_id, t["trial_name"])
        mode = t["failure_mode"]
        latency = (_seconds(t["agent_started_at"], t["agent_ended_at"])
                   if t["agent_started_at"] and t["agent_ended_at"] else None)
        want = _expected(t["is_resolved"], mode == "agent_timeout", "error" if mode in TB_ERRORS else None, latency)
        row, step = st.loc[key], recs[key]["steps"][0]
        assert row["window_close"] == _tb_limit(t["task_id"]) and row["window_open"] == 0 and row["t_obs"] == 0
        assert ep.loc[key, "success"] == want["success"]
        assert ep.loc[key, "task"] == t["task_id"] and ep.loc[key, "clock"] == "wall"
        assert step.get("no_action_cause") == want["cause"]
        if want["latency"] is None:  # a timeout is timing (silent); a failed call is not (error)
            assert row["no_action"] and row["outcome"] == ("silent" if want["cause"] == "timeout" else "error")
        else:
            assert row["latency"] == pytest.approx(want["latency"])
            assert step.get("correct_at_obs") == want["correct"]
        seen.add(mode)
    assert {"unset", "agent_timeout", "parse_error", "unknown_agent_error"} <= seen
    meta = json.loads(ep.iloc[0]["meta"])
    assert meta["source"] == "terminal-bench" and meta["time_limit_source"].endswith("task.yaml")
    assert set(ep["model"]) == {"openai/gpt-5-mini", "anthropic/claude-sonnet-4-5", "deepseek/deepseek-chat"}
    assert set(ep["task_type"]) == {"system-administration", "data-processing", "software-engineering",
                                    "machine-learning", "data-science"}


def test_tb_right_but_late_and_silent_timeouts(tb):
    st = tb.steps.merge(tb.episodes[["run_id", "episode_id", "success", "meta"]], on=["run_id", "episode_id"])
    mode = st["meta"].map(lambda m: json.loads(m)["failure_mode"])
    resolved = st["meta"].map(lambda m: json.loads(m)["is_resolved"])
    late_right = st[(mode == "agent_timeout") & (resolved == True)]  # noqa: E712 (a column of objects)
    assert len(late_right) and (late_right["outcome"] == "late").all() and not late_right["success"].any()
    assert (late_right["latency"] > late_right["window_close"]).all() and late_right["correct_at_obs"].all()
    cut_off = st[(mode == "agent_timeout") & (resolved != True)]  # noqa: E712
    assert len(cut_off) and (cut_off["outcome"] == "silent").all()


# --- the time-limit lookup ------------------------------------------------------------------


def _copy_run(tmp: Path, with_tasks: bool = False, **lock) -> Path:
    """A copy of one run whose recorded dataset is nowhere on this machine; ``lock``: run_config edits."""
    src = sorted(TB.glob("runs/*"))[0]
    run = tmp / "x" / "runs" / src.name
    shutil.copytree(src, run)
    if with_tasks:
        shutil.copytree(TB / "tasks", tmp / "x" / "tasks")
    meta = json.loads((run / "run_metadata.json").read_text())
    meta.update(dataset_path="/nowhere/x/tasks", output_path="/nowhere/x/runs")
    (run / "run_metadata.json").write_text(json.dumps(meta))
    tb_lock = json.loads((run / "tb.lock").read_text())
    tb_lock["dataset"]["local_path"] = "/nowhere/x/tasks"
    tb_lock["local_config"]["output_path"] = "/nowhere/x/runs"
    tb_lock["run_config"].update(lock)
    (run / "tb.lock").write_text(json.dumps(tb_lock))
    return run


def test_tb_limit_unknown_quarantines_naming_the_field(tmp_path):
    run = _copy_run(tmp_path)
    res = rtanalysis.load(run)
    assert res.n_read == res.n_quarantined == 24 and res.n_accepted == 0
    q = res.quarantine.iloc[0]
    assert q["file"] == str(run / "results.json") and q["line"] == 1
    assert q["field"] == "results[0].max_agent_timeout_sec" and "time_limit=" in q["reason"]


def test_tb_limit_lookup_order(tmp_path):
    run = _copy_run(tmp_path)
    by_arg = rtanalysis.load(run, time_limit=500)
    assert by_arg.n_accepted == 24 and (by_arg.steps["window_close"] == 500).all()
    mixed = rtanalysis.load(run, time_limit={"fix-permissions": 100}, tasks_dir=TB / "tasks")
    close = mixed.steps.merge(mixed.episodes[["run_id", "episode_id", "task"]]).groupby("task")["window_close"].max()
    assert close["fix-permissions"] == 100 and close["sqlite-recovery"] == _tb_limit("sqlite-recovery")
    relocated = _copy_run(tmp_path / "moved", with_tasks=True, global_timeout_multiplier=2.0)
    found = rtanalysis.load(relocated)  # the dataset where it sat relative to the runs folder, times the multiplier
    close = found.steps.merge(found.episodes[["run_id", "episode_id", "task"]]).groupby("task")["window_close"].max()
    assert close["csv-to-parquet"] == 2 * _tb_limit("csv-to-parquet")
    glob_run = _copy_run(tmp_path / "global", global_agent_timeout_sec=777.0)
    first = rtanalysis.load(glob_run, time_limit=500, tasks_dir=TB / "tasks")  # the run's own setting wins
    assert (first.steps["window_close"] == 777).all()
    assert json.loads(first.episodes["meta"].iloc[0])["time_limit_source"] == "tb.lock global_agent_timeout_sec"


# --- broken copies and edge cases -------------------------------------------------------------


def _edit_trial(run: Path, index: int, **fields) -> dict:
    data = json.loads((run / "results.json").read_text())
    data["results"][index].update(fields)
    (run / "results.json").write_text(json.dumps(data))
    return data["results"][index]


def _first_index(run: Path, pred) -> int:
    return next(i for i, t in enumerate(json.loads((run / "results.json").read_text())["results"]) if pred(t))


def test_tb_bad_timestamp_is_quarantined_with_file_and_field(tmp_path):
    run = _copy_run(tmp_path)
    i = _first_index(run, lambda t: t["agent_ended_at"] is not None)
    trial = _edit_trial(run, i, agent_ended_at="yesterday-ish")
    j = _first_index(run, lambda t: t["agent_started_at"] is not None and t["trial_name"] != trial["trial_name"])
    _edit_trial(run, j, agent_ended_at="2020-01-01T00:00:00+00:00")  # before the start
    res = rtanalysis.load(run, time_limit=600)
    assert res.n_read == 24 and res.n_quarantined == 2 and res.n_read == res.n_accepted + res.n_quarantined
    q = res.quarantine.set_index("line")
    assert q.loc[i + 1, "file"] == str(run / "results.json")
    assert q.loc[i + 1, "field"] == f"results[{i}].agent_ended_at" and "ISO 8601" in q.loc[i + 1, "reason"]
    assert q.loc[j + 1, "field"] == f"results[{j}].agent_ended_at" and "before it started" in q.loc[j + 1, "reason"]
    (run / "results.json").write_text('{"id": "x", "results": [{"trial_name": ')  # truncated
    res = rtanalysis.load(run / "results.json", format="terminal-bench", time_limit=600)
    assert res.n_read == res.n_quarantined == 1 and res.quarantine["field"].tolist() == ["<file>"]


def test_tb_timeout_without_end_is_silent_and_errors_are_not_timing(tmp_path):
    run = _copy_run(tmp_path)
    i = _first_index(run, lambda t: t["failure_mode"] == "unset" and t["agent_ended_at"])
    trial = _edit_trial(run, i, failure_mode="agent_timeout", agent_ended_at=None, is_resolved=None)
    k = _first_index(run, lambda t: t["failure_mode"] == "unset" and t["is_resolved"] is False)
    _edit_trial(run, k, failure_mode="unknown", is_resolved=False)
    recs, res = _records(run, tmp=tmp_path, time_limit=600)
    assert res.n_quarantined == 0
    step = recs[(run.name, trial["trial_name"])]["steps"][0]
    assert step["t_act"] is None and step["no_action_cause"] == "timeout" and "latency" not in step
    errors = [r for r in recs.values() if r["meta"]["failure_mode"] in TB_ERRORS and not r["meta"]["is_resolved"]]
    assert errors and all(r["steps"][0]["no_action_cause"] == "error" for r in errors)
    other = [r for r in recs.values() if r["meta"]["failure_mode"] == "unknown"]
    assert len(other) == 1 and other[0]["steps"][0]["no_action_cause"] == "other"


def test_tb_model_argument_fills_in_only_when_the_run_lacks_it(tmp_path):
    run = _copy_run(tmp_path)
    for name in ("run_metadata.json", "tb.lock"):
        (run / name).unlink()
    with pytest.raises(ValueError, match="model='NAME'"):
        rtanalysis.load(run, time_limit=600)
    res = rtanalysis.load(run, time_limit=600, model="my-model")
    assert set(res.episodes["model"]) == {"my-model"} and set(res.episodes["task_type"]) == {"terminal-bench"}
    assert set(res.episodes["run_id"]) == {run.name}


def test_tb_trial_files_are_read_when_the_run_file_is_missing(tmp_path):
    run = _copy_run(tmp_path)
    (run / "results.json").unlink()
    res = rtanalysis.load(run, time_limit=600)
    assert res.n_read == res.n_accepted == 24 and len(res.files) == 24


# --- harbor ---------------------------------------------------------------------------------


def _harbor_trials():
    for f in sorted(HARBOR.glob("jobs/*/*/result.json")):
        yield f, json.loads(f.read_text())


@pytest.fixture(scope="module")
def harbor():
    return rtanalysis.load(HARBOR)


def test_harbor_detected_and_counts_reconcile(harbor):
    trial = next(HARBOR.glob("jobs/*/*/result.json"))
    assert detect_format(HARBOR) == detect_format(trial) == detect_format(trial.parent.parent) == "harbor"
    n = sum(1 for _ in _harbor_trials())
    assert harbor.n_read == harbor.n_accepted + harbor.n_quarantined == n and harbor.n_quarantined == 0


def test_harbor_trials_map_as_the_raw_json_says(harbor, tmp_path):
    recs, _ = _records(HARBOR, tmp=tmp_path)
    st = harbor.steps.set_index(["run_id", "episode_id"])
    ep = harbor.episodes.set_index(["run_id", "episode_id"])
    kinds = set()
    for _, t in _harbor_trials():
        key = (Path(t["config"]["trials_dir"]).name, t["trial_name"])
        exc = (t["exception_info"] or {}).get("exception_type")
        rewards = (t["verifier_result"] or {}).get("rewards")
        resolved = None if not rewards else rewards["reward"] >= 0.5
        run = t["agent_execution"] or {}
        latency = _seconds(run["started_at"], run["finished_at"]) if run.get("finished_at") else None
        error = None if exc in (None, "AgentTimeoutError", "RewardFileNotFoundError") else "error"
        want = _expected(resolved, exc == "AgentTimeoutError", error, latency)
        toml = tomllib.loads((HARBOR / t["config"]["task"]["path"] / "task.toml").read_text())
        row, step = st.loc[key], recs[key]["steps"][0]
        assert row["window_close"] == toml["agent"]["timeout_sec"]
        assert ep.loc[key, "task_type"] == toml["metadata"]["category"]
        assert ep.loc[key, "model"] == "/".join([t["agent_info"]["model_info"]["provider"],
                                                 t["agent_info"]["model_info"]["name"]])
        assert ep.loc[key, "success"] == want["success"] and step.get("no_action_cause") == want["cause"]
        if want["latency"] is None:
            assert row["outcome"] == ("silent" if want["cause"] == "timeout" else "error")
        else:
            assert row["latency"] == pytest.approx(want["latency"]) and step.get("correct_at_obs") == want["correct"]
        kinds.add(exc)
    assert {None, "AgentTimeoutError", "RewardFileNotFoundError", "NonZeroAgentExitCodeError"} <= kinds


def test_harbor_limit_lookup(tmp_path):
    job = sorted(HARBOR.glob("jobs/*"))[0]
    copy = tmp_path / "elsewhere" / job.name
    shutil.copytree(job, copy)
    lost = rtanalysis.load(copy)  # its recorded task path (tasks/<task>, relative) is not next to the copy
    assert lost.n_read == lost.n_quarantined > 0
    assert set(lost.quarantine["field"]) == {"config.agent.override_timeout_sec"}
    assert rtanalysis.load(copy, tasks_dir=HARBOR / "tasks").n_quarantined == 0
    f = sorted(copy.glob("*/result.json"))[0]
    raw = json.loads(f.read_text())
    raw["config"]["agent"]["override_timeout_sec"] = 50.0
    raw["config"]["agent_timeout_multiplier"] = 3.0
    f.write_text(json.dumps(raw))
    res = rtanalysis.load(f, time_limit=999)
    assert res.steps["window_close"].tolist() == [150.0]
    raw["agent_execution"]["started_at"] = 12
    f.write_text(json.dumps(raw))
    bad = rtanalysis.load(f, time_limit=999)
    assert bad.quarantine[["file", "field"]].values.tolist() == [[str(f), "agent_execution.started_at"]]


def test_cli_ingest_takes_the_time_limit_options(tmp_path):
    from rtanalysis import cli

    run = _copy_run(tmp_path)
    code = cli.main(["ingest", str(run), "--out", str(tmp_path / "out"), "--time-limit", "600"])
    summary = json.loads((tmp_path / "out" / "ingest.json").read_text())
    assert code == 0 and summary["n_accepted"] == 24
