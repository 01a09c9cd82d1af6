"""The reference validator of one rtlog v1 record: every rule of docs/reference/rtlog-v1.md, in Python.

The columnar fast path (:mod:`.sink`) decides acceptance; this validator explains, naming the field
and the reason, every record the fast path rejects (:func:`explain`).
"""

from __future__ import annotations

import math

import orjson

from .. import schema
from ..errors import RecordError

LATENCY_TOLERANCE = 1e-3  # t_act - t_obs and latency must agree within 1 ms

_NUM = (int, float)
_EPISODE_REQUIRED_STR = ("run_id", "episode_id", "model", "task_type")
_STEP_BOOLS = ("correct_at_obs", "valid_at_exec", "fallback")


def _is_num(x) -> bool:
    return type(x) in _NUM and math.isfinite(x)


def _opt_str(rec: dict, name: str):
    v = rec.get(name)
    if v is None or type(v) is str:
        return v
    raise RecordError(name, f"must be a string, got {_jtype(v)}")


def _jtype(v) -> str:
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(v), "null" if v is None else type(v).__name__
    )


def validate_episode(rec) -> dict:
    """Check one decoded record against rtlog v1; return its normalised episode fields.

    Raises :class:`~rtanalysis.errors.RecordError` naming the first rule broken.
    """
    if type(rec) is not dict:
        raise RecordError("<record>", f"a record must be a JSON object, got {_jtype(rec)}")
    sch = rec.get("schema")
    if sch is not None and sch != "rtlog/1":
        raise RecordError("schema", f"unsupported schema {sch!r} (this reader knows 'rtlog/1')")
    for name in _EPISODE_REQUIRED_STR:
        v = rec.get(name)
        if v is None:
            raise RecordError(name, "required field is missing")
        if type(v) is not str:
            raise RecordError(name, f"must be a string, got {_jtype(v)}")
        if not v:
            raise RecordError(name, "must not be empty")
    clock, unit, success = _episode_clock_unit_success(rec)
    task = _opt_str(rec, "task")
    return {
        "run_id": rec["run_id"],
        "episode_id": rec["episode_id"],
        "model": rec["model"],
        "task": task,
        "task_type": rec["task_type"],
        "clock": clock,
        "time_unit": unit,
        "success": success,
        **_episode_optional_fields(rec),
    }


def _episode_clock_unit_success(rec: dict) -> tuple[str, str, bool]:
    clock = rec.get("clock")
    if clock is None:
        raise RecordError("clock", "required field is missing")
    if clock not in schema.CLOCKS:
        raise RecordError("clock", f"must be one of wall, paused, step; got {clock!r}")
    unit = rec.get("time_unit")
    if unit is None:
        unit = "s"
    elif unit not in schema.TIME_UNITS:
        raise RecordError("time_unit", f"must be 's' or 'tokens'; got {unit!r}")
    success = rec.get("success")
    if success is None:
        raise RecordError("success", "required field is missing")
    if type(success) is not bool:
        raise RecordError("success", f"must be a boolean, got {_jtype(success)}")
    return clock, unit, success


def _episode_optional_fields(rec: dict) -> dict:
    """seed, score, ended, conditions, meta and steps (an empty list when absent), checked in that order."""
    seed = rec.get("seed")
    if seed is not None and type(seed) is not int:
        raise RecordError("seed", f"must be an integer, got {_jtype(seed) if type(seed) is not float else 'non-integer number'}")
    score = rec.get("score")
    if score is not None and not _is_num(score):
        raise RecordError("score", f"must be a number, got {_jtype(score)}")
    ended = rec.get("ended")
    if ended is not None and ended not in schema.ENDINGS:
        raise RecordError("ended", f"must be one of {', '.join(schema.ENDINGS)}; got {orjson.dumps(ended).decode()[:40]}")
    if ended == "failure" and rec.get("success") is True:
        raise RecordError("ended", "is failure but success is true (an episode its failure ended did not succeed)")
    cond = rec.get("conditions")
    if cond is not None:
        if type(cond) is not dict:
            raise RecordError("conditions", f"must be an object, got {_jtype(cond)}")
        for k, v in cond.items():
            if not (type(v) is str or _is_num(v)):
                raise RecordError(f"conditions.{k}", f"must be a string or a number, got {_jtype(v)}")
    meta = rec.get("meta")
    if meta is not None and type(meta) is not dict:
        raise RecordError("meta", f"must be an object, got {_jtype(meta)}")
    steps = rec.get("steps")
    if steps is None:
        steps = []
    elif type(steps) is not list:
        raise RecordError("steps", f"must be an array, got {_jtype(steps)}")
    return {"seed": seed, "score": score, "ended": ended, "conditions": cond, "meta": meta, "steps": steps}


def validate_steps(steps: list) -> list[tuple]:
    """Check every decision (the reference rules; raises :class:`~rtanalysis.errors.RecordError` naming the
    first broken)."""
    out = []
    prev_obs = -1.0
    for i, s in enumerate(steps):
        if type(s) is not dict:
            raise RecordError(f"steps[{i}]", f"a step must be an object, got {_jtype(s)}")
        t_obs = s.get("t_obs")
        if t_obs is None:
            raise RecordError(f"steps[{i}].t_obs", "required field is missing")
        if not _is_num(t_obs):
            raise RecordError(f"steps[{i}].t_obs", f"must be a number, got {_jtype(t_obs)}")
        if t_obs < 0:
            raise RecordError(f"steps[{i}].t_obs", f"must be >= 0, got {t_obs}")
        if t_obs < prev_obs:
            raise RecordError(f"steps[{i}].t_obs", f"steps must be in order: t_obs {t_obs} is before the previous step's {prev_obs}")
        prev_obs = t_obs
        t_act, lat = _step_action_time(i, s, t_obs)
        w_open, w_close = _step_window(i, s.get("window"))
        labels = _step_labels(i, s)
        out.append((t_obs, t_act, lat, w_open, w_close, *labels, _no_action_cause(i, s, lat, labels[3])))
    return out


def _step_action_time(i: int, s: dict, t_obs: float) -> tuple:
    """(t_act, latency) of step ``i``, each completed from the other when only one is given."""
    t_act = s.get("t_act")
    lat = s.get("latency")
    if t_act is not None:
        if not _is_num(t_act):
            raise RecordError(f"steps[{i}].t_act", f"must be a number or null, got {_jtype(t_act)}")
        if t_act < t_obs:
            raise RecordError(f"steps[{i}].t_act", f"must be >= t_obs ({t_obs}), got {t_act}")
    if lat is None:
        return t_act, (None if t_act is None else t_act - t_obs)
    if not _is_num(lat):
        raise RecordError(f"steps[{i}].latency", f"must be a number, got {_jtype(lat)}")
    if lat < 0:
        raise RecordError(f"steps[{i}].latency", f"must be >= 0, got {lat}")
    if t_act is not None:
        if abs((t_act - t_obs) - lat) > LATENCY_TOLERANCE:
            raise RecordError(
                f"steps[{i}].latency",
                f"disagrees with t_act - t_obs = {t_act - t_obs:.6g} (given {lat}); they must agree within 1 ms",
            )
        return t_act, lat
    if "t_act" in s:
        raise RecordError(f"steps[{i}].t_act", "is null (no action) but latency is given")
    return t_obs + lat, lat


def _no_action_cause(i: int, s: dict, lat, fallback) -> str | None:
    """Why no action came: given only where none came (no latency) or a default was played instead."""
    cause = s.get("no_action_cause")
    if cause is None:
        return None
    if cause not in schema.NO_ACTION_CAUSES:
        raise RecordError(f"steps[{i}].no_action_cause",
                          f"must be one of {', '.join(schema.NO_ACTION_CAUSES)}; got {orjson.dumps(cause).decode()[:40]}")
    if lat is not None and fallback is not True:
        raise RecordError(f"steps[{i}].no_action_cause",
                          "is given but the decision acted (give it only with no action or with fallback: true)")
    return cause


def _step_window(i: int, w) -> tuple:
    if w is None:
        return None, None
    if type(w) is not list or len(w) != 2 or not _is_num(w[0]) or not _is_num(w[1]):
        raise RecordError(f"steps[{i}].window", f"must be [open, close] numbers, got {orjson.dumps(w).decode()[:80]}")
    w_open, w_close = w
    if not 0 <= w_open <= w_close:
        raise RecordError(f"steps[{i}].window", f"must satisfy 0 <= open <= close, got [{w_open}, {w_close}]")
    return w_open, w_close


def _step_labels(i: int, s: dict) -> tuple:
    """(action, correct_at_obs, valid_at_exec, fallback, tokens, reward) of step ``i``."""
    action = s.get("action")
    if action is not None and type(action) is not str:
        raise RecordError(f"steps[{i}].action", f"must be a string, got {_jtype(action)}")
    flags = []
    for name in _STEP_BOOLS:
        v = s.get(name)
        if v is not None and type(v) is not bool:
            raise RecordError(f"steps[{i}].{name}", f"must be a boolean, got {_jtype(v)}")
        flags.append(v)
    tokens = s.get("tokens")
    if tokens is not None and (type(tokens) is not int or tokens < 0):
        raise RecordError(f"steps[{i}].tokens", f"must be an integer >= 0, got {tokens!r}")
    reward = s.get("reward")
    if reward is not None and not _is_num(reward):
        raise RecordError(f"steps[{i}].reward", f"must be a number, got {_jtype(reward)}")
    return (action, *flags, tokens, reward)


def explain(raw, fast_error: Exception | None = None) -> tuple[str, str]:
    """(field, reason) for a record the fast path rejected, from the reference validator."""
    if isinstance(raw, bytes):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as e:
            return "<record>", f"line is not valid UTF-8 ({e.reason} at byte {e.start})"
    if isinstance(raw, (bytes, str)):
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            return "<record>", f"not valid JSON: {e}"
    else:
        rec = raw
    try:
        validate_steps(validate_episode(rec)["steps"])
    except RecordError as e:
        return e.field, e.reason
    msg = str(fast_error) if fast_error else "record rejected"
    where = msg.rsplit("at `$.", 1)[1].rstrip("`") if "at `$." in msg else "<record>"
    return where, msg
