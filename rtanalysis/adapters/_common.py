"""Helpers the adapters share: strict value coercion and the success rule.

The rtlog validator checks exact Python types (``int``/``float``/``bool``/``str``), so every value
read from a table goes through these converters first; a value they cannot convert raises
:class:`~rtanalysis.io.RecordError` naming the field, which the adapter turns into a quarantine row.
"""

from __future__ import annotations

import math
import numbers
from typing import Callable

from pathlib import Path

import orjson
import pandas as pd

from ..io import RecordError

_TRUE = {"true", "t", "yes", "y", "1"}
_FALSE = {"false", "f", "no", "n", "0"}

#: success rule: a threshold on the normalised score, or a function of it
SuccessRule = float | Callable[[float], bool]
DEFAULT_SUCCESS_THRESHOLD = 0.5


def is_missing(v) -> bool:
    """None, NaN/NA, or an empty / whitespace-only string."""
    if v is None:
        return True
    if isinstance(v, str):
        return not v.strip()
    try:
        return bool(pd.isna(v))  # NaN, NaT and pandas NA
    except (TypeError, ValueError):  # containers
        return False


def to_float(v, field: str, required: bool = False) -> float | None:
    """A finite float, or None when missing (an error if ``required``)."""
    if is_missing(v):
        if required:
            raise RecordError(field, "required value is missing")
        return None
    if isinstance(v, bool):
        raise RecordError(field, f"must be a number, got boolean {v}")
    if isinstance(v, numbers.Real):
        x = float(v)
    else:
        try:
            x = float(str(v).strip())
        except ValueError:
            raise RecordError(field, f"must be a number, got {str(v)[:40]!r}") from None
    if not math.isfinite(x):
        raise RecordError(field, f"must be a finite number, got {v!r}")
    return x


def to_int(v, field: str, required: bool = False) -> int | None:
    """An integer (``3`` and ``3.0`` both pass), or None when missing."""
    x = to_float(v, field, required)
    if x is None:
        return None
    if x != int(x):
        raise RecordError(field, f"must be an integer, got {v!r}")
    return int(x)


def to_bool(v, field: str, required: bool = False) -> bool | None:
    """A boolean from bool, 0/1 or true/false/yes/no text, or None when missing."""
    if is_missing(v):
        if required:
            raise RecordError(field, "required value is missing")
        return None
    if isinstance(v, (bool,)) or type(v).__name__ == "bool_":
        return bool(v)
    if isinstance(v, numbers.Real) and float(v) in (0.0, 1.0):
        return bool(v)
    s = str(v).strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise RecordError(field, f"must be a boolean (true/false), got {str(v)[:40]!r}")


def to_str(v, field: str, required: bool = False) -> str | None:
    if is_missing(v):
        if required:
            raise RecordError(field, "required value is missing")
        return None
    if isinstance(v, float) and v == int(v):
        v = int(v)  # an id column read as float (because of a missing cell) prints as "3", not "3.0"
    return str(v)


def make_success_rule(rule: SuccessRule | None) -> Callable[[float], bool]:
    """Resolve ``rule`` (None → default threshold 0.5; a number → ``score >= number``; a callable)."""
    if rule is None:
        rule = DEFAULT_SUCCESS_THRESHOLD
    if callable(rule):
        return lambda s: bool(rule(s))
    if isinstance(rule, bool) or not isinstance(rule, numbers.Real):
        raise ValueError(f"success_rule must be a number (threshold) or a callable, got {rule!r}")
    threshold = float(rule)
    return lambda s: s >= threshold


def peek_json_line(path: Path):
    """The first non-blank line of a (gzipped) JSON Lines file, decoded; None if unreadable."""
    import gzip

    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as fh:
            for _ in range(50):
                line = fh.readline()
                if not line:
                    return None
                if line.strip():
                    return orjson.loads(line)
    except (OSError, EOFError, orjson.JSONDecodeError):
        return None
    return None
