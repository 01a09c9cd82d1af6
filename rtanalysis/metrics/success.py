"""Task success rate per group: a small-n interval (Wilson / Jeffreys) and a cluster-robust one."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._groups import make_groups, resolve_by, safe_div
from .intervals import DEFAULT_CI_PROB, clustered_se, proportion_interval, z_value

#: ``cluster="auto"`` tries these episode columns in order; the first with any value is used
CLUSTER_FALLBACK = ("task", "seed")

SUCCESS_COLUMNS = ("n", "successes", "success_rate", "success_rate_lo", "success_rate_hi", "method", "ci_prob",
                   "cluster_by", "n_clusters", "se_clustered", "success_rate_clustered_lo",
                   "success_rate_clustered_hi")


def resolve_cluster(episodes: pd.DataFrame, cluster: str | None = "auto") -> str:
    """The column episodes are clustered on: ``task``, else ``seed``, else ``episode`` (none)."""
    if cluster is None or cluster == "episode":
        return "episode"
    if cluster != "auto":
        if cluster not in episodes.columns:
            raise ValueError(f"cluster: no episode column {cluster!r}")
        return cluster
    for col in CLUSTER_FALLBACK:
        if col in episodes.columns and episodes[col].notna().any():
            return col
    return "episode"


def cluster_codes(episodes: pd.DataFrame, cluster_by: str) -> np.ndarray:
    """Integer cluster id per episode; an episode with no value in the column is its own cluster."""
    n = len(episodes)
    if cluster_by == "episode":
        return np.arange(n, dtype=np.int64)
    codes, _ = pd.factorize(episodes[cluster_by], use_na_sentinel=True)
    codes = codes.astype(np.int64)
    na = codes < 0
    codes[na] = codes.max(initial=-1) + 1 + np.arange(int(na.sum()))
    return codes


def success_rates(episodes: pd.DataFrame, by=None, method: str = "wilson", ci_prob: float = DEFAULT_CI_PROB,
                  cluster: str | None = "auto", small_sample: bool = True) -> pd.DataFrame:
    """Success rate per group with a ``method`` interval and a cluster-robust normal interval.

    Columns: the ``by`` keys, ``n`` episodes, ``successes``, ``success_rate``,
    ``success_rate_lo``/``success_rate_hi`` (``method``: wilson, jeffreys, beta_posterior or
    clopper_pearson, with probability ``ci_prob``), ``method``, ``ci_prob``, ``cluster_by`` (task /
    seed / episode), ``n_clusters`` (G), ``se_clustered`` (Miller 2024 with the G/(G−1) factor) and
    ``success_rate_clustered_lo``/``_hi`` = rate ± z·se, clipped to [0, 1]. NaN where n = 0 (rate,
    intervals) or G < 2 (clustered columns); the clustered interval is also NaN when se = 0 (all
    outcomes equal: the normal interval would be the single point, so use ``success_rate_lo``/``_hi``).
    ``small_sample=False`` drops the G/(G−1) factor (Miller's formula as printed).
    """
    cols = resolve_by(by, episodes)
    groups = make_groups(episodes, cols)
    g = groups.episode_gid
    x = episodes["success"].to_numpy(dtype=float)
    n = np.bincount(g, minlength=groups.n)[: groups.n]
    k = np.bincount(g, weights=x, minlength=groups.n)[: groups.n]
    rate = safe_div(k, n)
    lo, hi = proportion_interval(k, n, ci_prob, method)
    cluster_by = resolve_cluster(episodes, cluster)
    se, n_clusters = clustered_se(x, g, cluster_codes(episodes, cluster_by), groups.n, small_sample)
    z = z_value(ci_prob)
    return groups.frame({
        "n": n.astype(np.int64),
        "successes": k.astype(np.int64),
        "success_rate": rate,
        "success_rate_lo": lo,
        "success_rate_hi": hi,
        "method": np.full(groups.n, method, dtype=object),
        "ci_prob": np.full(groups.n, ci_prob),
        "cluster_by": np.full(groups.n, cluster_by, dtype=object),
        "n_clusters": n_clusters,
        "se_clustered": se,
        "success_rate_clustered_lo": np.where(se > 0, np.clip(rate - z * se, 0, 1), np.nan),
        "success_rate_clustered_hi": np.where(se > 0, np.clip(rate + z * se, 0, 1), np.nan),
    })
