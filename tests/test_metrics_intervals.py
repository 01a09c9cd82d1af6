"""Proportion intervals and the clustered SE against hand arithmetic, statsmodels, and simulation."""

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from rtanalysis.metrics import beta_posterior, clopper_pearson, clustered_se, jeffreys, proportion_interval, wilson

Z95 = 1.959963984540054


def test_wilson_by_hand_3_of_5():
    # centre = (k + z²/2)/(n + z²); half = z/(n + z²)·sqrt(k(n−k)/n + z²/4)
    k, n, z2 = 3, 5, Z95**2
    centre = (3 + z2 / 2) / (5 + z2)
    half = Z95 / (5 + z2) * math.sqrt(3 * 2 / 5 + z2 / 4)
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(centre - half, abs=1e-12)
    assert hi == pytest.approx(centre + half, abs=1e-12)
    assert (lo, hi) == pytest.approx((0.230724, 0.882379), abs=1e-6)


@pytest.mark.parametrize("ci_prob", [0.8, 0.95, 0.99])
def test_wilson_matches_the_formula_at_every_ci_prob(ci_prob):
    # the intervals come from statsmodels; check them against the published formula, not itself
    n = np.array([1, 2, 5, 10, 10, 10, 37, 200], dtype=float)
    k = np.array([0, 1, 3, 0, 10, 7, 12, 199], dtype=float)
    z = stats.norm.ppf(0.5 + ci_prob / 2)
    centre = (k + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * np.sqrt(k * (n - k) / n + z * z / 4)
    lo, hi = wilson(k, n, ci_prob)
    np.testing.assert_allclose(lo, np.clip(centre - half, 0, 1), atol=1e-12)
    np.testing.assert_allclose(hi, np.clip(centre + half, 0, 1), atol=1e-12)


def test_beta_posterior_and_clopper_pearson_are_beta_quantiles():
    n = np.array([1, 5, 10, 10, 40])
    k = np.array([0, 3, 0, 10, 17])
    lo, hi = beta_posterior(k, n, 0.9)
    np.testing.assert_allclose(lo, stats.beta.ppf(0.05, k + 0.5, n - k + 0.5), atol=1e-10)
    np.testing.assert_allclose(hi, stats.beta.ppf(0.95, k + 0.5, n - k + 0.5), atol=1e-10)
    lo, hi = clopper_pearson(k, n)
    inner = (k > 0) & (k < n)
    np.testing.assert_allclose(lo[inner], stats.beta.ppf(0.025, k[inner], n[inner] - k[inner] + 1), atol=1e-10)
    np.testing.assert_allclose(hi[inner], stats.beta.ppf(0.975, k[inner] + 1, n[inner] - k[inner]), atol=1e-10)
    assert lo[k == 0].tolist() == [0.0, 0.0] and hi[k == n].tolist() == [1.0]


def test_jeffreys_boundary_rule_and_interior():
    lo, hi = jeffreys([0, 10, 4], [10, 10, 10])
    assert lo[0] == 0.0 and hi[0] == pytest.approx(stats.beta.ppf(0.975, 0.5, 10.5))
    assert hi[1] == 1.0 and lo[1] == pytest.approx(stats.beta.ppf(0.025, 10.5, 0.5))
    assert (lo[2], hi[2]) == pytest.approx((stats.beta.ppf(0.025, 4.5, 6.5), stats.beta.ppf(0.975, 4.5, 6.5)))


def test_zero_trials_give_nan_not_zero():
    for method in ("wilson", "jeffreys", "beta_posterior", "clopper_pearson"):
        lo, hi = proportion_interval([0, 2], [0, 4], method=method)
        assert np.isnan(lo[0]) and np.isnan(hi[0])
        assert 0 < lo[1] < 0.5 < hi[1] < 1


def test_unknown_method_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown interval 'wald'"):
        proportion_interval(1, 2, method="wald")


def test_clustered_se_five_episodes_by_hand():
    # x = 1,1,0,1,0 in clusters A,A,B,B,C: x̄ = 0.6
    # cluster residual sums: A 0.4+0.4 = 0.8, B −0.6+0.4 = −0.2, C −0.6
    # SE = sqrt(G/(G−1) · (0.64 + 0.04 + 0.36)) / n = sqrt(1.5 · 1.04) / 5
    se, g = clustered_se([1, 1, 0, 1, 0], [0] * 5, [0, 0, 1, 1, 2], 1)
    assert g[0] == 3
    assert se[0] == pytest.approx(math.sqrt(1.5 * 1.04) / 5, abs=1e-12)
    raw, _ = clustered_se([1, 1, 0, 1, 0], [0] * 5, [0, 0, 1, 1, 2], 1, small_sample=False)
    assert raw[0] == pytest.approx(math.sqrt(1.04) / 5, abs=1e-12)


def test_clustered_se_singletons_is_the_usual_standard_error():
    x = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0])
    se, _ = clustered_se(x, np.zeros(6, int), np.arange(6), 1)
    assert se[0] == pytest.approx(x.std(ddof=1) / math.sqrt(6), abs=1e-12)


def test_clustered_se_matches_statsmodels_ols_cluster():
    rng = np.random.default_rng(11)
    cluster = rng.integers(0, 9, size=60)
    x = (rng.random(60) < 0.2 + 0.06 * cluster).astype(float)
    # statsmodels' CR1 factor G/(G−1)·(N−1)/(N−K) is G/(G−1) for an intercept-only model (K = 1)
    fit = sm.OLS(x, np.ones((60, 1))).fit(cov_type="cluster", cov_kwds={"groups": cluster})
    se, g = clustered_se(x, np.zeros(60, int), cluster, 1)
    assert g[0] == len(np.unique(cluster))
    assert se[0] == pytest.approx(fit.bse[0], rel=1e-10)


def test_clustered_se_is_per_group_and_nan_with_one_cluster():
    # group 0: two clusters; group 1: a single cluster -> undefined
    se, g = clustered_se([1, 0, 1, 1, 0], [0, 0, 0, 1, 1], [5, 6, 6, 5, 5], 3)
    assert list(g) == [2, 1, 0]
    assert np.isfinite(se[0]) and np.isnan(se[1]) and np.isnan(se[2])


def _binomial_exact_coverage(n_values, p):
    """Exact Wilson coverage at p averaged over the n values drawn."""
    cov = {}
    for n in np.unique(n_values):
        k = np.arange(n + 1)
        lo, hi = wilson(k, np.full(n + 1, n))
        cov[n] = stats.binom.pmf(k, n, p)[(lo <= p) & (p <= hi)].sum()
    return float(np.mean([cov[n] for n in n_values]))


def test_wilson_covers_known_p_in_simulation():
    rng = np.random.default_rng(2024)
    p, reps = 0.3, 2000
    n = rng.integers(10, 61, size=reps)
    k = rng.binomial(n, p)
    lo, hi = wilson(k, n)
    coverage = np.mean((lo <= p) & (p <= hi))
    assert 0.93 <= coverage <= 0.97
    mc_se = math.sqrt(0.95 * 0.05 / reps)
    assert coverage == pytest.approx(_binomial_exact_coverage(n, p), abs=4 * mc_se)


def test_clustered_interval_covers_known_p_where_naive_one_does_not():
    rng = np.random.default_rng(7)
    reps, clusters, per = 2000, 40, 5
    p, icc = 0.4, 0.3
    a = p * (1 - icc) / icc
    b = (1 - p) * (1 - icc) / icc  # Beta(a, b): mean p, intra-cluster correlation icc
    pc = rng.beta(a, b, size=(reps, clusters, 1))
    x = (rng.random((reps, clusters, per)) < pc).astype(float).ravel()
    dataset = np.repeat(np.arange(reps), clusters * per)
    cluster = np.tile(np.repeat(np.arange(clusters), per), reps)
    mean = np.bincount(dataset, weights=x) / (clusters * per)
    se, _ = clustered_se(x, dataset, cluster, reps)
    naive, _ = clustered_se(x, dataset, np.arange(len(x)), reps)
    cover = np.mean(np.abs(mean - p) <= Z95 * se)
    cover_naive = np.mean(np.abs(mean - p) <= Z95 * naive)
    assert 0.93 <= cover <= 0.97
    assert cover_naive < 0.90  # ignoring the clustering overstates precision
