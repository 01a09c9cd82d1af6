"""Which episode each decision belongs to, for text or categorical keys (:func:`rtanalysis.schema.with_key_dtype`).

Matching (run_id, episode_id) pairs as text builds a string index of every decision (two text
copies of a million-row column for categorical keys); this matches integer codes instead.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

EPISODE_KEY = ("run_id", "episode_id")


def code_dtype(top: int) -> type:
    """The smallest signed integer type that holds codes from -1 (missing) to ``top``."""
    return np.int8 if top < 2**7 else np.int16 if top < 2**15 else np.int32 if top < 2**31 else np.int64


def key_codes(values: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Integer codes of ``values`` (-1 for missing) and the distinct values they index; a
    categorical column's own codes, so no text is copied."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return values.cat.codes.to_numpy(), values.cat.categories
    codes, uniques = pd.factorize(values)
    return codes, pd.Index(uniques)


def episode_rows(steps: pd.DataFrame, episodes: pd.DataFrame) -> np.ndarray:
    """Row (position) in ``episodes`` of each decision in ``steps``, -1 where its episode is not there.

    Episodes must be unique by (run_id, episode_id), as every loader makes them."""
    if not len(steps):
        return np.zeros(0, dtype=np.int64)
    step_key = np.zeros(len(steps), dtype=np.int64)
    ep_key = np.zeros(len(episodes), dtype=np.int64)
    matchable = np.ones(len(episodes), dtype=bool)
    for col in EPISODE_KEY:
        codes, uniques = key_codes(steps[col])
        ep_codes = uniques.get_indexer(episodes[col]) if len(episodes) else np.zeros(0, dtype=np.int64)
        matchable &= ep_codes >= 0  # a value no decision has: no decision can match that episode
        width = len(uniques) + 1  # code + 1: 0 is a missing key, which matches no episode
        step_key = step_key * width + (codes.astype(np.int64) + 1)
        ep_key = ep_key * width + (ep_codes + 1)
    candidates = np.flatnonzero(matchable)
    found = pd.Index(ep_key[candidates]).get_indexer(step_key)
    del step_key
    # in place: a decision-length array of the answer and one of the lookup, not four
    missing = found < 0
    np.maximum(found, 0, out=found)
    rows = candidates[found] if len(candidates) else np.zeros(len(found), dtype=np.int64)
    rows[missing] = -1
    return rows


def value_codes(values: pd.Series, levels) -> np.ndarray:
    """Position of each of ``values`` in ``levels`` (-1 when missing or not among them), for text or
    categorical columns alike, without an array of Python strings (a categorical is only recoded)."""
    index = pd.Index(list(levels))
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes = values.cat.codes.to_numpy()
        where = index.get_indexer(values.cat.categories)  # each category's position in levels
        return np.where(codes >= 0, where[np.maximum(codes, 0)] if len(where) else -1, -1)
    return index.get_indexer(values)
