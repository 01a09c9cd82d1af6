"""Decision latency per group: summary quantiles and ECDF points for plotting.

Only decisions that acted have a latency. ``time_unit`` is always part of the grouping, so
seconds and tokens are never pooled. Relative latency is ``latency / window_close`` (1 = acted
exactly at the window's close), defined only where the decision has a window with close > 0.
Quantiles use numpy's default (linear interpolation, Hyndman–Fan type 7).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._groups import group_counts, make_groups, resolve_by, safe_div, steps_of

QUANTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99}


def relative_latency(steps: pd.DataFrame) -> np.ndarray:
    """``latency / window_close``; NaN without an action, a window, or with close = 0."""
    lat = steps["latency"].to_numpy(dtype=float)
    close = steps["window_close"].to_numpy(dtype=float)
    return safe_div(lat, np.where(np.isnan(close), 0.0, close))


def _quantiles(values: np.ndarray, gid: np.ndarray, n_groups: int, prefix: str) -> dict[str, np.ndarray]:
    out = {f"{prefix}{name}": np.full(n_groups, np.nan) for name in QUANTILES}
    keep = ~np.isnan(values)
    if keep.any():
        q = pd.Series(values[keep]).groupby(gid[keep]).quantile(list(QUANTILES.values())).unstack()
        for name, p in QUANTILES.items():
            out[f"{prefix}{name}"][q.index.to_numpy()] = q[p].to_numpy()
    return out


def _latency_by_group(episodes: pd.DataFrame, steps: pd.DataFrame, by):
    """Groups (``by`` + ``time_unit``), each decision's group id, latency, relative latency, acted mask."""
    steps = steps_of(steps, episodes)
    groups = make_groups(episodes, resolve_by(by, episodes, extra=("time_unit",)))
    lat = steps["latency"].to_numpy(dtype=float)
    return groups, groups.step_gid(steps, episodes), lat, relative_latency(steps), ~np.isnan(lat)


def latency_summary(episodes: pd.DataFrame, steps: pd.DataFrame, by=None) -> pd.DataFrame:
    """Latency distribution per group (``by`` + ``time_unit``).

    Columns: keys, ``n_decisions`` (all), ``n_acted`` (with a latency), ``mean``, ``sd``
    (ddof = 1), ``p50``, ``p90``, ``p99``, ``max``, then ``n_windowed`` (acted with a window) and
    ``rel_p50``/``rel_p90``/``rel_p99`` of relative latency. NaN where no decision acted.
    """
    groups, gid, lat, rel, acted = _latency_by_group(episodes, steps, by)
    n_acted = group_counts(gid, groups.n, acted)
    s1 = group_counts(gid, groups.n, np.where(acted, lat, 0.0))
    mean = safe_div(s1, n_acted)
    dev2 = np.where(acted, (lat - mean[gid]) ** 2, 0.0) if len(lat) else lat
    var = safe_div(group_counts(gid, groups.n, dev2), n_acted - 1)
    mx = np.full(groups.n, np.nan)
    if acted.any():
        np.fmax.at(mx, gid[acted], lat[acted])
    return groups.frame({
        "n_decisions": group_counts(gid, groups.n),
        "n_acted": n_acted.astype(np.int64),
        "mean": mean,
        "sd": np.sqrt(var),
        **_quantiles(lat, gid, groups.n, ""),
        "max": mx,
        "n_windowed": group_counts(gid, groups.n, ~np.isnan(rel)).astype(np.int64),
        **_quantiles(rel, gid, groups.n, "rel_"),
    })


def latency_ecdf(episodes: pd.DataFrame, steps: pd.DataFrame, by=None) -> pd.DataFrame:
    """ECDF points of latency per group (``by`` + ``time_unit``), one row per acted decision.

    Columns: keys, ``latency``, ``ecdf`` = share of the group's acted decisions with latency ≤ this
    one (ties share the top value), ``latency_rel`` and ``ecdf_rel`` (the same over decisions
    with a relative latency; NaN elsewhere). Rows sorted by group then latency.
    """
    groups, gid, lat, rel, acted = _latency_by_group(episodes, steps, by)
    gid, lat, rel = gid[acted], lat[acted], rel[acted]
    order = np.lexsort((lat, gid))
    gid, lat, rel = gid[order], lat[order], rel[order]
    frame = pd.DataFrame({"g": gid, "lat": lat, "rel": rel})
    by_g = frame.groupby("g")
    ecdf = by_g["lat"].rank(method="max").to_numpy() / by_g["lat"].transform("size").to_numpy() if len(frame) else lat
    n_rel = by_g["rel"].transform("count").to_numpy() if len(frame) else rel
    rank_rel = by_g["rel"].rank(method="max").to_numpy() if len(frame) else rel
    return groups.repeat(gid, {
        "latency": lat,
        "ecdf": ecdf,
        "latency_rel": rel,
        "ecdf_rel": safe_div(rank_rel, n_rel),
    })


__all__ = ["latency_summary", "latency_ecdf", "relative_latency"]
