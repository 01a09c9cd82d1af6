"""Interval estimators for a proportion and the cluster-robust standard error of a mean.

Proportion intervals come from statsmodels' ``proportion_confint``; this module only adds what it
does not do: NaN (never 0) for ``n = 0``, the Brown–Cai–DasGupta boundary rule of the Jeffreys
interval, and a clustered SE within many groups at once (statsmodels' cluster-robust covariance
needs one OLS fit per group). ``ci_prob`` is the interval's probability (ArviZ 1's name).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from ..errors import UsageError
from ._groups import safe_div

DEFAULT_CI_PROB = 0.95


def check_ci_prob(ci_prob: float, name: str = "ci_prob") -> float:
    """``ci_prob`` as a float, or a :class:`~rtanalysis.errors.UsageError` (a ``ValueError``) naming
    the argument (``name``) when it is not in (0, 1): the one check of every interval probability."""
    if not 0 < ci_prob < 1:
        raise UsageError(f"{name} must be in (0, 1), got {ci_prob}")
    return float(ci_prob)


def z_value(ci_prob: float) -> float:
    """Two-sided normal critical value for interval probability ``ci_prob`` (1.959964 at 0.95)."""
    return float(stats.norm.ppf(0.5 + check_ci_prob(ci_prob) / 2))


def _statsmodels(k, n, ci_prob: float, method: str) -> tuple[np.ndarray, np.ndarray]:
    """``proportion_confint`` vectorised, NaN where ``n = 0``."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    ok = n > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = proportion_confint(np.where(ok, k, 0.0), np.where(ok, n, 1.0), alpha=1 - check_ci_prob(ci_prob),
                                    method=method)
    return np.where(ok, np.asarray(lo, dtype=float), np.nan), np.where(ok, np.asarray(hi, dtype=float), np.nan)


def wilson(k, n, ci_prob: float = DEFAULT_CI_PROB) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for ``k`` successes in ``n`` trials (statsmodels ``method="wilson"``).

    The interval always holds k / n; rounding can put its end a hair past it (2e-19 above 0 at
    k = 0), which a plot's error bar then draws as a negative length: the ends are clipped to k / n."""
    lo, hi = _statsmodels(k, n, ci_prob, "wilson")
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.asarray(k, dtype=float) / np.asarray(n, dtype=float)
    return np.fmin(lo, p), np.fmax(hi, p)


def beta_posterior(k, n, ci_prob: float = DEFAULT_CI_PROB) -> tuple[np.ndarray, np.ndarray]:
    """Central interval of the Jeffreys posterior Beta(k + ½, n − k + ½) (statsmodels ``"jeffreys"``)."""
    return _statsmodels(k, n, ci_prob, "jeffreys")


def jeffreys(k, n, ci_prob: float = DEFAULT_CI_PROB) -> tuple[np.ndarray, np.ndarray]:
    """Jeffreys interval with the Brown–Cai–DasGupta (2001) boundary rule: lo = 0 at k = 0, hi = 1 at k = n
    (statsmodels leaves the central interval at the boundaries; this rule is the published one)."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    lo, hi = beta_posterior(k, n, ci_prob)
    return np.where((n > 0) & (k == 0), 0.0, lo), np.where((n > 0) & (k == n), 1.0, hi)


def clopper_pearson(k, n, ci_prob: float = DEFAULT_CI_PROB) -> tuple[np.ndarray, np.ndarray]:
    """Exact (Clopper–Pearson) interval (statsmodels ``method="beta"``)."""
    return _statsmodels(k, n, ci_prob, "beta")


#: ``method=`` of a proportion interval -> function(k, n, ci_prob) -> (lo, hi)
PROPORTION_INTERVALS = {
    "wilson": wilson,
    "jeffreys": jeffreys,
    "beta_posterior": beta_posterior,
    "clopper_pearson": clopper_pearson,
}


def proportion_interval(k, n, ci_prob: float = DEFAULT_CI_PROB, method: str = "wilson") -> tuple[np.ndarray, np.ndarray]:
    """Interval for ``k`` of ``n`` by ``method`` (one of
    :data:`~rtanalysis.metrics.intervals.PROPORTION_INTERVALS`)."""
    try:
        fn = PROPORTION_INTERVALS[method]
    except KeyError:
        raise ValueError(f"method: unknown interval {method!r}; choose one of {sorted(PROPORTION_INTERVALS)}") from None
    return fn(k, n, ci_prob)


def clustered_se(x, group, cluster, n_groups: int, small_sample: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Cluster-robust SE of the mean of ``x`` within each group; returns ``(se, n_clusters)``.

    Miller (2024), "Adding Error Bars to Evals" (arXiv:2411.00640), eq. for clustered SE:
    SE = sqrt( Σ_c (Σ_{i∈c} (x_i − x̄))² ) / n, times sqrt(G / (G − 1)) when ``small_sample``
    (the CR1 factor statsmodels applies for an intercept-only OLS: G/(G−1)·(n−1)/(n−k) with k = 1).
    ``group`` and ``cluster`` are integer codes per item; a cluster is only counted within its group.
    Kept here because it runs for every group in one pass (statsmodels fits one OLS per group).
    With every item its own cluster this is the usual s/√n. Fewer than two clusters: NaN.
    """
    x = np.asarray(x, dtype=float)
    group = np.asarray(group, dtype=np.int64)
    cluster = np.asarray(cluster, dtype=np.int64)
    n = np.bincount(group, minlength=n_groups)[:n_groups].astype(float)
    mean = safe_div(np.bincount(group, weights=x, minlength=n_groups)[:n_groups], n)
    resid = x - mean[group] if len(x) else x
    width = cluster.max() + 1 if len(cluster) else 1
    codes, inverse = np.unique(group * width + cluster, return_inverse=True)  # one code per (group, cluster)
    cluster_sum = np.bincount(inverse, weights=resid, minlength=len(codes))
    cluster_group = codes // width
    meat = np.bincount(cluster_group, weights=cluster_sum**2, minlength=n_groups)[:n_groups]
    g = np.bincount(cluster_group, minlength=n_groups)[:n_groups].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = g / (g - 1) if small_sample else np.ones_like(g)
        se = np.sqrt(factor * meat) / n
    return np.where(g >= 2, se, np.nan), g.astype(np.int64)
