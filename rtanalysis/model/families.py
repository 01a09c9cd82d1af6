"""Latency families: the distribution of a decision's log-latency within a cell, as one registry.

Every family has a location μ and a scale σ per (time unit, model, task type) cell
(:func:`.build.latency_params`) plus a few shape parameters of its own (its ``params``, each a prior
in :data:`~rtanalysis.model.priors.PRIORS`, one value or one per model). What the rest of the package needs
from a family is its CDF, survival function and density, in PyTensor for the likelihood (order statistics of
latency, censored silences) and in numpy for the derived quantities and the predictive checks, and its
quantile function for the replicates; they live here, so a new family is one entry, not a branch in each
layer.

* ``normal``: log-normal latency; the only family whose likelihood is written on sufficient
  statistics (and the only one with item time intensities);
* ``t``: Student-t(ν) on the log scale, for heavy tails;
* ``mixture``: two log-normal modes with one within-mode SD s: a second mode, taken with
  probability w_m, δ_m within-mode SDs from the first (per model). μ and σ stay the mean and total SD
  of log-latency, as in the other families (the modes sit at μ − wδs and μ + (1 − w)δs, s = σ /
  √(1 + w(1 − w)δ²)), so the data pin them whatever the shape. (w, δ) and (1 − w, −δ) are the same
  distribution; the labels are left free and what is reported and diagnosed is label-free
  (``slow_mode_share``, ``mode_gap`` = ``|δ|``). Why: every labelled form measured left chains in a
  mirror-image basin they could not leave on the ``bimodal`` preset (4 chains × 400, seeds 100 and
  103): the fast mode at μ, w ∈ (0, 1), one δ > 0 shared: w ≈ 1 (R-hat 1.7–1.8); the same with μ, σ
  as mean and total SD: w ≈ 1 (R-hat 1.53); a minority share w ≤ ½ with a signed δ per model: w = ½
  with δ of the wrong sign (R-hat 1.53, also when the chains start on the right side). With the
  labels free, each basin is connected to its mirror image: all chains agree
  (``benchmarks/mixture_chains.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

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
    pt_logpdf: Callable  # log density (the order statistics' own terms of the latency likelihood)
    #: the chains' starting values of the shape parameters from the data (``ModelData``), not
    #: jittered; None: the sampler's default start
    initial: Optional[Callable] = None
    #: what is reported and diagnosed of the shape: name → (function of the shape tensors, dims);
    #: the parameters themselves where empty
    reported: dict = field(default_factory=dict)

    @property
    def summaries(self) -> tuple[str, ...]:
        """The names reported for this family's shape (label-free where the labels are not)."""
        return tuple(self.reported) or self.params


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
    """(first mode's location, within-mode SD) of the mixture with mean ``mu`` and total SD ``sigma``
    whose second mode (share ``mode_share``) lies ``mode_shift`` within-mode SDs from it (numpy or PyTensor)."""
    within = sigma / (1 + mode_share * (1 - mode_share) * mode_shift**2) ** 0.5
    return mu - mode_share * mode_shift * within, within


def _first_z(x, mu, sigma, mode_share, mode_shift):
    """(x − the first mode's location) / the within-mode SD."""
    first, within = mixture_modes(mu, sigma, mode_share, mode_shift)
    return (x - first) / within


def _mixture_cdf(x, mu, sigma, mode_share, mode_shift):
    z = _first_z(x, mu, sigma, mode_share, mode_shift)
    return (1 - mode_share) * special.ndtr(z) + mode_share * special.ndtr(z - mode_shift)


def _mixture_sf(x, mu, sigma, mode_share, mode_shift):
    z = _first_z(x, mu, sigma, mode_share, mode_shift)
    return (1 - mode_share) * special.ndtr(-z) + mode_share * special.ndtr(mode_shift - z)


def _mixture_logsf(x, mu, sigma, mode_share, mode_shift):
    z = _first_z(x, mu, sigma, mode_share, mode_shift)
    return np.logaddexp(np.log1p(-mode_share) + special.log_ndtr(-z),
                        np.log(mode_share) + special.log_ndtr(mode_shift - z))


def _mixture_ppf(u, mu, sigma, mode_share, mode_shift, iterations: int = 60):
    """The mixture's quantile by bisection in the first mode's z: it lies between the two modes'
    quantiles, an interval of width |δ| that 60 halvings shrink below 1e-15 of it."""
    u, mu, sigma, w, shift = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in
                                                   (u, mu, sigma, mode_share, mode_shift)))
    lo = special.ndtri(u) + np.minimum(shift, 0)
    hi = special.ndtri(u) + np.maximum(shift, 0)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        below = (1 - w) * special.ndtr(mid) + w * special.ndtr(mid - shift) < u
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    first, within = mixture_modes(mu, sigma, w, shift)
    return first + within * 0.5 * (lo + hi)


def _pt_normal(mu, sigma):
    import pymc as pm

    return pm.Normal.dist(mu=mu, sigma=sigma)


def _lazy(fn_name, dist):
    """A PyTensor log-density (``logp``), log-CDF (``logcdf``) or log-survival (``logccdf``) of
    ``dist(mu, sigma, **shape)``."""
    def f(x, mu, sigma, **shape):
        import pymc as pm

        return getattr(pm, fn_name)(dist(mu, sigma, **shape), x)
    return f


def _student(mu, sigma, nu):
    import pymc as pm

    return pm.StudentT.dist(nu=nu, mu=mu, sigma=sigma)


#: below this log-probability the Student-t's lower tail is taken from its series, not the incomplete beta
T_FAR_LOG_CDF = -600.0


def _t_logcdf(x, mu, sigma, nu, terms: int = 8):
    """log P(X ≤ x) of Student-t(ν, μ, σ) in PyTensor, finite with a finite gradient in both tails.
    PyMC's log-CDF is log of the regularised incomplete beta, which underflows (−inf, NaN gradient)
    once the probability is below ~1e-308; there the series F(z) = ½ I_w(ν/2, ½), w = ν/(ν + z²),
    I_w(a, b) = w^a (1 − w)^b / (a B(a, b)) · Σ_n (a + b)_n / (a + 1)_n w^n takes over (w is tiny
    there, so a few terms are exact to rounding). Each branch sees only arguments it is finite at
    (a NaN in the branch not taken would still poison the gradient)."""
    import pymc as pm
    import pytensor.tensor as pt

    z = (x - mu) / sigma
    a, b = nu / 2, 0.5
    log_c = pt.gammaln(a + b) - pt.gammaln(a) - 0.5 * pt.log(nu * np.pi)  # the density's constant
    leading = log_c + 0.5 * (nu - 1) * pt.log(nu) - nu * pt.log(pt.maximum(-z, 1.0))  # ≈ log F far below
    far = (z < -1.0) & (leading < T_FAR_LOG_CDF)
    z_far = pt.switch(far, z, -1e3)
    w = nu / (nu + z_far**2)
    # the series' terms along a new last axis, summed in log space: written as a Python loop of
    # products, the log-CDF, log-survival and their gradient took PyTensor's rewrites 94 s to compile
    # (7 s this way), same values to 2e-16
    n = pt.constant(np.arange(terms + 1, dtype="float64"))
    a_n, w_n = pt.shape_padright(pt.as_tensor(a)), pt.shape_padright(w)
    log_terms = (pt.gammaln(a_n + b + n) - pt.gammaln(a_n + b) - pt.gammaln(a_n + 1 + n) + pt.gammaln(a_n + 1)
                 + n * pt.log(w_n))
    log_beta = pt.gammaln(a) + pt.gammaln(b) - pt.gammaln(a + b)
    series = (-np.log(2.0) + a * pt.log(w) + b * pt.log1p(-w) - pt.log(a) - log_beta
              + pt.logsumexp(log_terms, axis=-1))
    exact = pm.logcdf(pm.StudentT.dist(nu=nu, mu=0.0, sigma=1.0), pt.switch(far, -1.0, z))
    return pt.switch(far, series, exact)


def _t_logsf(x, mu, sigma, nu):
    """log P(X > x) by symmetry, log P(X ≤ 2μ − x): PyMC's own log-survival is log(1 − F), which is
    −inf with a NaN gradient from z ≈ 30 at ν = 60 (a censored silence far above a fast cell's
    latencies), and NUTS then stopped every trajectory ("NaN energy error")."""
    return _t_logcdf(2 * mu - x, mu, sigma, nu)


def _mixture_pt(fn_name):
    """The mixture's PyTensor log-density (``logp``), log-CDF (``logcdf``) or log-survival (``logccdf``):
    each mode's, weighted."""
    def f(x, mu, sigma, mode_share, mode_shift):
        import pymc as pm
        import pytensor.tensor as pt

        fn = getattr(pm, fn_name)
        first, within = mixture_modes(mu, sigma, mode_share, mode_shift)
        in_first = fn(_pt_normal(first, within), x)
        in_second = fn(_pt_normal(first + mode_shift * within, within), x)
        return pt.logaddexp(pt.log1p(-mode_share) + in_first, pt.log(mode_share) + in_second)
    return f


def skew_sign(d) -> np.ndarray:
    """Per model, the sign of its log-latencies' skew (+1 right, −1 left): Bowley's quantile skew
    (q90 + q10 − 2 q50)/(q90 − q10) of each informative latency cell, from the cell's bin edges (cut
    at its own quantiles, :data:`.data.BIN_QUANTILES`), averaged over the model's cells by decisions."""
    from .data import BIN_QUANTILES

    q10, q50, q90 = (int(np.flatnonzero(np.isclose(BIN_QUANTILES, q))[0]) for q in (0.1, 0.5, 0.9))
    L, e = d.latency, np.asarray(d.bin_edges, dtype=float)
    weight = L["n"].to_numpy(float) * (L["informative"].to_numpy(float) if "informative" in L else 1.0)
    spread = e[:, q90] - e[:, q10] if len(L) else np.zeros(0)
    skew = np.where(spread > 0, (e[:, q90] + e[:, q10] - 2 * e[:, q50]) / np.where(spread > 0, spread, 1), 0.0)
    m = L["m"].to_numpy() if len(L) else np.zeros(0, dtype=np.int64)
    total = np.bincount(m, weights=weight * skew, minlength=len(d.models))
    return np.where(total < 0, -1.0, 1.0)


def _mixture_initial(d) -> dict:
    """Each model's chains start with a second mode of share 0.2 on the side its latencies are
    skewed to (δ = ±2), near one of the two labellings the data favour, not in between."""
    return {"mode_share": np.full(len(d.models), 0.2), "mode_shift": 2.0 * skew_sign(d)}


def _slow_share(shape):
    """Share of the slower mode: w where the second mode is the slower (δ > 0), else 1 − w."""
    import pytensor.tensor as pt

    return pt.switch(shape["mode_shift"] > 0, shape["mode_share"], 1 - shape["mode_share"])


def _gap(shape):
    """|δ|: the modes' distance in within-mode SDs."""
    import pytensor.tensor as pt

    return pt.abs(shape["mode_shift"])


FAMILIES: dict[str, LatencyFamily] = {
    "normal": LatencyFamily(
        "normal", "log-normal", (), (),
        cdf=lambda x, mu, sigma: special.ndtr((x - mu) / sigma),
        sf=lambda x, mu, sigma: special.ndtr((mu - x) / sigma),
        logsf=lambda x, mu, sigma: special.log_ndtr((mu - x) / sigma),
        ppf=_normal_ppf,
        pt_logcdf=_lazy("logcdf", _pt_normal), pt_logsf=_lazy("logccdf", _pt_normal),
        pt_logpdf=_lazy("logp", _pt_normal)),
    "t": LatencyFamily(
        "t", "Student-t on the log scale", ("nu",), (),
        cdf=_t("cdf"), sf=_t("sf"), logsf=_t("logsf"),
        ppf=_t_ppf,
        pt_logcdf=_t_logcdf, pt_logsf=_t_logsf,
        pt_logpdf=_lazy("logp", _student)),
    "mixture": LatencyFamily(
        "mixture", "a two-mode log-normal mixture (fast and reasoning modes)", ("mode_share", "mode_shift"),
        ("mode_share", "mode_shift"),
        cdf=_mixture_cdf, sf=_mixture_sf, logsf=_mixture_logsf, ppf=_mixture_ppf,
        pt_logcdf=_mixture_pt("logcdf"), pt_logsf=_mixture_pt("logccdf"), pt_logpdf=_mixture_pt("logp"),
        initial=_mixture_initial,
        reported={"slow_mode_share": (_slow_share, "model"), "mode_gap": (_gap, "model")}),
}
#: in order of complexity: the LOO choice keeps the first unless another is clearly better
NAMES = tuple(FAMILIES)


def family(name: str) -> LatencyFamily:
    """The family ``name``, or a ValueError listing the known ones."""
    if name not in FAMILIES:
        raise ValueError(f"latency_family must be one of {', '.join(map(repr, NAMES))}, got {name!r}")
    return FAMILIES[name]


#: the wrong share q of a latency cell, kept off 0 and 1 where it weights log-probabilities (log 0 has no gradient)
WRONG_SHARE_FLOOR = 1e-12


def mixed_log_sf(fam_logsf, log_point, mu, sigma, shift, q, logaddexp, log, log1p, **shape):
    """log P(L > point) of a decision whose content is wrong with probability q (log-latency mean μ + shift)
    and right otherwise (mean μ), under a family's log-survival ``fam_logsf``: one formula for the model
    (PyTensor's functions) and the derived quantities (numpy's)."""
    return logaddexp(log1p(-q) + fam_logsf(log_point, mu, sigma, **shape),
                     log(q) + fam_logsf(log_point, mu + shift, sigma, **shape))


def normal_gauss_hermite(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` Gauss–Hermite nodes and weights for an expectation over a standard normal (probabilists'
    Hermite, the weights summing to 1)."""
    x, w = np.polynomial.hermite_e.hermegauss(n)
    return x, w / w.sum()


#: Gauss–Hermite nodes over an episode's slowness given its acted latencies, in the silences' censored term
#: (:func:`episode_silence_loglik`)
SILENT_SLOWNESS_NODES = 32
#: their nodes and log-weights (:func:`normal_gauss_hermite`)
SILENT_SLOWNESS_GH = (lambda x, w: (x, np.log(w)))(*normal_gauss_hermite(SILENT_SLOWNESS_NODES))


def slowness_given_acted(mu, sigma, icc, n, xbar, sqrt) -> tuple:
    """(centre, variance, within-episode SD): an episode's mean log-latency μ + s given its ``n`` acted
    log-latencies of mean ``xbar`` is normal with mean μ + nτ²(x̄ − μ)/V and variance τ²σ_w²/V, τ² = rσ²,
    σ_w² = (1 − r)σ², V = σ_w² + nτ² (r = ``icc``; n = 0: the prior, mean μ and variance τ²)."""
    var = sigma**2
    var_w, tau2 = var * (1 - icc), var * icc
    denom = var_w + n * tau2
    return mu + n * tau2 * (xbar - mu) / denom, tau2 * var_w / denom, sqrt(var_w)


def single_silence_loglik(logsf, log_close, mu, sigma, icc, n, xbar, log_pi, log1m_pi, logaddexp, sqrt) -> tuple:
    """(with the no-answer mode, without) log-likelihood of an episode with one silence under episode
    slowness, in closed form: E_s S(g | μ + s, σ_w) = S(g | centre, √(v + σ_w²)) for s normal
    (:func:`slowness_given_acted`), so log[π + (1 − π)·S(g | centre, √(v + σ_w²))] and, without the mode,
    log S(...). Per group (..., G): every argument but the functions."""
    centre, v, sd_w = slowness_given_acted(mu, sigma, icc, n, xbar, sqrt)
    log_s = logsf(log_close, centre, sqrt(v + sd_w**2))
    return logaddexp(log_pi, log1m_pi + log_s), log_s


def episode_silence_loglik(logsf, log_close, count, mu, sigma, icc, n, xbar, log_pi, log1m_pi, logaddexp,
                           logsumexp, sqrt) -> tuple:
    """(with the no-answer mode, without) log-likelihood of one episode's silences under episode slowness:
    log E_s Π_j [π + (1 − π)·S(g_j | μ + s, σ_w)]^count_j, without the mode π = 0, for s from its
    conditional given the episode's acted latencies (:func:`slowness_given_acted`), so that with the acted
    decisions' marginal term (``build._latency_likelihood``) the episode's likelihood is exact up to the
    quadrature (:data:`SILENT_SLOWNESS_NODES` nodes centred on that conditional). An episode with one
    silence has a closed form (:func:`single_silence_loglik`). Shapes: per group ``mu``, ``sigma``,
    ``icc``, ``n``, ``xbar``, ``log_pi``, ``log1m_pi`` (..., G); ``log_close``, ``count`` (G, R), padded
    with count 0. One formula for the model (PyTensor's functions) and the derived quantities (numpy's)."""
    z, log_w = SILENT_SLOWNESS_GH
    centre, v, sd_w = slowness_given_acted(mu, sigma, icc, n, xbar, sqrt)
    at = centre[..., None] + sqrt(v)[..., None] * z  # (..., G, Q) the episode's mean log-latency at each node
    log_s = logsf(log_close[..., None], at[..., None, :], sd_w[..., None, None])  # (..., G, R, Q)
    cnt = count[..., None]
    with_mode = (cnt * logaddexp(log_pi[..., None, None], log1m_pi[..., None, None] + log_s)).sum(axis=-2)
    without = (cnt * log_s).sum(axis=-2)
    return logsumexp(log_w + with_mode, axis=-1), logsumexp(log_w + without, axis=-1)


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
