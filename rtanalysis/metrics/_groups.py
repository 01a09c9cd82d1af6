"""Grouping shared by every metric: which episodes (and decisions) form one output row.

Groups are taken from the *episodes* frame, so a group whose episodes have no decisions still
gets its row (with ``n = 0`` and NaN statistics) in the step-based tables. Missing group values
(a condition absent from some episodes) form their own group; they are never dropped.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd

from ..io.keys import episode_rows

DEFAULT_BY = ("model", "task_type", "clock")


def resolve_by(by: str | Iterable[str] | None, episodes: pd.DataFrame, extra: Iterable[str] = ()) -> list[str]:
    """The grouping columns: ``by`` (default model × task_type × clock) plus ``extra`` not already in it."""
    cols = list(DEFAULT_BY if by is None else ([by] if isinstance(by, str) else by))
    cols += [c for c in extra if c not in cols]
    missing = [c for c in cols if c not in episodes.columns]
    if missing:
        raise ValueError(f"by: no episode column {missing[0]!r}; episode columns are {list(episodes.columns)}")
    if len(set(cols)) != len(cols):
        raise ValueError(f"by: repeated column in {cols}")
    return cols


@dataclass
class Groups:
    """Group keys (one row per group, index = group id) and each episode's group id."""

    cols: list[str]
    keys: pd.DataFrame
    episode_gid: np.ndarray

    @property
    def n(self) -> int:
        return len(self.keys)

    def step_gid(self, steps: pd.DataFrame, episodes: pd.DataFrame) -> np.ndarray:
        """The group id of every decision, through its ``(run_id, episode_id)``."""
        return self.episode_gid[episode_row(steps, episodes)] if len(steps) else np.zeros(0, dtype=np.int64)

    def frame(self, columns: dict[str, np.ndarray | pd.Series | list]) -> pd.DataFrame:
        """Group keys followed by ``columns`` (each one value per group, in group-id order)."""
        out = self.keys.reset_index(drop=True).copy()
        for name, values in columns.items():
            out[name] = values.to_numpy() if isinstance(values, pd.Series) else values
        return out

    def repeat(self, gid: np.ndarray, columns: dict[str, np.ndarray | list]) -> pd.DataFrame:
        """Long frame: the keys of group ``gid[i]`` followed by ``columns[...][i]`` on row ``i``."""
        out = self.keys.iloc[np.asarray(gid, dtype=np.int64)].reset_index(drop=True)
        for name, values in columns.items():
            out[name] = values
        return out


def make_groups(episodes: pd.DataFrame, cols: list[str]) -> Groups:
    """Number the groups of ``episodes`` by ``cols`` in sorted key order (missing keys last)."""
    n = len(episodes)
    if not cols:
        keys = pd.DataFrame(index=pd.RangeIndex(1 if n else 0))
        return Groups(cols, keys, np.zeros(n, dtype=np.int64))
    gid = episodes.groupby(cols, dropna=False, sort=True, observed=True).ngroup().to_numpy(np.int64)
    first = np.full(gid.max() + 1 if n else 0, -1, dtype=np.int64)
    first[gid[::-1]] = np.arange(n)[::-1]  # first episode of each group
    keys = episodes[cols].iloc[first].reset_index(drop=True)
    return Groups(cols, plain_values(keys), gid)


def plain_values(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its categorical columns as their values' dtype (text for the loader's keys): a
    table's key columns are plain whatever the frames held (``key_dtype="category"``), since the
    map, sort and assignment of categoricals do not behave as on text."""
    cats = {c: frame[c].cat.categories.dtype for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)}
    return frame.astype(cats) if cats else frame


#: (id(steps), id(episodes)) -> (steps, episodes, rows) inside :func:`shared_episode_rows`, else None
_EPISODE_ROWS: ContextVar[dict | None] = ContextVar("episode_rows", default=None)


@contextlib.contextmanager
def shared_episode_rows():
    """Inside the block, each (steps, episodes) pair's decision-to-episode rows are found once and
    shared by every metric (a string index of every decision, rebuilt by each table otherwise: 12
    times per :func:`rtanalysis.metrics.compute_all`). The frames must not change inside the block."""
    token = _EPISODE_ROWS.set({})
    try:
        yield
    finally:
        _EPISODE_ROWS.reset(token)


def _rows(steps: pd.DataFrame, episodes: pd.DataFrame) -> np.ndarray:
    """Row of ``episodes`` of each decision, -1 where the episode is not there."""
    cache = _EPISODE_ROWS.get()
    key = (id(steps), id(episodes))
    if cache is not None and key in cache:
        return cache[key][2]
    rows = episode_rows(steps, episodes)
    if cache is not None:
        cache[key] = (steps, episodes, rows)  # the frames are held, so their ids stay theirs
    return rows


def steps_of(steps: pd.DataFrame, episodes: pd.DataFrame, columns=None) -> pd.DataFrame:
    """The decisions of the given episodes: a caller may pass a subset of episodes with all steps.
    ``columns``: only these columns (selected before the rows, so only they are copied). Inside
    :func:`shared_episode_rows` the subset's episode rows are kept too, not looked up again."""
    if columns is not None:
        steps = steps[list(columns)]
    if not len(steps):
        return steps
    rows = _rows(steps, episodes)
    keep = rows >= 0
    if keep.all():
        return steps
    out = steps[keep].reset_index(drop=True)
    cache = _EPISODE_ROWS.get()
    if cache is not None:
        cache[(id(out), id(episodes))] = (out, episodes, rows[keep])
    return out


def episode_row(steps: pd.DataFrame, episodes: pd.DataFrame) -> np.ndarray:
    """Row of ``episodes`` that owns each decision; a decision without its episode is an error."""
    rows = _rows(steps, episodes)
    if (rows < 0).any():
        i = int(np.flatnonzero(rows < 0)[0])
        raise ValueError(
            f"steps row {i}: episode (run_id={steps['run_id'].iloc[i]!r}, episode_id={steps['episode_id'].iloc[i]!r}) "
            "is not in the episodes frame"
        )
    return rows


def group_counts(gid: np.ndarray, n_groups: int, weights=None) -> np.ndarray:
    """Per-group sum of ``weights`` (count when None) over items with group ids ``gid``."""
    w = None if weights is None else np.asarray(weights, dtype=float)
    return np.bincount(gid, weights=w, minlength=n_groups)[:n_groups].astype(float if w is not None else np.int64)


def safe_div(num, den) -> np.ndarray:
    """``num / den`` with NaN (never 0 or inf) where ``den`` is 0."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
