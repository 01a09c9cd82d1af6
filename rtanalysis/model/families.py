"""Latency families: the distribution of a decision's log-latency within a cell, as one registry.

Every family has a location μ and a scale σ per (time unit, model, task type) cell
(:func:`.build.latency_params`) plus a few shape parameters of its own (its ``params``, each a prior
in :data:`.priors.PRIORS`, one value or one per model). What the rest of the package needs from a
family is its CDF and survival function, in PyTensor for the likelihood (binned latencies, censored
silences) and in numpy for the derived quantities and the predictive checks, and its quantile
function for the replicates; they live here, so a new family is one entry, not a branch in each
layer.

* ``normal``: log-normal latency; the only family whose likelihood is written on sufficient
  statistics (and the only one with item time intensities);
* ``t``: Student-t(ν) on the log scale, for heavy tails;
* ``mixture``: two log-normal modes with one within-mode SD: a minority mode, taken with probability
  w_m ≤ ½, δ_m within-mode SDs from the majority one (δ_m > 0: a model that mostly answers at once
  and sometimes deliberates; δ_m < 0: one that mostly deliberates). μ and σ stay the mean and total
  SD of log-latency, as in the other families (the modes sit at μ − wδs and μ + (1 − w)δs, s = σ /
  √(1 + w(1 − w)δ²)). Why this form: with the fast mode at μ, σ the within-mode SD, w ∈ (0, 1) and one
  shared δ > 0, chains stuck at w ≈ 1 (one wide mode; R-hat 1.5–1.8 on the ``bimodal`` preset):
  a right-skewed model's mirror image (w > ½) fits worse than one normal, so w ≈ 1 is a local
  optimum that sampling cannot leave. With the minority share w ≤ ½ and a signed δ_m per model,
  right and left skew meet at δ_m = 0 (one normal) and no such barrier is left; μ and σ, pinned
  by the data whatever the shape, need not move when w does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import special


@dataclass(frozen=True)
class LatencyFamily:
    """One family: ``params`` are its shape parameters, ``per_model`` those with one value per model
    (their last axis is the model); the callables take log-latency ``x``, μ, σ and the shape
    parameters as keyword arrays, all broadcast together."""

    name: str
    description: str
    params: tuple[str, ...]
    per_model: tuple[str, ...]
    cdf: Callable
    sf: Callable
    logsf: Callable  # log sf, accurate far in the tail (the censored silences of a fast cell)
    ppf: Callable
    pt_logcdf: Callable
    pt_logsf: Callable


def _normal_ppf(u, mu, sigma):
    return mu + sigma * special.ndtri(u)


def _t_ppf(u, mu, sigma, nu):
    return mu + sigma * special.stdtrit(nu, u)


def _t(fn: str):
    """Student-t's ``fn`` (cdf, sf, logsf) of (x − μ)/σ; scipy.stats imported on first use (the CLI
    imports this registry for its choices)."""
    def f(x, mu, sigma, nu):
        from scipy.stats import t as student_t

        return getattr(student_t, fn)((x - mu) / sigma, nu)
    return f


def mixture_modes(mu, sigma, mode_share, mode_shift):
    """(majority mode's location, within-mode SD) of the mixture with mean ``mu`` and total SD
    ``sigma`` whose minority mode lies ``mode_shift`` within-mode SDs from it (numpy or PyTensor)."""
    within = sigma / (1 + mode_share * (1 - mode_share) * mode_shift**2) ** 0.5
    return mu - mode_share * mode_shift * within, within


def _fast_z(x, mu, sigma, mode_share, mode_shift):
    """(x − the majority mode's location) / the within-mode SD."""
    fast, within = mixture_modes(mu, sigma, mode_share, mode_shift)
    return (x - fast) / within


def _mixture_cdf(x, mu, sigma, mode_share, mode_shift):
    z = _fast_z(x, mu, sigma, mode_share, mode_shift)
    return (1 - mode_share) * special.ndtr(z) + mode_share * special.ndtr(z - mode_shift)


def _mixture_sf(x, mu, sigma, mode_share, mode_shift):
    z = _fast_z(x, mu, sigma, mode_share, mode_shift)
    return (1 - mode_share) * special.ndtr(-z) + mode_share * special.ndtr(mode_shift - z)


def _mixture_logsf(x, mu, sigma, mode_share, mode_shift):
    z = _fast_z(x, mu, sigma, mode_share, mode_shift)
    return np.logaddexp(np.log1p(-mode_share) + special.log_ndtr(-z),
                        np.log(mode_share) + special.log_ndtr(mode_shift - z))


def _mixture_ppf(u, mu, sigma, mode_share, mode_shift, iterations: int = 60):
    """The mixture's quantile by bisection in the majority mode's z: it lies between the two modes'
    quantiles, an interval of width |δ| that 60 halvings shrink below 1e-15 of it."""
    u, mu, sigma, w, shift = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in
                                                   (u, mu, sigma, mode_share, mode_shift)))
    lo = special.ndtri(u) + np.minimum(shift, 0)
    hi = special.ndtri(u) + np.maximum(shift, 0)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        below = (1 - w) * special.ndtr(mid) + w * special.ndtr(mid - shift) < u
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    fast, within = mixture_modes(mu, sigma, w, shift)
    return fast + within * 0.5 * (lo + hi)


def _pt_normal(mu, sigma):
    import pymc as pm

    return pm.Normal.dist(mu=mu, sigma=sigma)


def _lazy(fn_name, dist):
    """A PyTensor log-CDF (``logcdf``) or log-survival (``logccdf``) of ``dist(mu, sigma, **shape)``."""
    def f(x, mu, sigma, **shape):
        import pymc as pm

        return getattr(pm, fn_name)(dist(mu, sigma, **shape), x)
    return f


def _student(mu, sigma, nu):
    import pymc as pm

    return pm.StudentT.dist(nu=nu, mu=mu, sigma=sigma)


def _mixture_pt(fn_name):
    def f(x, mu, sigma, mode_share, mode_shift):
        import pymc as pm
        import pytensor.tensor as pt

        fn = getattr(pm, fn_name)
        fast_loc, within = mixture_modes(mu, sigma, mode_share, mode_shift)
        fast = fn(_pt_normal(fast_loc, within), x)
        slow = fn(_pt_normal(fast_loc + mode_shift * within, within), x)
        return pt.logaddexp(pt.log1p(-mode_share) + fast, pt.log(mode_share) + slow)
    return f


FAMILIES: dict[str, LatencyFamily] = {
    "normal": LatencyFamily(
        "normal", "log-normal", (), (),
        cdf=lambda x, mu, sigma: special.ndtr((x - mu) / sigma),
        sf=lambda x, mu, sigma: special.ndtr((mu - x) / sigma),
        logsf=lambda x, mu, sigma: special.log_ndtr((mu - x) / sigma),
        ppf=_normal_ppf,
        pt_logcdf=_lazy("logcdf", _pt_normal), pt_logsf=_lazy("logccdf", _pt_normal)),
    "t": LatencyFamily(
        "t", "Student-t on the log scale", ("nu",), (),
        cdf=_t("cdf"), sf=_t("sf"), logsf=_t("logsf"),
        ppf=_t_ppf,
        pt_logcdf=_lazy("logcdf", _student), pt_logsf=_lazy("logccdf", _student)),
    "mixture": LatencyFamily(
        "mixture", "a two-mode log-normal mixture (fast and reasoning modes)", ("mode_share", "mode_shift"),
        ("mode_share", "mode_shift"),
        cdf=_mixture_cdf, sf=_mixture_sf, logsf=_mixture_logsf, ppf=_mixture_ppf,
        pt_logcdf=_mixture_pt("logcdf"), pt_logsf=_mixture_pt("logccdf")),
}
#: in order of complexity: the LOO choice keeps the first unless another is clearly better
NAMES = tuple(FAMILIES)


def family(name: str) -> LatencyFamily:
    """The family ``name``, or a ValueError listing the known ones."""
    if name not in FAMILIES:
        raise ValueError(f"latency_family must be one of {', '.join(map(repr, NAMES))}, got {name!r}")
    return FAMILIES[name]


def at_model(fam: LatencyFamily, shape: dict, m, column: bool = False) -> dict:
    """The shape parameters for model index ``m`` (an int or an index array), each draws-first:
    a per-model array (S, models) becomes (S,) or (S, len(m)), a shared one (S,) stays (S,), or
    (S, 1) when ``m`` is an array or ``column`` (to broadcast against a trailing axis)."""
    out = {}
    for name in fam.params:
        v = np.asarray(shape[name], dtype=float)
        if name in fam.per_model:
            v = v[:, m]
            out[name] = v[:, None] if column and v.ndim == 1 else v
        else:
            out[name] = v[:, None] if column or np.ndim(m) else v
    return out
