"""Decision semantics: each decision's timing and outcome, and each episode's failure type.

The rules are docs/reference/rtlog-v1.md's "Derived timing": under ``paused`` timing cannot fail; a window
decides on time when known, and ``valid_at_exec = false`` (or a default action played) marks a
decision late when the window does not already say early; no action at all is ``silent``; content
wrong is ``wrong`` whatever the timing; no action (or a default action played) because the call failed
(``no_action_cause`` ``error`` or ``other``) is ``error``: neither timing nor capability, its timing
unknown; the rest that cannot be decided is ``unknown``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .arrow import _POOL, _TEXT_ARROW, _category, _text

#: decision outcomes and episode failure types as small integer codes until the text column is built
_OUTCOMES = ("unknown", "ok", "late", "early", "wrong", "silent", "error")
_UNKNOWN, _OK, _LATE, _EARLY, _WRONG, _SILENT, _ERROR = range(len(_OUTCOMES))
_FAILURES = ("unknown", "both", "capability", "timing", "none", "error")
_TIMEOUT = 0  # position of "timeout" in rtanalysis.schema.NO_ACTION_CAUSES; the others are errors


def _timing(lat, lo, hi, paused, valid, fallback, correct, cause=None) -> dict:
    """The derived timing as arrays; booleans given as int8 codes (1 true, 0 false, -1 absent), ``cause``
    as positions in ``NO_ACTION_CAUSES`` (-1 absent)."""
    no_action = np.isnan(lat)
    fb_true = fallback == 1
    # no action (or a default played) because the call failed: not a timing miss, its timing unknown
    error = (no_action | fb_true) & (cause > _TIMEOUT) if cause is not None else np.zeros(len(lat), dtype=bool)
    has_w = ~np.isnan(hi)
    v_known = valid >= 0
    v_false = valid == 0
    # a default action played because inference did not finish is a timing miss (late)
    fb_true = fb_true & ~error
    v_false = v_false | fb_true
    v_known = v_known | fb_true
    acted = ~no_action
    with np.errstate(invalid="ignore"):
        early_w = acted & has_w & (lat < lo)
        late_w = acted & has_w & (lat > hi)
    timed = acted & ~paused & ~error
    too_early = timed & early_w
    too_late = timed & (late_w | (v_false & ~early_w))
    known = timed & (has_w | v_known)
    on_time_val = acted & ~error & (paused | (~too_early & ~too_late))
    timing_known = ((no_action | paused) & ~error) | known
    c_true = correct == 1
    c_false = correct == 0

    outcome = np.full(len(lat), _UNKNOWN, dtype=np.int8)
    outcome[acted & timing_known & on_time_val & c_true] = _OK
    outcome[acted & too_late & ~c_false] = _LATE
    outcome[acted & too_early & ~c_false] = _EARLY
    outcome[acted & c_false] = _WRONG
    outcome[no_action] = _SILENT
    outcome[error] = _ERROR
    return {"on_time": on_time_val, "too_early": too_early, "too_late": too_late, "known": timing_known,
            "no_action": no_action, "outcome": outcome}


_OUTCOME_TEXT = pa.array(_OUTCOMES, type=_TEXT_ARROW)
_FAILURE_TEXT = pa.array(_FAILURES, type=_TEXT_ARROW)


def _timing_columns(t: dict, categorical: bool = False) -> dict:
    unknown = ~t["known"]
    return {
        "on_time": pd.arrays.BooleanArray(t["on_time"], unknown),
        "too_early": pd.arrays.BooleanArray(t["too_early"], unknown.copy()),
        "too_late": pd.arrays.BooleanArray(t["too_late"], unknown.copy()),
        "no_action": t["no_action"],
        "outcome": (_category(_OUTCOME_TEXT, t["outcome"]) if categorical
                    else _text(pc.take(_OUTCOME_TEXT, pa.array(t["outcome"]), memory_pool=_POOL))),
    }


def _fallback_by_run(fallback: np.ndarray, run_id: pa.Array, ep_index: np.ndarray) -> np.ndarray:
    """The ``fallback`` rule (docs/reference/rtlog-v1.md): a run that logs ``fallback`` on any decision logs
    it on every decision, so there a decision without the field did not fall back (code 0, false).

    Harnesses write ``fallback: true`` only where a default action was played; reading the other
    decisions as unlabelled would make every fallback rate 1. Runs that never log it stay unknown.
    """
    absent = fallback < 0
    if not absent.any() or absent.all():
        return fallback
    step_run = pc.dictionary_encode(run_id).indices.to_numpy(zero_copy_only=False)[ep_index]
    run_logs = np.bincount(step_run[~absent], minlength=len(run_id)) > 0
    out = fallback.copy()
    out[absent & run_logs[step_run]] = 0
    return out


def _per_episode_sum(values: np.ndarray, ep_index: np.ndarray, n: int) -> np.ndarray:
    """How many of each episode's decisions have ``values`` (a boolean mask over decisions) true."""
    return np.bincount(ep_index[values], minlength=n).astype(np.int64, copy=False)


def _failure_types(timing: dict, correct: np.ndarray, success: np.ndarray, paused: np.ndarray,
                   ep_index: np.ndarray) -> pd.arrays.ArrowStringArray:
    """Observed failure type of each episode from its decisions' labels.

    ``none`` for a success; a failure under ``paused`` is ``capability`` by definition; otherwise
    ``capability`` (some content wrong, every decision's timing known and none missed), ``timing``
    (no content wrong, every action labelled, some window missed or no action), ``both``, ``error``
    (no content wrong and nothing missed, but some call failed: ``no_action_cause`` error or other),
    or ``unknown`` when the fields cannot decide.
    """
    n = len(success)
    oc = timing["outcome"]
    wrong = _per_episode_sum(oc == _WRONG, ep_index, n) > 0
    missed = _per_episode_sum((oc == _LATE) | (oc == _EARLY) | (oc == _SILENT), ep_index, n) > 0
    errored = oc == _ERROR
    unlabelled = _per_episode_sum((correct < 0) & ~timing["no_action"] & ~errored, ep_index, n) > 0
    timing_unknown = _per_episode_sum(~timing["known"] & ~errored, ep_index, n) > 0
    failed_call = _per_episode_sum(errored, ep_index, n) > 0
    out = np.zeros(n, dtype=np.int8)  # unknown
    out[wrong & missed] = 1
    out[wrong & ~missed & ~timing_unknown] = 2
    out[~wrong & missed & ~unlabelled] = 3
    out[failed_call & ~wrong & ~missed & ~timing_unknown & ~unlabelled] = 5
    out[paused] = 2
    out[success] = 4
    return _text(pc.take(_FAILURE_TEXT, pa.array(out), memory_pool=_POOL))
