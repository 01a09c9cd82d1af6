"""Decision latency per group: summary quantiles, ECDF points, and success by relative latency.

Only decisions that acted have a latency. ``time_unit`` is always part of the grouping, so
seconds and tokens are never pooled. The two latency definitions every stage shares live here:

- relative latency (:func:`relative_latency`) = ``latency / window_close`` (1 = acted exactly at
  the window's close), defined only where the decision has a window with close > 0;
- zero latencies (:func:`floored_log_latency`): a logged latency of 0 has no logarithm, so the
  model floors it at half the smallest positive latency of its time unit; checks that compare
  log-latency quantiles drop them instead (:func:`positive_latency`).

Quantiles use numpy's default (linear interpolation, Hyndman–Fan type 7).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._groups import group_counts, make_groups, plain_values, resolve_by, safe_div, steps_of
from .intervals import DEFAULT_CI_PROB, proportion_interval

QUANTILES = {"p25": 0.25, "p50": 0.5, "p75": 0.75, "p90": 0.9, "p99": 0.99}
#: relative-latency bin edges of :func:`success_by_latency` (1 = the window's close)
RELATIVE_LATENCY_EDGES = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0, np.inf)


def relative_latency(steps: pd.DataFrame) -> np.ndarray:
    """``latency / window_close``; NaN without an action, a window, or with close = 0."""
    lat = steps["latency"].to_numpy(dtype=float)
    close = steps["window_close"].to_numpy(dtype=float)
    return safe_div(lat, np.where(np.isnan(close), 0.0, close))


def positive_latency(latency) -> np.ndarray:
    """Mask of latencies that have a logarithm (acted and > 0): what log-latency checks compare."""
    lat = np.asarray(latency, dtype=float)
    return ~np.isnan(lat) & (lat > 0)


def floored_log_latency(latency, unit) -> np.ndarray:
    """log latency with zeros floored at half the smallest positive latency of their ``unit`` code
    (1e-3 when a unit has none); NaN where no action was taken. Written in place unit by unit (a
    copy of a unit's latencies per step would be as long as the steps: 43 MiB each at 10^6 episodes)."""
    lat = np.asarray(latency, dtype=float)
    unit = np.asarray(unit)
    out = np.full(lat.shape, np.nan)
    acted = ~np.isnan(lat)
    positive = acted & (lat > 0)
    for u in pd.unique(unit[acted] if unit.dtype == object else unit):
        sel = acted & (unit == u)
        if not sel.any():
            continue
        smallest = np.min(lat, where=sel & positive, initial=np.inf)
        np.maximum(lat, smallest / 2 if np.isfinite(smallest) else 1e-3, out=out, where=sel)
    return np.log(out, out=out)


def _quantiles(values: np.ndarray, gid: np.ndarray, n_groups: int, prefix: str) -> dict[str, np.ndarray]:
    out = {f"{prefix}{name}": np.full(n_groups, np.nan) for name in QUANTILES}
    keep = ~np.isnan(values)
    if keep.any():
        q = pd.Series(values[keep]).groupby(gid[keep]).quantile(list(QUANTILES.values())).unstack()
        for name, p in QUANTILES.items():
            out[f"{prefix}{name}"][q.index.to_numpy()] = q[p].to_numpy()
    return out


def _group_median(values: np.ndarray, gid: np.ndarray, n_groups: int) -> np.ndarray:
    out = np.full(n_groups, np.nan)
    keep = ~np.isnan(values)
    if keep.any():
        med = pd.Series(values[keep]).groupby(gid[keep]).median()
        out[med.index.to_numpy()] = med.to_numpy()
    return out


def _latency_by_group(episodes: pd.DataFrame, steps: pd.DataFrame, by):
    """Groups (``by`` + ``time_unit``), the steps, each decision's group id, latency, relative latency, acted."""
    steps = steps_of(steps, episodes)
    groups = make_groups(episodes, resolve_by(by, episodes, extra=("time_unit",)))
    lat = steps["latency"].to_numpy(dtype=float)
    return groups, steps, groups.step_gid(steps, episodes), lat, relative_latency(steps), ~np.isnan(lat)


def latency_summary(episodes: pd.DataFrame, steps: pd.DataFrame, by=None) -> pd.DataFrame:
    """Latency distribution per group (``by`` + ``time_unit``).

    Columns: keys, ``n_decisions`` (all), ``n_acted`` (with a latency), ``mean``, ``sd``
    (ddof = 1), ``p25``, ``p50``, ``p75``, ``p90``, ``p99``, ``max``, ``n_windowed`` (acted with a
    window), ``rel_p25`` … ``rel_p99`` of relative latency, and ``window_open_p50`` /
    ``window_close_p50`` (median window bounds over the group's decisions that have a window).
    NaN where no decision acted.
    """
    groups, steps, gid, lat, rel, acted = _latency_by_group(episodes, steps, by)
    n_acted = group_counts(gid, groups.n, acted)
    mean = safe_div(group_counts(gid, groups.n, np.where(acted, lat, 0.0)), n_acted)
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
        "window_open_p50": _group_median(steps["window_open"].to_numpy(dtype=float), gid, groups.n),
        "window_close_p50": _group_median(steps["window_close"].to_numpy(dtype=float), gid, groups.n),
    })


#: at most this many points of each group's ECDF (and as many of its relative ECDF) in
#: :func:`latency_ecdf`: a figure needs no more, and one row per decision made the table (and its CSV:
#: 47 MB at 10^5 episodes) grow with the logs
ECDF_MAX_POINTS = 200


def latency_ecdf(episodes: pd.DataFrame, steps: pd.DataFrame, by=None,
                 max_points: int | None = ECDF_MAX_POINTS) -> pd.DataFrame:
    """ECDF points of latency per group (``by`` + ``time_unit``), one row per acted decision, thinned
    to about ``max_points`` per group when the group has more (``None``: every decision).

    Columns: keys, ``latency``, ``ecdf`` = share of the group's acted decisions with latency ≤ this
    one (ties share the top value), ``latency_rel`` and ``ecdf_rel`` (the same over decisions
    with a relative latency; NaN elsewhere). Rows sorted by group then latency. Thinning keeps the
    decisions at evenly spaced ranks in latency order and those at evenly spaced ranks in relative
    latency order (the smallest and largest included): every row is still an exact point of both
    ECDFs, computed over all the group's decisions, only fewer of them.
    """
    groups, _, gid, lat, rel, acted = _latency_by_group(episodes, steps, by)
    if max_points is not None and max_points < 2:
        raise ValueError(f"max_points must be at least 2, got {max_points}")
    # the acted decisions grouped (stably: the loader's order within a group), then one group at a time:
    # ranks over a whole steps table held a dozen decision-length arrays at once (0.8 GB at 10^6 episodes)
    pos = np.flatnonzero(acted)
    pos = pos[np.argsort(gid[pos], kind="stable")]
    bounds = np.r_[0, np.cumsum(np.bincount(gid[pos], minlength=groups.n))]
    parts = [_group_ecdf(lat[idx], rel[idx], max_points) + (g,)
             for g, idx in ((g, pos[bounds[g]:bounds[g + 1]]) for g in range(groups.n)) if len(idx)]
    names = ("latency", "ecdf", "latency_rel", "ecdf_rel")
    if not parts:
        return groups.repeat(np.zeros(0, dtype=np.int64), {n: np.zeros(0) for n in names})
    gids = np.concatenate([np.full(len(part[0]), part[-1], dtype=np.int64) for part in parts])
    return groups.repeat(gids, {n: np.concatenate([part[j] for part in parts]) for j, n in enumerate(names)})


def _group_ecdf(lat: np.ndarray, rel: np.ndarray, max_points: int | None) -> tuple:
    """One group's (latency, ecdf, latency_rel, ecdf_rel) in latency order (ties in the given order),
    thinned as :func:`latency_ecdf` says. ``ecdf``: rank (ties share the top one) / n; ``ecdf_rel`` the
    same over the decisions with a relative latency."""
    order = np.argsort(lat, kind="stable")
    lat, rel = lat[order], rel[order]
    n = len(lat)
    ecdf = np.searchsorted(lat, lat, side="right") / n
    has_rel = ~np.isnan(rel)
    n_rel = int(has_rel.sum())
    rel_order = np.argsort(rel[has_rel], kind="stable")
    sorted_rel = rel[has_rel][rel_order]
    ecdf_rel = np.full(n, np.nan)
    if n_rel:
        ecdf_rel[has_rel] = np.searchsorted(sorted_rel, rel[has_rel], side="right") / n_rel
    if max_points is not None:
        keep = _evenly_ranked(np.arange(n), np.full(n, n), max_points)
        pos_rel = np.zeros(n)  # the position in relative-latency order (ties in latency order)
        pos_rel[np.flatnonzero(has_rel)[rel_order]] = np.arange(n_rel)
        keep |= has_rel & _evenly_ranked(pos_rel, np.where(has_rel, n_rel, 1), max_points)
        lat, ecdf, rel, ecdf_rel = lat[keep], ecdf[keep], rel[keep], ecdf_rel[keep]
    return lat, ecdf, rel, ecdf_rel


def _evenly_ranked(pos: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """True for positions ``pos`` (0-based, of ``n`` in their group) nearest to ``k`` evenly spaced
    ranks 0, (n-1)/(k-1), ..., n-1: all of them when n <= k."""
    pos, n = np.asarray(pos, dtype=float), np.asarray(n, dtype=float)
    if k < 2:
        raise ValueError(f"max_points must be at least 2, got {k}")
    step = np.maximum(n - 1, 1) / (k - 1)
    nearest = np.round(np.round(pos / step) * step)
    return (n <= k) | (nearest == pos)


def episode_relative_latency(episodes: pd.DataFrame, steps: pd.DataFrame) -> np.ndarray:
    """Per episode, the median relative latency of its decisions (NaN when none has one)."""
    from ._groups import episode_row

    steps = steps_of(steps, episodes)
    out = np.full(len(episodes), np.nan)
    if len(steps):
        out = _group_median(relative_latency(steps), episode_row(steps, episodes), len(episodes))
    return out


def success_by_latency(episodes: pd.DataFrame, steps: pd.DataFrame, by=None, edges=RELATIVE_LATENCY_EDGES,
                       ci_prob: float = DEFAULT_CI_PROB, method: str = "wilson") -> pd.DataFrame:
    """Observed success per group and bin of the episode's median relative latency.

    Episodes without a relative latency (no window, or no action) are left out. One row per
    group × non-empty bin. Columns: keys, ``bin`` (``[lo, hi)`` as text), ``relative_latency``
    (median of the episodes in the bin), ``n``, ``successes``, ``success_rate``,
    ``success_rate_lo``/``_hi`` (``method`` interval with probability ``ci_prob``).
    """
    cols = resolve_by(by, episodes)
    ep = episodes[cols + ["success"]].assign(relative_latency=episode_relative_latency(episodes, steps))
    ep = ep[ep["relative_latency"].notna()]
    out_cols = cols + ["bin", "relative_latency", "n", "successes", "success_rate", "success_rate_lo",
                       "success_rate_hi"]
    if ep.empty:
        return pd.DataFrame(columns=out_cols)
    ep["bin"] = pd.cut(ep["relative_latency"], bins=list(edges), right=False).astype(str)
    g = ep.groupby(cols + ["bin"], sort=True, dropna=False, observed=True)
    out = g.agg(relative_latency=("relative_latency", "median"), n=("success", "size"),
                successes=("success", "sum")).reset_index()
    out["successes"] = out["successes"].astype(np.int64)
    out["success_rate"] = safe_div(out["successes"], out["n"])
    out["success_rate_lo"], out["success_rate_hi"] = proportion_interval(out["successes"], out["n"], ci_prob, method)
    return plain_values(out).sort_values(cols + ["relative_latency"]).reset_index(drop=True)[out_cols]


__all__ = ["latency_summary", "latency_ecdf", "relative_latency", "positive_latency", "floored_log_latency",
           "episode_relative_latency", "success_by_latency"]
