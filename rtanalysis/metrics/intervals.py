"""Interval estimators for a proportion and the cluster-robust standard error of a mean.

All functions are vectorised over groups and return NaN (never 0) where a quantity is undefined:
a proportion of ``n = 0`` trials, a clustered SE from fewer than two clusters.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy import stats

from ._groups import safe_div


def z_value(conf: float) -> float:
    """Two-sided normal critical value for confidence level ``conf`` (1.959964 at 0.95)."""
    if not 0 < conf < 1:
        raise ValueError(f"conf must be in (0, 1), got {conf}")
    return float(stats.norm.ppf(0.5 + conf / 2))


def wilson(k, n, conf: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for ``k`` successes in ``n`` trials.

    centre = (k + z²/2) / (n + z²), half-width = z / (n + z²) · sqrt(k(n − k)/n + z²/4).
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    z = z_value(conf)
    with np.errstate(divide="ignore", invalid="ignore"):
        centre = (k + z * z / 2) / (n + z * z)
        half = z / (n + z * z) * np.sqrt(k * (n - k) / n + z * z / 4)
    lo = np.where(n > 0, np.clip(centre - half, 0, 1), np.nan)
    hi = np.where(n > 0, np.clip(centre + half, 0, 1), np.nan)
    return lo, hi


def beta_posterior(k, n, conf: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Central interval of the Jeffreys posterior Beta(k + ½, n − k + ½) (statsmodels' "jeffreys")."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    a = (1 - conf) / 2
    ok = n > 0
    kk, nn = np.where(ok, k, 0.0), np.where(ok, n, 1.0)
    lo = stats.beta.ppf(a, kk + 0.5, nn - kk + 0.5)
    hi = stats.beta.ppf(1 - a, kk + 0.5, nn - kk + 0.5)
    return np.where(ok, lo, np.nan), np.where(ok, hi, np.nan)


def jeffreys(k, n, conf: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Jeffreys interval with the Brown–Cai–DasGupta (2001) boundary rule: lo = 0 at k = 0, hi = 1 at k = n."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    lo, hi = beta_posterior(k, n, conf)
    lo = np.where((n > 0) & (k == 0), 0.0, lo)
    hi = np.where((n > 0) & (k == n), 1.0, hi)
    return lo, hi


#: ``method=`` of a proportion interval -> function(k, n, conf) -> (lo, hi)
PROPORTION_INTERVALS: dict[str, Callable] = {
    "wilson": wilson,
    "jeffreys": jeffreys,
    "beta_posterior": beta_posterior,
}


def proportion_interval(k, n, conf: float = 0.95, method: str = "wilson") -> tuple[np.ndarray, np.ndarray]:
    """Interval for ``k`` of ``n`` by ``method`` (one of :data:`PROPORTION_INTERVALS`)."""
    try:
        fn = PROPORTION_INTERVALS[method]
    except KeyError:
        raise ValueError(f"method: unknown interval {method!r}; choose one of {sorted(PROPORTION_INTERVALS)}") from None
    return fn(k, n, conf)


def clustered_se(x, group, cluster, n_groups: int, small_sample: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Cluster-robust SE of the mean of ``x`` within each group; returns ``(se, n_clusters)``.

    Miller (2024), "Adding Error Bars to Evals" (arXiv:2411.00640), eq. for clustered SE:
    SE = sqrt( Σ_c (Σ_{i∈c} (x_i − x̄))² ) / n, times sqrt(G / (G − 1)) when ``small_sample``
    (the CR1 factor statsmodels applies for an intercept-only OLS: G/(G−1)·(n−1)/(n−k) with k = 1).
    ``group`` and ``cluster`` are integer codes per item; a cluster is only counted within its group.
    With every item its own cluster this is the usual s/√n. Fewer than two clusters: NaN.
    """
    x = np.asarray(x, dtype=float)
    group = np.asarray(group, dtype=np.int64)
    cluster = np.asarray(cluster, dtype=np.int64)
    n = np.bincount(group, minlength=n_groups)[:n_groups].astype(float)
    mean = safe_div(np.bincount(group, weights=x, minlength=n_groups)[:n_groups], n)
    resid = x - mean[group] if len(x) else x
    # one code per (group, cluster) pair
    pair = group * (cluster.max() + 1 if len(cluster) else 1) + cluster
    codes, inverse = np.unique(pair, return_inverse=True)
    cluster_sum = np.bincount(inverse, weights=resid, minlength=len(codes))
    cluster_group = codes // (cluster.max() + 1 if len(cluster) else 1)
    meat = np.bincount(cluster_group, weights=cluster_sum**2, minlength=n_groups)[:n_groups]
    g = np.bincount(cluster_group, minlength=n_groups)[:n_groups].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = g / (g - 1) if small_sample else np.ones_like(g)
        se = np.sqrt(factor * meat) / n
    return np.where(g >= 2, se, np.nan), g.astype(np.int64)
