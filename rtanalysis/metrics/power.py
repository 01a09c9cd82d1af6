"""Power of a two-sided test for a difference in success rate, for the report's power note.

Per unit (episode of each arm, or pair) the variance of A − B is

- ``method="normal"`` (default): p_a(1 − p_a) + p_b(1 − p_b) − 2ρ·sqrt(p_a(1 − p_a)·p_b(1 − p_b)),
  the unpooled two-sample normal approximation with Miller's (2024) paired-variance
  reduction, ρ = ``paired_corr`` (0 = independent samples);
- ``method="arcsine"``: Cohen's h = 2·asin√p_a − 2·asin√p_b on the variance-stabilised scale,
  variance 2(1 − ρ); with ρ = 0 this is statsmodels' ``NormalIndPower`` with
  ``proportion_effectsize``.

Both multiply by ``design_effect`` (≥ 1 when episodes are clustered, e.g. 1 + (m − 1)·ICC).
Power = Φ(δ/se − z) + Φ(−δ/se − z), z = z_{1−α/2}, se = sqrt(variance / n); both tails, like
statsmodels. ``episodes_needed`` is the smallest whole n per arm (per cell) reaching ``power``.
"""

from __future__ import annotations

import math

from scipy import optimize, stats


def _check(p, name):
    if not 0 <= p <= 1:
        raise ValueError(f"{name} must be in [0, 1], got {p}")


def _effect_and_variance(p_a: float, p_b: float, paired_corr: float, method: str) -> tuple[float, float]:
    if method == "normal":
        va, vb = p_a * (1 - p_a), p_b * (1 - p_b)
        return abs(p_a - p_b), va + vb - 2 * paired_corr * math.sqrt(va * vb)
    if method == "arcsine":
        h = 2 * math.asin(math.sqrt(p_a)) - 2 * math.asin(math.sqrt(p_b))
        return abs(h), 2 * (1 - paired_corr)
    raise ValueError(f"method: unknown {method!r}; choose 'normal' or 'arcsine'")


def power_difference(n: float, p_a: float, p_b: float, alpha: float = 0.05, paired_corr: float = 0.0,
                     design_effect: float = 1.0, method: str = "normal") -> float:
    """Probability that a two-sided level-``alpha`` test detects p_a ≠ p_b with ``n`` per arm."""
    _check(p_a, "p_a")
    _check(p_b, "p_b")
    if not -1 <= paired_corr <= 1:
        raise ValueError(f"paired_corr must be in [-1, 1], got {paired_corr}")
    if design_effect <= 0:
        raise ValueError(f"design_effect must be > 0, got {design_effect}")
    effect, var = _effect_and_variance(p_a, p_b, paired_corr, method)
    z = stats.norm.ppf(1 - alpha / 2)
    var *= design_effect
    if var <= 0:
        return 1.0 if effect > 0 else alpha
    ncp = effect / math.sqrt(var / n)
    return float(stats.norm.cdf(ncp - z) + stats.norm.cdf(-ncp - z))


def _solve_n(p_a, p_b, alpha, power, paired_corr, design_effect, method) -> float:
    def gap(n):
        return power_difference(n, p_a, p_b, alpha, paired_corr, design_effect, method) - power

    hi = 1.0
    while gap(hi) < 0:
        hi *= 2
        if hi > 1e12:
            return math.nan
    return optimize.brentq(gap, 1e-9, hi, xtol=1e-10) if gap(1e-9) < 0 else 1e-9


def episodes_needed(p_a: float, p_b: float, alpha: float = 0.05, power: float = 0.8, paired_corr: float = 0.0,
                    design_effect: float = 1.0, method: str = "normal") -> float:
    """Episodes per cell (per arm; pairs when paired) to detect p_a vs p_b with ``power``.

    Returns the smallest whole number (as an int-valued float), or NaN when p_a == p_b (no n
    detects a zero difference). See the module doc for the variance and ``paired_corr``.
    """
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power}")
    _effect_and_variance(p_a, p_b, paired_corr, method)  # validates method
    if p_a == p_b:
        return math.nan
    n = _solve_n(p_a, p_b, alpha, power, paired_corr, design_effect, method)
    return float(math.ceil(n - 1e-9)) if math.isfinite(n) else math.nan


def n_needed_exact(p_a: float, p_b: float, alpha: float = 0.05, power: float = 0.8, paired_corr: float = 0.0,
                   design_effect: float = 1.0, method: str = "normal") -> float:
    """The real-valued n at which the power curve crosses ``power`` (``episodes_needed`` rounds it up)."""
    if p_a == p_b:
        return math.nan
    return _solve_n(p_a, p_b, alpha, power, paired_corr, design_effect, method)


def min_detectable_difference(n: float, p: float, alpha: float = 0.05, power: float = 0.8, paired_corr: float = 0.0,
                              design_effect: float = 1.0, method: str = "normal") -> float:
    """Smallest increase δ > 0 over baseline rate ``p`` detectable with ``power`` at ``n`` per arm.

    Solves power(n, p, p + δ) = ``power``; NaN when even p + δ = 1 is not detectable (or n ≤ 0).
    """
    _check(p, "p")
    if n <= 0 or p >= 1:
        return math.nan

    def gap(delta):
        return power_difference(n, p, p + delta, alpha, paired_corr, design_effect, method) - power

    top = 1 - p
    if gap(top) < 0:
        return math.nan
    return float(optimize.brentq(gap, 1e-12, top, xtol=1e-12))


__all__ = ["power_difference", "episodes_needed", "n_needed_exact", "min_detectable_difference"]
