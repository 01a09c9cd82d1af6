"""Power helpers against hand formulas, statsmodels' NormalIndPower, and a simulation."""

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize

from rtanalysis.metrics import episodes_needed, min_detectable_difference, n_needed_exact, power_difference


def test_normal_method_matches_closed_form():
    p_a, p_b = 0.6, 0.4
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    # n = (z_{α/2} + z_β)² · (p_a q_a + p_b q_b) / δ²; the far tail adds a negligible amount of power
    closed = z**2 * (0.24 + 0.24) / 0.2**2
    exact = n_needed_exact(p_a, p_b)
    assert exact <= closed and exact == pytest.approx(closed, rel=1e-5)
    assert episodes_needed(p_a, p_b) == math.ceil(closed) == 95


def test_arcsine_method_matches_statsmodels():
    for p_a, p_b, alpha, power in [(0.6, 0.4, 0.05, 0.8), (0.9, 0.7, 0.01, 0.9), (0.15, 0.3, 0.05, 0.5)]:
        h = proportion_effectsize(p_a, p_b)
        n_sm = NormalIndPower().solve_power(effect_size=h, alpha=alpha, power=power, ratio=1.0)
        assert n_needed_exact(p_a, p_b, alpha, power, method="arcsine") == pytest.approx(n_sm, rel=1e-6)
        assert episodes_needed(p_a, p_b, alpha, power, method="arcsine") == math.ceil(n_sm)
        for n in (10, 50, 200):
            assert power_difference(n, p_a, p_b, alpha, method="arcsine") == pytest.approx(
                NormalIndPower().power(h, nobs1=n, alpha=alpha, ratio=1.0), abs=1e-10)


def test_pairing_correlation_scales_the_variance():
    base = n_needed_exact(0.5, 0.3)
    var0 = 0.25 + 0.21
    var_rho = var0 - 2 * 0.5 * math.sqrt(0.25 * 0.21)
    assert n_needed_exact(0.5, 0.3, paired_corr=0.5) == pytest.approx(base * var_rho / var0, rel=1e-6)
    assert n_needed_exact(0.5, 0.3, paired_corr=0.5, method="arcsine") == pytest.approx(
        0.5 * n_needed_exact(0.5, 0.3, method="arcsine"), rel=1e-6)
    assert n_needed_exact(0.5, 0.3, design_effect=2.0) == pytest.approx(2 * base, rel=1e-6)


def test_min_detectable_difference_inverts_episodes_needed():
    for n, p in [(50, 0.3), (200, 0.5), (60, 0.7)]:
        d = min_detectable_difference(n, p)
        assert 0 < d < 1 - p
        assert power_difference(n, p, p + d) == pytest.approx(0.8, abs=1e-8)
        assert n_needed_exact(p, p + d) == pytest.approx(n, rel=1e-6)


def test_undefined_cases_are_nan():
    assert math.isnan(episodes_needed(0.4, 0.4))
    assert math.isnan(min_detectable_difference(2, 0.9))  # even p_b = 1 is not detectable with 2 episodes
    assert math.isnan(min_detectable_difference(0, 0.5))
    with pytest.raises(ValueError, match="p_a must be in"):
        power_difference(10, 1.5, 0.2)
    with pytest.raises(ValueError, match="unknown 'exact'"):
        episodes_needed(0.5, 0.3, method="exact")


def test_power_holds_in_simulation():
    # unpooled two-sample z test at the recommended n rejects ~80% of the time
    rng = np.random.default_rng(9)
    p_a, p_b, reps = 0.5, 0.3, 2000
    n = int(episodes_needed(p_a, p_b))
    ka, kb = rng.binomial(n, p_a, reps), rng.binomial(n, p_b, reps)
    pa, pb = ka / n, kb / n
    z = (pa - pb) / np.sqrt((pa * (1 - pa) + pb * (1 - pb)) / n)
    rejected = np.mean(np.abs(z) > stats.norm.ppf(0.975))
    assert rejected == pytest.approx(0.8, abs=3 * math.sqrt(0.8 * 0.2 / reps) + 0.01)
