"""Column contracts of the tidy tables every stage exchanges.

One registry per table: column name -> pandas dtype. Loaders and adapters build their frames
through :func:`conform`, so every source yields the same columns in the same order with the same
dtypes (nullable ``boolean``/``Int64`` where a field may be absent, ``str`` for text).
"""

from __future__ import annotations

import pandas as pd

CLOCKS = ("wall", "paused", "step")
TIMED_CLOCKS = ("wall", "step")
TIME_UNITS = ("s", "tokens")
OUTCOMES = ("ok", "wrong", "late", "early", "silent", "error", "unknown")
FAILURE_TYPES = ("none", "capability", "timing", "both", "error", "unknown")
#: why a decision has no action (``no_action_cause``): the agent ran out of time (a timing failure),
#: the call failed (provider or agent error), or something else stopped it (the harness); only
#: ``timeout`` is timing, the other two are reported as reliability, never as timing or capability
NO_ACTION_CAUSES = ("timeout", "error", "other")
#: how an episode ended (``ended``): it reached its intended end (the horizon: the game's last turn, the
#: task's end), the agent's failure ended it (the log's last decision was the fatal one), or something
#: else cut it short (a budget, the harness); absent: not known
ENDINGS = ("horizon", "failure", "cut")

EPISODE_KEYS = ("run_id", "episode_id")
#: episode columns copied onto every step row
STEP_EPISODE_KEYS = ("run_id", "episode_id", "model", "task", "task_type", "clock", "time_unit", "seed")

#: the episodes table's columns and their dtypes
EPISODE_COLUMNS: dict[str, str] = {
    "run_id": "str",
    "episode_id": "str",
    "model": "str",
    "task": "str",
    "task_type": "str",
    "clock": "str",
    "time_unit": "str",
    "seed": "Int64",
    "success": "bool",
    "score": "float64",
    "ended": "str",
    "n_steps": "int64",
    "n_fallback": "int64",
    "failure_type": "str",
    "meta": "str",
    "source_file": "str",
    "source_line": "int64",
}

#: the steps table's columns and their dtypes
STEP_COLUMNS: dict[str, str] = {
    "run_id": "str",
    "episode_id": "str",
    "model": "str",
    "task": "str",
    "task_type": "str",
    "clock": "str",
    "time_unit": "str",
    "seed": "Int64",
    "step": "int64",
    "t_obs": "float64",
    "t_act": "float64",
    "latency": "float64",
    "window_open": "float64",
    "window_close": "float64",
    "action": "str",
    "correct_at_obs": "boolean",
    "valid_at_exec": "boolean",
    "fallback": "boolean",
    "no_action_cause": "str",
    "tokens": "Int64",
    "reward": "float64",
    "on_time": "boolean",
    "too_early": "boolean",
    "too_late": "boolean",
    "no_action": "bool",
    "outcome": "str",
}

#: text columns repeated over many rows: with ``key_dtype="category"`` (what the command line uses)
#: the loader stores them as pandas categoricals (codes into the sorted distinct values), 1–4 bytes a
#: row instead of the text; every function of the package accepts either dtype.
STEP_KEY_COLUMNS = ("run_id", "episode_id", "model", "task", "task_type", "clock", "time_unit", "no_action_cause",
                    "outcome")
EPISODE_KEY_COLUMNS = ("run_id", "model", "task", "task_type", "clock", "time_unit", "ended", "failure_type",
                       "source_file")
KEY_DTYPES = ("str", "category")
#: step fields the loader keeps, ingest writes and the data hash covers, but no metric, figure, table
#: or model reads (the outcome is derived from them at load): ``rtanalysis report`` lets them go once
#: the fit has hashed the data (:meth:`rtanalysis.LoadResult.drop_record_only_columns`)
RECORD_ONLY_STEP_COLUMNS = ("t_obs", "t_act", "action", "valid_at_exec", "tokens", "reward", "on_time")
#: what the command line (`ingest`, `fit`, `report`) loads with: its tables never reach a user's session
#: and the files it writes hold text either way
COMMAND_KEY_DTYPE = "category"


def with_key_dtype(columns: dict[str, str], key_dtype: str) -> dict[str, str]:
    """The contract ``columns`` (:data:`~rtanalysis.schema.EPISODE_COLUMNS` or
    :data:`~rtanalysis.schema.STEP_COLUMNS`) with its key columns stored as ``key_dtype``: ``"str"`` (the
    default) or ``"category"``."""
    if key_dtype not in KEY_DTYPES:
        raise ValueError(f"key_dtype must be one of {', '.join(KEY_DTYPES)}, not {key_dtype!r}")
    if key_dtype == "str":
        return columns
    if columns is not STEP_COLUMNS and columns is not EPISODE_COLUMNS:
        raise ValueError("with_key_dtype takes schema.EPISODE_COLUMNS or schema.STEP_COLUMNS")
    keys = STEP_KEY_COLUMNS if columns is STEP_COLUMNS else EPISODE_KEY_COLUMNS
    return {name: ("category" if name in keys else dtype) for name, dtype in columns.items()}


QUARANTINE_COLUMNS: dict[str, str] = {
    "file": "str",
    "line": "int64",
    "field": "str",
    "reason": "str",
    "raw": "str",
}

#: episode columns that a `conditions` key may not shadow; a clashing key gets this prefix
CONDITION_PREFIX = "cond_"


def condition_column(key: str) -> str:
    """The episodes column that holds condition ``key``."""
    return CONDITION_PREFIX + key if key in EPISODE_COLUMNS else key


def conform(frame: pd.DataFrame, columns: dict[str, str], extra: bool = True) -> pd.DataFrame:
    """Return ``frame`` with ``columns`` first, in order, cast to their dtypes.

    Missing contract columns are added as all-missing. Columns outside the contract (the
    ``conditions`` keys on episodes) follow when ``extra`` is true, in their existing order.
    """
    out = {}
    n = len(frame)
    for name, dtype in columns.items():
        if name in frame.columns:
            col = frame[name]
        else:
            col = pd.Series([None] * n, index=frame.index, dtype="object")
        out[name] = _cast(col, dtype, name)
    if extra:
        for name in frame.columns:
            if name not in columns:
                out[name] = frame[name]
    return pd.DataFrame(out, index=pd.RangeIndex(n))


def _cast(col: pd.Series, dtype: str, name: str) -> pd.Series:
    col = col.reset_index(drop=True)
    if dtype == "bool":
        if col.isna().any():
            raise ValueError(f"column {name!r} must have no missing values")
        return col.astype("bool")
    if dtype == "int64":
        return col.astype("int64")
    if dtype == "float64":
        return pd.to_numeric(col, errors="raise").astype("float64")
    if dtype == "category":  # categories sorted, as the loader builds them
        if isinstance(col.dtype, pd.CategoricalDtype):
            return col
        return _cast(col, "str", name).astype("category")
    if dtype == "str":
        return col.astype("str") if not col.isna().any() else col.astype(pd.StringDtype(na_value=float("nan")))
    return col.astype(dtype)


def empty(columns: dict[str, str]) -> pd.DataFrame:
    return conform(pd.DataFrame({name: [] for name in columns}), columns)
