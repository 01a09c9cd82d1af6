"""Derived timing (on_time / too_early / too_late / no_action), decision outcome and failure type."""

import orjson
import pandas as pd
import pytest

from rtanalysis.io import load_rtlog

BASE = {"run_id": "r", "model": "m", "task_type": "t", "clock": "wall", "success": False}

# (step fields, clock, expected on_time, too_early, too_late, no_action, outcome)
CASES = [
    ({"t_obs": 0, "t_act": 0.5, "window": [0.2, 1], "correct_at_obs": True}, "wall", True, False, False, False, "ok"),
    ({"t_obs": 0, "t_act": 0.1, "window": [0.2, 1], "correct_at_obs": True}, "wall", False, True, False, False, "early"),
    ({"t_obs": 0, "t_act": 1.5, "window": [0.2, 1], "correct_at_obs": True}, "wall", False, False, True, False, "late"),
    ({"t_obs": 0, "t_act": 1.0, "window": [0.2, 1], "correct_at_obs": True}, "wall", True, False, False, False, "ok"),
    ({"t_obs": 0, "t_act": 1.5, "window": [0.2, 1], "correct_at_obs": False}, "wall", False, False, True, False, "wrong"),
    ({"t_obs": 0, "t_act": 1.5, "window": [0.2, 1]}, "wall", False, False, True, False, "late"),
    ({"t_obs": 0, "t_act": 0.5, "window": [0.2, 1]}, "wall", True, False, False, False, "unknown"),
    ({"t_obs": 0, "window": [0, 1], "correct_at_obs": True}, "wall", False, False, False, True, "silent"),
    ({"t_obs": 0, "t_act": None}, "wall", False, False, False, True, "silent"),
    ({"t_obs": 0, "t_act": 0.5, "correct_at_obs": True}, "wall", None, None, None, False, "unknown"),
    ({"t_obs": 0, "t_act": 0.5, "correct_at_obs": True, "valid_at_exec": False}, "wall", False, False, True, False, "late"),
    ({"t_obs": 0, "t_act": 0.5, "correct_at_obs": True, "valid_at_exec": True}, "wall", True, False, False, False, "ok"),
    ({"t_obs": 0, "t_act": 0.5, "window": [0, 1], "correct_at_obs": True, "valid_at_exec": False}, "wall", False, False, True, False, "late"),
    ({"t_obs": 0, "t_act": 0.5, "window": [0, 1], "correct_at_obs": True, "fallback": True}, "step", False, False, True, False, "late"),
    ({"t_obs": 0, "t_act": 9.0, "window": [0.2, 1], "correct_at_obs": True}, "paused", True, False, False, False, "ok"),
    ({"t_obs": 0, "t_act": 9.0, "window": [0.2, 1], "correct_at_obs": False}, "paused", True, False, False, False, "wrong"),
    ({"t_obs": 0, "latency": 120, "window": [0, 100], "correct_at_obs": True}, "step", False, False, True, False, "late"),
]


@pytest.mark.parametrize("step, clock, on_time, early, late, no_action, outcome", CASES)
def test_derived_timing(tmp_path, step, clock, on_time, early, late, no_action, outcome):
    path = tmp_path / "x.jsonl"
    path.write_bytes(orjson.dumps(dict(BASE, episode_id="e", clock=clock, steps=[step])) + b"\n")
    row = load_rtlog(path).steps.iloc[0]
    got = [row["on_time"], row["too_early"], row["too_late"]]
    assert [None if pd.isna(v) else bool(v) for v in got] == [on_time, early, late]
    assert bool(row["no_action"]) is no_action
    assert row["outcome"] == outcome


def _ep(eid, success, steps, clock="wall"):
    return dict(BASE, episode_id=eid, success=success, clock=clock, steps=steps)


OK = {"t_obs": 0, "t_act": 0.5, "window": [0, 1], "correct_at_obs": True}
WRONG = {"t_obs": 0, "t_act": 0.5, "window": [0, 1], "correct_at_obs": False}
LATE = {"t_obs": 0, "t_act": 2.0, "window": [0, 1], "correct_at_obs": True}
UNLABELLED_LATE = {"t_obs": 0, "t_act": 2.0, "window": [0, 1]}
NO_WINDOW = {"t_obs": 0, "t_act": 0.5, "correct_at_obs": True}


@pytest.mark.parametrize("success, steps, clock, expected", [
    (True, [OK, LATE], "wall", "none"),
    (False, [OK, WRONG], "wall", "capability"),
    (False, [OK, LATE], "wall", "timing"),
    (False, [WRONG, LATE], "wall", "both"),
    (False, [OK, OK], "wall", "unknown"),          # neither label explains the failure
    (False, [], "wall", "unknown"),
    (False, [LATE], "paused", "capability"),      # paused: a failure is capability by definition
    (False, [OK, UNLABELLED_LATE], "wall", "unknown"),  # late, but the late step's content is unknown
    # wrong content, but the other step's timing is undecidable: a timing miss cannot be excluded
    (False, [WRONG, NO_WINDOW], "wall", "unknown"),
])
def test_failure_type(tmp_path, success, steps, clock, expected):
    path = tmp_path / "x.jsonl"
    path.write_bytes(orjson.dumps(_ep("e", success, steps, clock)) + b"\n")
    res = load_rtlog(path)
    assert res.episodes["failure_type"][0] == expected


def test_n_fallback_and_step_index(tmp_path):
    fb = dict(OK, fallback=True)
    path = tmp_path / "x.jsonl"
    path.write_bytes(orjson.dumps(_ep("a", False, [OK, fb, fb])) + b"\n" + orjson.dumps(_ep("b", True, [OK])) + b"\n")
    res = load_rtlog(path)
    assert res.episodes["n_fallback"].tolist() == [2, 0]
    assert res.episodes["n_steps"].tolist() == [3, 1]
    assert res.steps["step"].tolist() == [0, 1, 2, 0]
    assert res.steps["episode_id"].tolist() == ["a", "a", "a", "b"]
