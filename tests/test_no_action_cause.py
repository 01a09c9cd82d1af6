"""Why no action came: a failed call (``no_action_cause`` error / other) is neither timing nor
capability. The loader marks it ``error``, the vocabulary does not count it as missed, the model's
aggregates leave it out (in memory and in DuckDB alike), and the reliability table counts it."""

import copy

import numpy as np
import pytest

from rtanalysis.io import load_rtlog
from rtanalysis.metrics import observed_decomposition, reliability_summary
from rtanalysis.model.data import aggregate
from rtanalysis.reporting.ingest import ingest
from rtanalysis.scale import aggregate_dataset
from rtanalysis.simulate import simulate
from tests.test_load_rules import _write
from tests.test_scale_dataset import assert_model_data_equal


def _episode(eid, steps, success=False, model="m"):
    return {"run_id": "r", "episode_id": eid, "model": model, "task_type": "t", "clock": "wall",
            "success": success, "steps": steps}


def _step(t, **fields):
    return {"t_obs": float(t), "window": [0, 1], **fields}


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    records = [
        # a timeout (cause given), a failed call, an on-time right action: timing
        _episode("e1", [_step(0, latency=0.5, correct_at_obs=True), _step(1, t_act=None, no_action_cause="timeout"),
                        _step(2, t_act=None, no_action_cause="error")]),
        # only a failed call: error, not timing
        _episode("e2", [_step(0, latency=0.5, correct_at_obs=True), _step(1, t_act=None, no_action_cause="error")]),
        # a default played because the harness stopped the call: error, not late
        _episode("e3", [_step(0, latency=1.0, fallback=True, no_action_cause="other", correct_at_obs=True)]),
        # no action, no cause: a timeout, as before the field existed
        _episode("e4", [_step(0, t_act=None)]),
        # a wrong action and a failed call: capability
        _episode("e5", [_step(0, latency=0.5, correct_at_obs=False), _step(1, t_act=None, no_action_cause="error")]),
    ]
    return load_rtlog(_write(tmp_path_factory.mktemp("cause"), records))


def test_outcomes_and_failure_types(loaded):
    st = loaded.steps
    assert list(st["outcome"]) == ["ok", "silent", "error", "ok", "error", "error", "silent", "wrong", "error"]
    assert list(st["no_action_cause"].fillna("-")) == ["-", "timeout", "error", "-", "error", "other", "-", "-",
                                                       "error"]
    err = st["outcome"] == "error"
    assert st.loc[err, "on_time"].isna().all() and not st.loc[err, "too_late"].fillna(False).any()
    assert list(loaded.episodes["failure_type"]) == ["timing", "error", "error", "timing", "capability"]


def test_decomposition_counts_errors_apart(loaded):
    d = observed_decomposition(loaded.episodes, by="model").set_index("failure_type")["count"]
    assert (d["timing"], d["error"], d["capability"]) == (2, 2, 1)


def test_reliability_by_hand(loaded):
    r = reliability_summary(loaded.episodes, loaded.steps, by="model").iloc[0]
    assert (r["n_decisions"], r["n_failed_call"], r["n_error"], r["n_other"], r["n_timeout"], r["n_cause_given"]) \
        == (9, 4, 3, 1, 2, 5)
    assert r["failed_call_rate"] == pytest.approx(4 / 9) and r["timeout_rate"] == pytest.approx(2 / 9)
    assert r["failed_call_rate_lo"] < 4 / 9 < r["failed_call_rate_hi"]
    assert r["share_episodes_with_failed_call"] == pytest.approx(4 / 5)


def _with_failed_calls(records, rng, share=0.1):
    """Copies of ``records`` where a share of the decisions became failed calls (no action, error)."""
    out = copy.deepcopy(records)
    for rec in out:
        for s in rec.get("steps") or []:
            if rng.random() < share:
                s.pop("t_act", None)
                s.pop("latency", None)
                s.pop("fallback", None)
                s.pop("valid_at_exec", None)
                s.pop("correct_at_obs", None)
                s["t_act"] = None
                s["no_action_cause"] = "error"
    return out


def test_model_leaves_failed_calls_out_in_memory_and_in_duckdb(tmp_path):
    """The aggregates of logs with failed calls equal those of the same logs with the failed calls
    deleted, and the DuckDB path gives the same as the in-memory one."""
    records = simulate("mixed", seed=5, tasks=3, seeds=2).records
    with_errors = _with_failed_calls(records, np.random.default_rng(0))
    without = copy.deepcopy(with_errors)
    for rec in without:
        rec["steps"] = [s for s in rec.get("steps") or [] if s.get("no_action_cause") != "error"]
    a = load_rtlog(_write(tmp_path, with_errors, "errors.jsonl"))
    b = load_rtlog(_write(tmp_path, without, "without.jsonl"))
    assert (a.steps["outcome"] == "error").sum() > 50
    assert_model_data_equal(aggregate(a.episodes, a.steps), aggregate(b.episodes, b.steps))
    result, _ = ingest([str(tmp_path / "errors.jsonl")], tmp_path / "ds", dataset=True)
    assert_model_data_equal(aggregate(result.episodes, result.steps), aggregate_dataset(tmp_path / "ds"))


def test_report_has_a_reliability_section_and_figure(tmp_path, loaded):
    from rtanalysis.cli import main

    src = loaded.files["path"].iloc[0]
    assert main(["report", src, "--out", str(tmp_path / "rep"), "--no-fit", "--quiet"]) == 0
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "## Failed calls (reliability)" in text
    assert "**m**: 44% [" in text and "(3 errors, 1 other)" in text
    assert list((tmp_path / "rep").rglob("reliability.png"))
