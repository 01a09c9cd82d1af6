"""Observed decomposition of failed episodes into capability / timing / both / error / unknown.

Uses the labels the loader derives (``episodes.failure_type``); it is a direct count, the check
the hierarchical model's decomposition must agree with where step labels exist.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..schema import FAILURE_TYPES
from ._groups import group_counts, make_groups, resolve_by, safe_div
from .intervals import DEFAULT_CI_PROB, proportion_interval

FAILED_TYPES = tuple(t for t in FAILURE_TYPES if t != "none")
LABELLED_TYPES = tuple(t for t in FAILED_TYPES if t != "unknown")


def observed_decomposition(episodes: pd.DataFrame, by=None, ci_prob: float = DEFAULT_CI_PROB,
                           method: str = "wilson") -> pd.DataFrame:
    """Among failed episodes of each group, the count and share of each failure type.

    One row per group × ``failure_type`` (capability, timing, both, error, unknown; zero counts are
    listed). ``share`` = count / ``n_failed`` with a ``method`` interval (``share_lo``, ``share_hi``);
    ``share_labelled`` = count / ``n_labelled`` (failed episodes whose type is known) with its
    interval (``share_labelled_lo``/``_hi``), NaN on the ``unknown`` row. Shares are NaN in a group with no failure.

    Columns: keys, ``failure_type``, ``count``, ``n_failed``, ``share``, ``share_lo``, ``share_hi``,
    ``n_labelled``, ``share_labelled``, ``share_labelled_lo``, ``share_labelled_hi``.
    """
    cols = resolve_by(by, episodes)
    groups = make_groups(episodes, cols)
    gid = groups.episode_gid
    ftype = episodes["failure_type"].to_numpy(dtype=object)
    failed = ~episodes["success"].to_numpy(dtype=bool)
    unexpected = sorted(set(ftype[failed]) - set(FAILED_TYPES))
    if unexpected:
        raise ValueError(f"failure_type: failed episodes with type {unexpected}; expected one of {FAILED_TYPES}")
    n_failed = group_counts(gid, groups.n, failed)
    n_labelled = group_counts(gid, groups.n, failed & np.isin(ftype, LABELLED_TYPES))
    counts = np.stack([group_counts(gid, groups.n, failed & (ftype == t)) for t in FAILED_TYPES], axis=1)
    g_idx = np.repeat(np.arange(groups.n), len(FAILED_TYPES))
    count = counts.ravel().astype(np.int64)
    den = n_failed[g_idx]
    lab = n_labelled[g_idx]
    types = np.tile(np.array(FAILED_TYPES, dtype=object), groups.n)
    lo, hi = proportion_interval(count, den, ci_prob, method)
    unknown = types == "unknown"
    lab_lo, lab_hi = proportion_interval(count, np.where(unknown, 0, lab), ci_prob, method)
    return groups.repeat(g_idx, {
        "failure_type": types,
        "count": count,
        "n_failed": den.astype(np.int64),
        "share": safe_div(count, den),
        "share_lo": lo,
        "share_hi": hi,
        "n_labelled": lab.astype(np.int64),
        "share_labelled": np.where(unknown, np.nan, safe_div(count, lab)),
        "share_labelled_lo": lab_lo,
        "share_labelled_hi": lab_hi,
    })
