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
from .intervals import clustered_se, z_value
from .success import cluster_codes

ALL = "(all)"  # key value of the pooled rows
_MISSING = "\x00missing"  # stands in for a missing unit value so missing == missing when pairing

PAIRED_COLUMNS = ("n_pairs", "mean_a", "mean_b", "mean_diff", "sd_diff", "se", "lo", "hi", "p_value",
                  "corr", "cluster_by", "n_clusters", "se_clustered", "lo_clustered", "hi_clustered",
                  "n_units_a", "n_units_b", "n_unpaired_a", "n_unpaired_b")


def _unit_table(episodes: pd.DataFrame, arm_col: str, arm: str, keys: list[str], value: str) -> pd.DataFrame:
    """One row per (by keys, unit) of arm ``arm``: the unit's mean ``value``."""
    sub = episodes.loc[episodes[arm_col] == arm, keys + [value]].copy()
    sub[value] = sub[value].astype(float)
    sub = sub[sub[value].notna()]
    for k in keys:
        sub[k] = sub[k].astype(object).where(sub[k].notna(), _MISSING)
    return sub.groupby(keys, sort=True)[value].mean().rename(arm_col + "=" + arm).reset_index()


def _stats(d: pd.DataFrame, conf: float, cluster: str | None) -> dict:
    a, b = d["va"].to_numpy(float), d["vb"].to_numpy(float)
    diff = a - b
    n = len(diff)
    out = {"n_pairs": n, "mean_a": np.nan, "mean_b": np.nan, "mean_diff": np.nan, "sd_diff": np.nan,
           "se": np.nan, "lo": np.nan, "hi": np.nan, "p_value": np.nan, "corr": np.nan}
    if n:
        out.update(mean_a=a.mean(), mean_b=b.mean(), mean_diff=diff.mean())
    if n >= 2:
        sd = diff.std(ddof=1)
        se = sd / np.sqrt(n)
        t = stats.t.ppf(0.5 + conf / 2, n - 1)
        out.update(sd_diff=sd, se=se)
        if se > 0:  # every difference equal: no interval or test (a point would overstate certainty)
            out.update(lo=diff.mean() - t * se, hi=diff.mean() + t * se,
                       p_value=2 * stats.t.sf(abs(diff.mean() / se), n - 1))
        if a.std() > 0 and b.std() > 0:
            out["corr"] = float(np.corrcoef(a, b)[0, 1])
    if cluster is None:
        out.update(cluster_by="unit", n_clusters=n, se_clustered=out["se"])
    else:
        codes = cluster_codes(d.assign(**{cluster: d[cluster].where(d[cluster] != _MISSING)}), cluster)
        se_c, g = clustered_se(diff, np.zeros(n, dtype=np.int64), codes, 1)
        out.update(cluster_by=cluster, n_clusters=int(g[0]), se_clustered=float(se_c[0]))
    z = z_value(conf)
    if out["se_clustered"] > 0:
        out.update(lo_clustered=out["mean_diff"] - z * out["se_clustered"],
                   hi_clustered=out["mean_diff"] + z * out["se_clustered"])
    else:
        out.update(lo_clustered=np.nan, hi_clustered=np.nan)
    return out


def paired_difference(episodes: pd.DataFrame, a: str, b: str, over: str = "model", value: str = "success",
                      by=None, units=("task", "seed"), pool=("task_type",), conf: float = 0.95,
                      cluster: str | None = "task") -> pd.DataFrame:
    """Mean paired difference A − B of ``value`` (success or score) per ``by`` group.

    ``over`` is the column whose values ``a`` and ``b`` are compared (``"model"`` or ``"clock"``);
    ``by`` defaults to model × task_type × clock without ``over``. Rows for each ``by`` group, plus
    pooled rows (``pool`` columns set to ``"(all)"``) when ``pool`` columns are in ``by``.

    Columns: keys, ``a``, ``b``, ``value``, ``n_pairs``, ``mean_a``, ``mean_b``, ``mean_diff``,
    ``sd_diff``, ``se`` = sd_diff/√n, ``lo``/``hi`` = mean_diff ± t(n−1)·se (the paired t
    interval, as ``scipy.stats.ttest_rel``), ``p_value`` (paired t test), ``corr`` (Pearson of A
    and B over units; NaN if either is constant), ``cluster_by``/``n_clusters``/``se_clustered``
    (pairs clustered on ``cluster``, default task, Miller 2024 with G/(G−1); seeds of one task
    are not independent) and ``lo_clustered``/``hi_clustered`` (normal), ``n_units_a``/``_b``
    and ``n_unpaired_a``/``_b`` (units of one arm without a partner). NaN below 2 pairs; intervals
    and p-value NaN when every difference is equal (se = 0).
    """
    if over not in episodes.columns:
        raise ValueError(f"over: no episode column {over!r}")
    values = set(episodes[over].dropna().astype(str))
    for name, arm in (("a", a), ("b", b)):
        if arm not in values:
            raise ValueError(f"{name}: no episode has {over} = {arm!r}; values are {sorted(values)}")
    if a == b:
        raise ValueError(f"a and b are both {a!r}")
    if value not in ("success", "score") and value not in episodes.columns:
        raise ValueError(f"value: no episode column {value!r}")
    by_cols = resolve_by(tuple(c for c in DEFAULT_BY if c != over) if by is None else by, episodes)
    if over in by_cols:
        raise ValueError(f"by: cannot group by {over!r}, the column being compared")
    units = [units] if isinstance(units, str) else list(units)
    unit_cols = [u for u in units if u not in by_cols]
    if cluster is not None and cluster not in unit_cols + by_cols:
        cluster = None
    pairable = episodes[unit_cols].notna().any(axis=1) if unit_cols else pd.Series(True, index=episodes.index)
    keys = by_cols + unit_cols
    ua = _unit_table(episodes[pairable], over, a, keys, value).rename(columns={f"{over}={a}": "va"})
    ub = _unit_table(episodes[pairable], over, b, keys, value).rename(columns={f"{over}={b}": "vb"})
    merged = ua.merge(ub, on=keys, how="outer", indicator=True)
    unpaired_a = episodes[~pairable & (episodes[over] == a)]
    unpaired_b = episodes[~pairable & (episodes[over] == b)]

    pooled = [c for c in ((pool,) if isinstance(pool, str) else tuple(pool or ())) if c in by_cols]
    tables = [(by_cols, merged)]
    if pooled:
        tables.append(([c for c in by_cols if c not in pooled], merged))
    rows = []
    for group_cols, table in tables:
        grouped = table.groupby(group_cols, sort=True, dropna=False) if group_cols else [((), table)]
        for key, part in grouped:
            key = key if isinstance(key, tuple) else (key,)
            row = {c: ALL for c in by_cols}
            row.update(dict(zip(group_cols, key)))
            both = part[part["_merge"] == "both"]
            row.update(a=a, b=b, value=value)
            row.update(_stats(both, conf, cluster))
            row.update(n_units_a=int((part["_merge"] != "right_only").sum()),
                       n_units_b=int((part["_merge"] != "left_only").sum()),
                       n_unpaired_a=int((part["_merge"] == "left_only").sum()),
                       n_unpaired_b=int((part["_merge"] == "right_only").sum()))
            rows.append(row)
    out = pd.DataFrame(rows, columns=by_cols + ["a", "b", "value", *PAIRED_COLUMNS])
    out.attrs["n_unpairable_a"] = len(unpaired_a)
    out.attrs["n_unpairable_b"] = len(unpaired_b)
    for c in by_cols:
        out[c] = out[c].where(out[c] != _MISSING, np.nan)
    return out
