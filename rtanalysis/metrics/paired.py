"""Paired differences between two models (or two clocks) over shared ``(task, seed)`` units.

Pairing removes the between-task variance both arms share (Miller 2024: Var(A − B) =
Var(A) + Var(B) − 2 Cov(A, B)). A unit is one ``units`` value (default ``(task, seed)``) within
one ``by`` group; several episodes of an arm on the same unit are averaged first. Episodes with
every unit column missing cannot be paired and are only counted as unpaired.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ._groups import DEFAULT_BY, resolve_by
from .intervals import DEFAULT_CI_PROB, clustered_se, z_value
from .success import cluster_codes

ALL = "(all)"  # key value of the pooled rows
_MISSING = "\x00missing"  # stands in for a missing unit value so missing == missing when pairing

PAIRED_COLUMNS = ("n_pairs", "mean_a", "mean_b", "difference", "difference_lo", "difference_hi", "sd_difference",
                  "se", "p_value", "corr", "cluster_by", "n_clusters", "se_clustered", "difference_clustered_lo",
                  "difference_clustered_hi", "n_units_a", "n_units_b", "n_unpaired_a", "n_unpaired_b")


def _unit_table(episodes: pd.DataFrame, arm_col: str, arm: str, keys: list[str], value: str) -> pd.DataFrame:
    """One row per (by keys, unit) of arm ``arm``: the unit's mean ``value``."""
    sub = episodes.loc[episodes[arm_col] == arm, keys + [value]].copy()
    sub[value] = sub[value].astype(float)
    sub = sub[sub[value].notna()]
    for k in keys:
        sub[k] = sub[k].astype(object).where(sub[k].notna(), _MISSING)
    return sub.groupby(keys, sort=True)[value].mean().rename(arm_col + "=" + arm).reset_index()


def _t_stats(a: np.ndarray, b: np.ndarray, ci_prob: float) -> dict:
    """Mean difference, its paired t interval and test (scipy's ``ttest_rel``), and the correlation."""
    diff = a - b
    n = len(diff)
    out = dict.fromkeys(("mean_a", "mean_b", "difference", "difference_lo", "difference_hi", "sd_difference", "se",
                         "p_value", "corr"), np.nan)
    out["n_pairs"] = n
    if n:
        out.update(mean_a=a.mean(), mean_b=b.mean(), difference=diff.mean())
    if n >= 2:
        sd = diff.std(ddof=1)
        out.update(sd_difference=sd, se=sd / np.sqrt(n))
        if sd > 0:  # every difference equal: no interval or test (a point would overstate certainty)
            test = stats.ttest_rel(a, b)
            ci = test.confidence_interval(ci_prob)
            out.update(difference_lo=ci.low, difference_hi=ci.high, p_value=test.pvalue)
        if a.std() > 0 and b.std() > 0:
            out["corr"] = float(np.corrcoef(a, b)[0, 1])
    return out


def _clustered(d: pd.DataFrame, out: dict, ci_prob: float, cluster: str | None) -> dict:
    """Pairs clustered on ``cluster`` (Miller 2024): SE and normal interval of the mean difference."""
    diff = d["va"].to_numpy(float) - d["vb"].to_numpy(float)
    n = len(diff)
    if cluster is None:
        res = {"cluster_by": "unit", "n_clusters": n, "se_clustered": out["se"]}
    else:
        codes = cluster_codes(d.assign(**{cluster: d[cluster].where(d[cluster] != _MISSING)}), cluster)
        se_c, g = clustered_se(diff, np.zeros(n, dtype=np.int64), codes, 1)
        res = {"cluster_by": cluster, "n_clusters": int(g[0]), "se_clustered": float(se_c[0])}
    half = z_value(ci_prob) * res["se_clustered"] if res["se_clustered"] > 0 else np.nan
    res.update(difference_clustered_lo=out["difference"] - half, difference_clustered_hi=out["difference"] + half)
    return res


def _stats(d: pd.DataFrame, ci_prob: float, cluster: str | None) -> dict:
    out = _t_stats(d["va"].to_numpy(float), d["vb"].to_numpy(float), ci_prob)
    out.update(_clustered(d, out, ci_prob, cluster))
    return out


def _check_arms(episodes: pd.DataFrame, a: str, b: str, over: str, quantity: str) -> None:
    if over not in episodes.columns:
        raise ValueError(f"over: no episode column {over!r}")
    values = set(episodes[over].dropna().astype(str).unique())
    for name, arm in (("a", a), ("b", b)):
        if arm not in values:
            raise ValueError(f"{name}: no episode has {over} = {arm!r}; values are {sorted(values)}")
    if a == b:
        raise ValueError(f"a and b are both {a!r}")
    if quantity not in episodes.columns:
        raise ValueError(f"quantity: no episode column {quantity!r}")


def _group_row(key, group_cols, by_cols, part, a, b, quantity, ci_prob, cluster) -> dict:
    key = key if isinstance(key, tuple) else (key,)
    row = {c: ALL for c in by_cols}
    row.update(dict(zip(group_cols, key)))
    row.update(a=a, b=b, quantity=quantity)
    row.update(_stats(part[part["_merge"] == "both"], ci_prob, cluster))
    row.update(n_units_a=int((part["_merge"] != "right_only").sum()),
               n_units_b=int((part["_merge"] != "left_only").sum()),
               n_unpaired_a=int((part["_merge"] == "left_only").sum()),
               n_unpaired_b=int((part["_merge"] == "right_only").sum()))
    return row


def paired_difference(episodes: pd.DataFrame, a: str, b: str, over: str = "model", quantity: str = "success",
                      by=None, units=("task", "seed"), pool=("task_type",), ci_prob: float = DEFAULT_CI_PROB,
                      cluster: str | None = "task") -> pd.DataFrame:
    """Mean paired difference A − B of ``quantity`` (an episode column: success or score) per ``by`` group.

    The arguments match :meth:`rtanalysis.FitResult.compare` (``quantity``, ``a``, ``b``,
    ``over``, ``ci_prob``) and so do the result's ``difference``/``_lo``/``_hi`` columns.
    ``over`` is the column whose values ``a`` and ``b`` are compared (``"model"`` or ``"clock"``);
    ``by`` defaults to model × task_type × clock without ``over``. Rows for each ``by`` group, plus
    pooled rows (``pool`` columns set to ``"(all)"``) when ``pool`` columns are in ``by``.

    Columns: keys, ``a``, ``b``, ``quantity``, ``n_pairs``, ``mean_a``, ``mean_b``, ``difference``,
    ``difference_lo``/``_hi`` (the paired t interval of ``scipy.stats.ttest_rel``), ``sd_difference``,
    ``se`` = sd_difference/√n, ``p_value`` (paired t test), ``corr`` (Pearson of A and B over
    units; NaN if either is constant), ``cluster_by``/``n_clusters``/``se_clustered`` (pairs
    clustered on ``cluster``, default task, Miller 2024 with G/(G−1); seeds of one task are not
    independent) and ``difference_clustered_lo``/``_hi`` (normal), ``n_units_a``/``_b`` and
    ``n_unpaired_a``/``_b`` (units of one arm without a partner). NaN below 2 pairs; intervals and
    p-value NaN when every difference is equal (se = 0).
    """
    _check_arms(episodes, a, b, over, quantity)
    by_cols = resolve_by(tuple(c for c in DEFAULT_BY if c != over) if by is None else by, episodes)
    if over in by_cols:
        raise ValueError(f"by: cannot group by {over!r}, the column being compared")
    units = [units] if isinstance(units, str) else list(units)
    unit_cols = [u for u in units if u not in by_cols]
    if cluster is not None and cluster not in unit_cols + by_cols:
        cluster = None
    pairable = episodes[unit_cols].notna().any(axis=1) if unit_cols else pd.Series(True, index=episodes.index)
    keys = by_cols + unit_cols
    ua = _unit_table(episodes[pairable], over, a, keys, quantity).rename(columns={f"{over}={a}": "va"})
    ub = _unit_table(episodes[pairable], over, b, keys, quantity).rename(columns={f"{over}={b}": "vb"})
    merged = ua.merge(ub, on=keys, how="outer", indicator=True)

    pooled = [c for c in ((pool,) if isinstance(pool, str) else tuple(pool or ())) if c in by_cols]
    levels = [by_cols] + ([[c for c in by_cols if c not in pooled]] if pooled else [])
    rows = []
    for group_cols in levels:
        grouped = merged.groupby(group_cols, sort=True, dropna=False) if group_cols else [((), merged)]
        rows += [_group_row(key, group_cols, by_cols, part, a, b, quantity, ci_prob, cluster) for key, part in grouped]
    out = pd.DataFrame(rows, columns=by_cols + ["a", "b", "quantity", *PAIRED_COLUMNS])
    out.attrs["n_unpairable_a"] = int((~pairable & (episodes[over] == a)).sum())
    out.attrs["n_unpairable_b"] = int((~pairable & (episodes[over] == b)).sum())
    for c in by_cols:
        out[c] = out[c].where(out[c] != _MISSING, np.nan)
    return out
