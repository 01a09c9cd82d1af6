"""Every rule of rtlog v1: a record that breaks it is quarantined with the field and the reason."""

import copy

import orjson
import pytest

from rtanalysis.io import load_rtlog
from tests.conftest import GOOD_EPISODE


def _set(path, value):
    def mutate(rec):
        *parents, last = path
        obj = rec
        for p in parents:
            obj = obj[p]
        if value is _DELETE:
            del obj[last]
        else:
            obj[last] = value
    return mutate


_DELETE = object()

# (id, mutation, field quarantined, words the reason must contain)
RULES = [
    ("schema-other", _set(["schema"], "rtlog/2"), "schema", "unsupported schema"),
    ("run_id-missing", _set(["run_id"], _DELETE), "run_id", "missing"),
    ("run_id-number", _set(["run_id"], 7), "run_id", "must be a string"),
    ("run_id-empty", _set(["run_id"], ""), "run_id", "empty"),
    ("episode_id-missing", _set(["episode_id"], _DELETE), "episode_id", "missing"),
    ("model-missing", _set(["model"], _DELETE), "model", "missing"),
    ("model-list", _set(["model"], ["a"]), "model", "must be a string"),
    ("task-number", _set(["task"], 3), "task", "must be a string"),
    ("task_type-missing", _set(["task_type"], _DELETE), "task_type", "missing"),
    ("clock-missing", _set(["clock"], _DELETE), "clock", "missing"),
    ("clock-unknown", _set(["clock"], "realtime"), "clock", "must be one of wall, paused, step"),
    ("time_unit-unknown", _set(["time_unit"], "ms"), "time_unit", "'s' or 'tokens'"),
    ("conditions-list", _set(["conditions"], [1]), "conditions", "must be an object"),
    ("conditions-bool", _set(["conditions", "x"], True), "conditions.x", "string or a number"),
    ("conditions-nested", _set(["conditions", "x"], {"a": 1}), "conditions.x", "string or a number"),
    ("seed-float", _set(["seed"], 3.5), "seed", "must be an integer"),
    ("seed-string", _set(["seed"], "3"), "seed", "must be an integer"),
    ("success-missing", _set(["success"], _DELETE), "success", "missing"),
    ("success-int", _set(["success"], 1), "success", "must be a boolean"),
    ("score-string", _set(["score"], "high"), "score", "must be a number"),
    ("score-bool", _set(["score"], True), "score", "must be a number"),
    ("steps-object", _set(["steps"], {"t_obs": 0}), "steps", "must be an array"),
    ("meta-string", _set(["meta"], "x"), "meta", "must be an object"),
    ("step-not-object", _set(["steps", 1], 5), "steps[1]", "must be an object"),
    ("t_obs-missing", _set(["steps", 0, "t_obs"], _DELETE), "steps[0].t_obs", "missing"),
    ("t_obs-negative", _set(["steps", 0, "t_obs"], -0.1), "steps[0].t_obs", ">= 0"),
    ("t_obs-string", _set(["steps", 0, "t_obs"], "0"), "steps[0].t_obs", "must be a number"),
    ("steps-out-of-order", _set(["steps", 1, "t_obs"], 0.0) , None, None),  # equal t_obs is allowed
    ("t_act-before-t_obs", _set(["steps", 1, "t_act"], 0.5), "steps[1].t_act", ">= t_obs"),
    ("t_act-string", _set(["steps", 1, "t_act"], "late"), "steps[1].t_act", "number or null"),
    ("latency-negative", _set(["steps", 0, "latency"], -1), "steps[0].latency", ">= 0"),
    ("latency-disagrees", _set(["steps", 0, "latency"], 0.5), "steps[0].latency", "agree within 1 ms"),
    ("window-short", _set(["steps", 0, "window"], [0.8]), "steps[0].window", "[open, close]"),
    ("window-open-after-close", _set(["steps", 0, "window"], [0.9, 0.8]), "steps[0].window", "open <= close"),
    ("window-negative", _set(["steps", 0, "window"], [-0.1, 0.8]), "steps[0].window", "0 <= open"),
    ("window-null-entry", _set(["steps", 0, "window"], [None, 0.8]), "steps[0].window", "[open, close]"),
    ("action-number", _set(["steps", 0, "action"], 1), "steps[0].action", "must be a string"),
    ("correct-string", _set(["steps", 0, "correct_at_obs"], "yes"), "steps[0].correct_at_obs", "boolean"),
    ("valid-int", _set(["steps", 1, "valid_at_exec"], 0), "steps[1].valid_at_exec", "boolean"),
    ("fallback-string", _set(["steps", 0, "fallback"], "no"), "steps[0].fallback", "boolean"),
    ("tokens-negative", _set(["steps", 0, "tokens"], -3), "steps[0].tokens", "integer >= 0"),
    ("tokens-float", _set(["steps", 0, "tokens"], 2.5), "steps[0].tokens", "integer >= 0"),
    ("reward-string", _set(["steps", 0, "reward"], "1"), "steps[0].reward", "must be a number"),
    ("no_action_cause-unknown", _set(["steps", 0, "no_action_cause"], "crash"), "steps[0].no_action_cause",
     "must be one of timeout, error, other"),
    ("no_action_cause-acted", _set(["steps", 0, "no_action_cause"], "error"), "steps[0].no_action_cause",
     "the decision acted"),
    ("ended-unknown", _set(["ended"], "timeout"), "ended", "must be one of horizon, failure, cut"),
    ("ended-failure-but-success", lambda r: r.update(ended="failure", success=True), "ended",
     "is failure but success is true"),
]


def _write(tmp_path, records, name="log.jsonl"):
    path = tmp_path / name
    with open(path, "wb") as fh:
        for r in records:
            fh.write(r if isinstance(r, bytes) else orjson.dumps(r))
            fh.write(b"\n")
    return path


@pytest.mark.parametrize("mutate, field, words", [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_rule_quarantines_with_reason(tmp_path, mutate, field, words):
    bad = copy.deepcopy(GOOD_EPISODE)
    bad["episode_id"] = "bad"
    mutate(bad)
    path = _write(tmp_path, [GOOD_EPISODE, bad])
    res = load_rtlog(path)
    if field is None:  # the mutation is legal
        assert res.n_quarantined == 0 and res.n_accepted == 2
        return
    assert (res.n_read, res.n_accepted, res.n_quarantined) == (2, 1, 1)
    q = res.quarantine.iloc[0]
    assert q["file"] == str(path)
    assert q["line"] == 2
    assert q["field"] == field
    assert words in q["reason"], q["reason"]
    assert list(res.episodes["episode_id"]) == ["e1"]


def test_steps_out_of_order(tmp_path):
    bad = copy.deepcopy(GOOD_EPISODE)
    bad["steps"][1]["t_obs"] = -0.0
    bad["steps"][0]["t_obs"] = 0.3
    bad["steps"][0]["t_act"] = 0.5
    res = load_rtlog(_write(tmp_path, [bad]))
    assert res.quarantine["field"].tolist() == ["steps[1].t_obs"]
    assert "in order" in res.quarantine["reason"][0]


def test_not_json_and_not_object(tmp_path):
    res = load_rtlog(_write(tmp_path, [b"{not json", b"[1, 2]", b'"text"', GOOD_EPISODE]))
    assert (res.n_read, res.n_accepted, res.n_quarantined) == (4, 1, 3)
    assert res.quarantine["line"].tolist() == [1, 2, 3]
    assert "not valid JSON" in res.quarantine["reason"][0]
    assert "must be a JSON object" in res.quarantine["reason"][1]


def test_nan_is_not_json(tmp_path):
    line = orjson.dumps(GOOD_EPISODE).replace(b'"score":0.5', b'"score":NaN')
    res = load_rtlog(_write(tmp_path, [line]))
    assert res.n_quarantined == 1 and "not valid JSON" in res.quarantine["reason"][0]


def test_duplicate_keeps_first(tmp_path):
    second = copy.deepcopy(GOOD_EPISODE)
    second["success"] = True
    path = _write(tmp_path, [GOOD_EPISODE, second, second])
    res = load_rtlog(path)
    assert (res.n_read, res.n_accepted, res.n_quarantined) == (3, 1, 2)
    assert res.episodes["success"].tolist() == [False]
    assert res.quarantine["field"].tolist() == ["episode_id", "episode_id"]
    assert f"first seen at {path}:1" in res.quarantine["reason"][0]


def test_same_episode_id_other_run_is_fine(tmp_path):
    other = copy.deepcopy(GOOD_EPISODE)
    other["run_id"] = "r2"
    res = load_rtlog(_write(tmp_path, [GOOD_EPISODE, other]))
    assert res.n_accepted == 2


def test_latency_only_and_agreeing_both(tmp_path):
    rec = copy.deepcopy(GOOD_EPISODE)
    del rec["steps"][0]["t_act"]
    rec["steps"][0]["latency"] = 0.41
    rec["steps"][1]["latency"] = 1.1505  # within 1 ms of t_act - t_obs = 1.15
    res = load_rtlog(_write(tmp_path, [rec]))
    assert res.n_quarantined == 0
    assert res.steps["t_act"].tolist() == pytest.approx([0.41, 1.95])
    # "latency if given": the stated latency wins over t_act - t_obs when both agree within 1 ms
    assert res.steps["latency"].tolist() == pytest.approx([0.41, 1.1505])


def test_null_t_act_with_latency_is_a_contradiction(tmp_path):
    rec = copy.deepcopy(GOOD_EPISODE)
    rec["steps"][0]["t_act"] = None
    rec["steps"][0]["latency"] = 0.3
    res = load_rtlog(_write(tmp_path, [rec]))
    assert res.quarantine["field"].tolist() == ["steps[0].t_act"]


def test_optional_fields_absent_or_null(tmp_path):
    rec = {k: GOOD_EPISODE[k] for k in ("run_id", "episode_id", "model", "task_type", "clock", "success")}
    rec2 = dict(rec, episode_id="e2", task=None, seed=None, score=None, steps=None, conditions=None, meta=None)
    res = load_rtlog(_write(tmp_path, [rec, rec2]))
    assert res.n_accepted == 2
    assert res.episodes["n_steps"].tolist() == [0, 0]
    assert res.episodes["time_unit"].tolist() == ["s", "s"]
    assert res.episodes["seed"].isna().all() and res.episodes["task"].isna().all()
    assert len(res.steps) == 0


def test_bad_input_never_raises(tmp_path):
    junk = [b"\xff\xfe", b"{", b"null", b"{}", b'{"steps": [null]}', b"1e999", b'{"run_id": {}}']
    res = load_rtlog(_write(tmp_path, junk))
    assert res.n_read == len(junk) == res.n_quarantined
    assert res.quarantine["reason"].str.len().gt(0).all()
