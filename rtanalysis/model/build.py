"""The PyMC model: hierarchical capability (logit) × log-normal latency × per-type timing fatality.

All likelihood terms are written on the aggregated tables of :mod:`.data` as potentials (exact for
the Normal sufficient statistics, the censored counts and the grouped binomials), so sampling cost
grows with the number of cells, not episodes. Every prior comes from :data:`~rtanalysis.model.priors.PRIORS`.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from .data import ModelData, informative_cells, silent_episode_arrays
from .families import (WRONG_SHARE_FLOOR, LatencyFamily, episode_silence_loglik, family, mixed_log_sf,
                       single_silence_loglik)
from .priors import LEAK, PRIORS, latency_prior_fill
from .spec import ModelSpec

LOG_2PI = float(np.log(2 * np.pi))
#: the main parameters whose convergence decides ``diagnostics_ok``
MAIN_PARAMS = ("a0", "sd_model_cap", "sd_type_cap", "sd_model_type_cap", "sd_item_cap", "sd_item_lat", "fatality", "c0",
               "sd_model_lat", "sd_type_lat", "sd_model_type_lat", "s0", "sd_model_sigma", "sd_type_sigma", "silence",
               "silence_prevalence", "length_cap", "always_fatal", "item_cap_per_lat", "timed_cap",
               "model_cap", "type_cap", "model_type_cap", "model_lat", "type_lat", "model_type_lat", "model_sigma",
               "type_sigma", "nu", "slow_mode_share", "mode_gap", "wrong_lat", "latency_icc")


def _prior(name: str, dims=None, initval=None, **fill):
    dist, kwargs, _ = PRIORS[name]
    kw = {k: fill.get(v, v) if isinstance(v, str) else v for k, v in kwargs.items()}
    return getattr(pm, dist)(name, **kw, dims=dims, initval=initval)


def _scale(name: str):
    """A group-effect scale: a fixed number (``Fixed`` in the registry) or a hyperprior RV."""
    dist, kwargs, _ = PRIORS[name]
    return float(kwargs["value"]) if dist == "Fixed" else _prior(name)


def _data(name, values, dtype):
    return pm.Data(name, np.asarray(values, dtype=dtype))


def latency_params(d: ModelData):
    """(mu, log_sigma) tensors over the full (unit, model, task_type) grid, inside a model context."""
    # fixed per time unit, not from the data (priors.py); passed as data, not constants baked into the
    # graph, so the same compiled function serves any dataset
    fill = latency_prior_fill(d.units)
    c0 = _prior("c0", dims="unit", center=_data("ref_center", fill["center"], "float64"))
    s0 = _prior("s0", dims="unit", log_scale=_data("ref_log_scale", fill["log_scale"], "float64"))
    # latency cells hold hundreds of decisions: the centred form samples well there (non-centred
    # effects with tight data make a funnel); zero-sum effects keep c0/s0 identified. Where no cell's
    # latencies are informative (tick-constant or capped: RealtimeGym), no likelihood term informs
    # the effects, and the centred form is Neal's funnel between each effect and its scale; the
    # non-centred form samples that prior exactly
    centred = latency_informed(d)
    sd_m, sd_k, sd_mk = _scale("sd_model_lat"), _scale("sd_type_lat"), _scale("sd_model_type_lat")
    sds_m, sds_k = _scale("sd_model_sigma"), _scale("sd_type_sigma")
    u_m = _zero_sum_effect("model_lat", sd_m, "model", centred)
    v_k = _zero_sum_effect("type_lat", sd_k, "task_type", centred)
    w_mk = _zero_sum_effect("model_type_lat", sd_mk, ("model", "task_type"), centred, n_zerosum_axes=2)
    s_m = _zero_sum_effect("model_sigma", sds_m, "model", centred)
    s_k = _zero_sum_effect("type_sigma", sds_k, "task_type", centred)
    mu = c0[:, None, None] + (u_m[:, None] + v_k[None, :] + w_mk)[None, :, :]
    log_sigma = s0[:, None, None] + (s_m[:, None] + s_k[None, :])[None, :, :]
    return mu, log_sigma


def latency_informed(d: ModelData) -> bool:
    """Some latency cell is in the latency likelihood (:func:`.data.informative_cells`)."""
    return bool(len(d.latency)) and bool(informative_cells(d.latency).any())


def _zero_sum_effect(name: str, sd, dims, centred: bool, **kw):
    """A zero-sum group effect with scale ``sd``: centred, or ``sd`` times a standard zero-sum effect
    (``<name>_z``), kept under ``name`` as a deterministic so every reader finds it there."""
    if centred:
        return pm.ZeroSumNormal(name, sigma=sd, dims=dims, **kw)
    return pm.Deterministic(name, sd * pm.ZeroSumNormal(f"{name}_z", sigma=1.0, dims=dims, **kw), dims=dims)


def latency_shape(fam: LatencyFamily, d: ModelData) -> dict:
    """The family's shape parameters (:mod:`.families`) as random variables, one per model where the
    family says so, starting where the family's ``initial`` puts them for ``d`` (not jittered)."""
    start = fam.initial(d) if fam.initial is not None else {}
    shape = {name: _prior(name, dims="model" if name in fam.per_model else None, initval=start.get(name))
             for name in fam.params}
    for name, (fn, dims) in fam.reported.items():  # label-free summaries, for diagnostics and reports
        pm.Deterministic(name, fn(shape), dims=dims)
    return shape


def shape_at(fam: LatencyFamily, shape: dict, m, column: bool = False) -> dict:
    """The shape parameters of the rows whose model index is the tensor ``m``; ``column``: as (rows,
    1), to broadcast against a trailing axis (a shared parameter, a scalar, broadcasts as it is)."""
    return {name: (v[m][:, None] if column else v[m]) if name in fam.per_model else v for name, v in shape.items()}


def binned_latency(d: ModelData, mu, sigma, fam: LatencyFamily, shape: dict, cell_m):
    """(log-likelihood terms, their weights), each (cells, 27), of the kept order statistics of log-latency
    under family ``fam`` (:data:`.data.BIN_EDGE_METHOD`): 14 columns log P(between consecutive edges)
    weighted by the decisions there, then 13 log densities at the edges weighted 1 where the edge is a
    distinct order statistic. Σ weight × term is the exact log-likelihood of those order statistics (up
    to a constant), the likelihood every latency family shares for LOO. ``cell_m``: each cell's model."""
    pad = not len(d.latency)
    n_edges = d.bin_edges.shape[1]
    edges = _data("bin_edges", np.zeros((1, n_edges)) if pad else d.bin_edges, "float64")
    counts = _data("lat_bins", np.zeros((1, d.binned.shape[1])) if pad else d.binned.to_numpy(), "float64")
    weight = np.zeros((1, n_edges)) if pad else latency_weights(d)[:, d.binned.shape[1]:]
    args = (edges, mu[:, None], sigma[:, None])
    kw = shape_at(fam, shape, cell_m, column=True)
    log_cdf, log_sf, log_pdf = fam.pt_logcdf(*args, **kw), fam.pt_logsf(*args, **kw), fam.pt_logpdf(*args, **kw)
    rows = log_cdf.shape[0]
    inf, zero = pt.full((rows, 1), -np.inf), pt.zeros((rows, 1))
    between = _log_bin_probs(pt.concatenate([inf, log_cdf, zero], axis=1),  # the outer bins are open-ended
                             pt.concatenate([zero, log_sf, inf], axis=1))
    # decisions between two equal edges (tied log-latencies: a coarse clock) are at that value: their
    # density, as a per-decision likelihood would have it (a difference of CDFs there is 0)
    tied = pt.eq(edges[:, 1:], edges[:, :-1])
    between = pt.concatenate([between[:, :1], pt.switch(tied, log_pdf[:, :-1], between[:, 1:-1]), between[:, -1:]],
                             axis=1)
    terms = pt.concatenate([between, log_pdf], axis=1)
    return terms, pt.concatenate([counts, _data("edge_weight", weight, "float64")], axis=1)


def latency_weights(d: ModelData) -> np.ndarray:
    """The weights :func:`binned_latency` gives its terms, as numpy (cells, 27)."""
    weight = d.edge_weight if d.edge_weight is not None else np.zeros(d.bin_edges.shape)
    return np.concatenate([d.binned.to_numpy(float), np.asarray(weight, dtype=float)], axis=1)


def _log_bin_probs(log_cdf, log_sf):
    """log P(a < X ≤ b) for consecutive edges, from log F and log S at the edges, computed where it
    is accurate: F(b)·(1 − F(a)/F(b)) in the lower half, S(a)·(1 − S(b)/S(a)) in the upper one.
    A difference of CDFs near 1 loses every digit in the upper tail (a bin's probability rounded to
    0 and clipped: a cliff in the log-density, where NUTS diverges)."""
    tiny = -1e-12  # keeps log1mexp finite where a branch is not taken (its gradient is multiplied by 0)
    lower = log_cdf[:, 1:] + pt.log1mexp(pt.minimum(log_cdf[:, :-1] - log_cdf[:, 1:], tiny))
    upper = log_sf[:, :-1] + pt.log1mexp(pt.minimum(log_sf[:, 1:] - log_sf[:, :-1], tiny))
    return pt.switch(log_cdf[:, 1:] < np.log(0.5), lower, upper)


def latency_cells(d: ModelData):
    """(rows, mu, log sigma, model index) of each row of ``d.latency`` (padded to one row when
    empty), in a model context."""
    mu_g, ls_g = latency_params(d)
    L = _pad(d.latency, {"m": 0, "k": 0, "u": 0, "n": 0, "s1": 0.0, "s2": 0.0, "informative": True,
                         "w_n": 0.0, "w_s1": 0.0, "w_n2": 0.0, "q_wrong": 0.0})
    cu, cm, ck = (_data(f"lat_{c}", L[c], "int64") for c in ("u", "m", "k"))
    return L, mu_g[cu, cm, ck], ls_g[cu, cm, ck], cm


def _pad(table, zero_row: dict):
    """``table``, or one row that contributes nothing (zero counts) when it is empty."""
    import pandas as pd

    return table if len(table) else pd.DataFrame({k: [v] for k, v in zero_row.items()})


def _dim(name: str):
    """The symbolic length of dim ``name`` (a shared variable of the model, not a constant)."""
    return pm.modelcontext(None).dim_lengths[name]


def build_model(d: ModelData, latency_family: str = "normal", item_latency: bool = False,
                episode_latency: bool = False) -> pm.Model:
    """The PyMC model for ``d``; ``latency_family`` names a :mod:`.families` entry: ``normal``
    (sufficient statistics), ``t`` or ``mixture`` (on each cell's log-latency order statistics).
    ``item_latency``: each item (task) also gets a time intensity on log-latency (``_item_time_intensity``),
    normal family only. Clock effects come with the data (``d.clock_effects``, :func:`.data.aggregate`): its
    tables carry them. ``episode_latency``: an episode's decisions share a slowness (``_latency_likelihood``),
    where :func:`has_episode_latency` allows it."""
    fam = family(latency_family)
    # the parts the data were aggregated for, with item_latency: refused here as anywhere if incompatible
    ModelSpec.from_parts(latency_family, item_latency=item_latency, clock_effects=d.clock_effects,
                         latency_by_correctness=d.latency_by_correctness)
    # one graph for every dataset: an empty table becomes one zero-count row (adds 0 to the
    # log-density), a dataset without task ids gets one unused item, data enter as pm.Data and sizes
    # as the model's shared dim lengths, never as constants; so the compiled log-density (PyTensor's
    # on-disk cache) is reused across datasets of any size and shape (see :mod:`.sampler`)
    coords = {"model": d.models, "task_type": d.task_types, "unit": d.units, "item": d.items or ["<none>"]}
    with pm.Model(coords=coords) as model:
        # model/type effects are zero-sum (ZeroSumNormal): the intercepts are then identified, which
        # removes the intercept-vs-effects ridge that stalls NUTS with few models or types
        L, mu, log_sigma, cell_m = latency_cells(d)
        shape = latency_shape(fam, d)
        episode_latency = episode_latency and has_episode_latency(d, latency_family, item_latency)
        _latency_likelihood(d, L, mu, log_sigma, fam, shape, cell_m, episode_latency)
        item_lat = _item_time_intensity(d, mu, log_sigma) if item_latency else None
        wrong = _wrong_shift(d, L, mu, log_sigma) if d.latency_by_correctness else None
        _silence_hurdle(d, mu, pt.exp(log_sigma), fam, shape, None if item_lat is None else item_lat[0], wrong,
                        L if episode_latency else None)
        log_capable = _capability(d, item_lat, d.clock_effects)
        _success_likelihood(d, log_capable)
        _capable_labelled(d, log_capable)
    return model


def has_episode_latency(d: ModelData, latency_family: str = "normal", item_latency: bool = False) -> bool:
    """The episode slowness can be in the model: the normal family, no item time intensities and no latency by
    correctness (their terms treat decisions as independent), and the per-episode table built."""
    return (latency_family == "normal" and not item_latency and not d.latency_by_correctness
            and d.latency_episodes is not None and bool(len(d.latency_episodes)))


def _latency_likelihood(d: ModelData, L, mu, log_sigma, fam: LatencyFamily, shape: dict, cell_m,
                        episode_latency: bool = False) -> None:
    """Acted decisions' log-latencies: Normal sufficient statistics, or another family on each cell's
    order statistics (:func:`binned_latency`). ``episode_latency``: the normal family with an episode
    intercept s_e ~ N(0, r_k σ²) and within-episode SD σ√(1 − r_k) (σ the cell's total SD, r_k =
    ``latency_icc`` per task type), exact on :func:`.data.episode_latency_table`: an episode of n decisions
    with mean x̄ and within sum of squares W adds −(n−1)/2 log σ_w² − ½ log V − W/(2σ_w²) −
    n(x̄ − μ)²/(2V) − n/2 log 2π, V = σ_w² + n r σ² (r = 0: the independent decisions' term)."""
    # a cell whose latencies are (nearly) constant, e.g. the tick length logged for every decision,
    # has no spread to learn from (it would drive σ to 0): it stays out; its P(miss) comes from the
    # logged misses (:class:`.derived.Deriver`)
    keep = informative_cells(L)
    if fam.name == "normal" and episode_latency:
        icc = _prior("latency_icc", dims="task_type")
        E = d.latency_episodes
        cell = _data("lep_cell", E["cell"], "int64")
        k = pm.modelcontext(None)["lat_k"][cell]
        w_keep = keep[E["cell"].to_numpy()]
        n, c, sr, sr2, w = (_data(f"lep_{col}", E[col].to_numpy(float) * (w_keep if col != "n" else 1.0), "float64")
                            for col in ("n", "c", "sr", "sr2", "w"))
        var = pt.exp(2 * log_sigma[cell])
        var_w = var * (1 - icc[k])
        v = var_w + n * var * icc[k]
        pm.Potential("latency_obs", pt.sum(-c * n * 0.5 * LOG_2PI - c * (n - 1) * 0.5 * pt.log(var_w)
                                           - 0.5 * c * pt.log(v) - w / (2 * var_w)
                                           - n * (sr2 - 2 * mu[cell] * sr + c * mu[cell] ** 2) / (2 * v)))
    elif fam.name == "normal":
        n, s1, s2 = (_data(f"lat_{c}", L[c].to_numpy(float) * keep, "float64") for c in ("n", "s1", "s2"))
        pm.Potential("latency_obs", pt.sum(-n * (log_sigma + 0.5 * LOG_2PI)
                                           - (s2 - 2 * mu * s1 + n * mu**2) / (2 * pt.exp(log_sigma) ** 2)))
    else:
        terms, weights = binned_latency(d, mu, pt.exp(log_sigma), fam, shape, cell_m)
        pm.Potential("latency_obs", pt.sum(weights * _data("lat_keep", keep, "float64")[:, None] * terms))


#: an item with at least this many acted decisions gets a centred time intensity, fewer a
#: non-centred one: a few decisions already pin an item's mean log-latency (its SE is σ/√n, σ ≈ 0.5)
ITEM_LAT_CENTRED_MIN_DECISIONS = 20


def _latency_item_keep(d: ModelData) -> np.ndarray:
    """Per row of ``d.latency_item``: 1 when its latency cell is informative (in the likelihood)."""
    LI, L = d.latency_item, d.latency
    return informative_cells(L)[LI["cell"].to_numpy()]


def item_latency_decisions(d: ModelData) -> np.ndarray:
    """Per item: its acted decisions in informative latency cells (what its time intensity is
    learnt from; a cell of tick-length latencies says nothing about it)."""
    LI = d.latency_item
    if not d.items or LI is None or not len(LI):
        return np.zeros(len(d.items))
    return np.bincount(LI["i"].to_numpy(), weights=LI["n"].to_numpy(float) * _latency_item_keep(d),
                       minlength=len(d.items))


def item_latency_dominated(d: ModelData, per_item: np.ndarray) -> np.ndarray:
    """Per item: do its latencies dominate the prior of its time intensity, n_i·τ̂_k² ≥ σ̂_k²? τ̂_k² is
    the moment estimate of the items' spread in task type k (the variance of the items' mean
    log-latency residuals from their cells' means, less its sampling part σ̂²/n_i), σ̂_k² the pooled
    within-cell variance. Where it holds the centred form samples well; where the items hardly differ
    (τ̂ ≈ 0) the centred form is a funnel as sd_item_lat → 0: on data generated without time
    intensities, 37 of 42 item-latency fits failed the diagnostics gate after the retry (sd_item_lat
    R-hat 1.14, bulk ESS 21; benchmarks/results/structure_choice.csv), so they are non-centred there.
    The choice of parameterisation only, not of the model."""
    LI, L = d.latency_item, d.latency
    keep_li, keep_l = _latency_item_keep(d), informative_cells(L)
    n_c, s1_c = L["n"].to_numpy(float), L["s1"].to_numpy(float)
    mean_c = np.divide(s1_c, n_c, out=np.zeros_like(s1_c), where=n_c > 0)
    cell = LI["cell"].to_numpy()
    resid = np.bincount(LI["i"], weights=(LI["s1"].to_numpy(float) - LI["n"].to_numpy(float) * mean_c[cell]) * keep_li,
                        minlength=len(d.items))
    has = per_item > 0
    r = np.divide(resid, per_item, out=np.zeros_like(resid), where=has)
    # within-cell variance per task type, pooled over informative cells
    ss = (L["s2"].to_numpy(float) - np.divide(s1_c**2, n_c, out=np.zeros_like(s1_c), where=n_c > 0)) * keep_l
    n_types = len(d.task_types)
    k_c = L["k"].to_numpy()
    var_w = (np.bincount(k_c, weights=ss, minlength=n_types)
             / np.maximum(np.bincount(k_c, weights=np.maximum(n_c - 1, 0) * keep_l, minlength=n_types), 1))
    dominated = np.zeros(len(d.items), dtype=bool)
    for k in range(n_types):
        in_k = has & (d.item_type == k)
        if in_k.sum() < 2:
            continue
        spread = max(float(np.var(r[in_k], ddof=1) - np.mean(var_w[k] / per_item[in_k])), 0.0)
        dominated[in_k] = per_item[in_k] * spread >= var_w[k]
    return dominated


def has_item_latency_data(d: ModelData) -> bool:
    """Some item has informative latencies: item time intensities can be fitted."""
    return bool((item_latency_decisions(d) > 0).any())


def _item_time_intensity(d: ModelData, mu, log_sigma):
    """Item time intensity τ_i (``item_lat``): log L ~ Normal(μ_mk + τ_i, σ_mk) for the decisions of
    item i (van der Linden 2007's lognormal response times; LNIRT pairs τ_i with the item's
    difficulty, here through :func:`_item_effects`). Items with hard content are often slow, so the
    episodes that are capable (easy items) are also the fast ones; the derived quantities pair each
    item's τ_i with its capability effect, so P(no fatal miss | capable) follows the items' joint
    spread. Written on the sufficient statistics: Σ over the item's decisions of (x − μ − τ)² =
    Σ (x − μ)² − 2τ(s1 − nμ) + nτ², the first term being the cell's. Returns the effects with a
    trailing 0 (no task id), and each item's 0/1 "has informative latencies" (an item without any
    keeps its prior τ, non-centred, and its difficulty is not tied to it)."""
    per_item = item_latency_decisions(d)
    if not (per_item > 0).any():
        return None
    LI = d.latency_item
    centred = ((per_item >= ITEM_LAT_CENTRED_MIN_DECISIONS) & item_latency_dominated(d, per_item)).astype(float)
    tau = _nested_item_effects(d, "lat", centred)
    keep = _latency_item_keep(d)
    cell = _data("li_cell", LI["cell"], "int64")
    t = tau[_data("li_item", LI["i"], "int64")]
    n = _data("li_n", LI["n"].to_numpy(float) * keep, "float64")
    s1 = _data("li_s1", LI["s1"].to_numpy(float) * keep, "float64")
    pm.Potential("latency_item_obs", pt.sum((t * (s1 - n * mu[cell]) - 0.5 * n * t**2)
                                            / pt.exp(log_sigma[cell]) ** 2))
    return tau, _data("item_has_latency", (per_item > 0).astype(float), "float64")


def _wrong_shift(d: ModelData, L, mu, log_sigma):
    """Latency by correctness (``d.latency_by_correctness``, labelled data): a content-wrong decision's
    log-latency is Normal(μ + δ_mk, σ), a correct one's Normal(μ, σ) (δ = ``wrong_lat``), so μ is the
    mean of the correct decisions, the ones a capable episode is made of: p_timely and the latency
    counterfactuals use their latency. Where thinking longer helps (the ``speed_accuracy`` preset),
    correct decisions are the slow ones; a model that pools them with the wrong ones puts capable
    episodes too early (p_timely too high). An unlabelled decision enters at the cell's mixture mean
    (:func:`.data.wrong_weights`). Written on each cell's sums of the wrong decisions
    (:func:`.data.correctness_sums`). Returns (δ per latency row, the cell's wrong share q per row)."""
    model = pm.modelcontext(None)
    delta = _prior("wrong_lat", dims=("model", "task_type"))[model["lat_m"], model["lat_k"]]
    keep = informative_cells(L)
    wn, ws1, wn2 = (_data(f"lat_{c}", L[c].to_numpy(float) * keep, "float64") for c in ("w_n", "w_s1", "w_n2"))
    pm.Potential("latency_wrong_obs", pt.sum((delta * (ws1 - wn * mu) - 0.5 * wn2 * delta**2)
                                             / pt.exp(log_sigma) ** 2))
    return delta, _data("lat_q_wrong", np.clip(L["q_wrong"].to_numpy(float), WRONG_SHARE_FLOOR,
                                               1 - WRONG_SHARE_FLOOR), "float64")


def _silence_hurdle(d: ModelData, mu, sigma, fam: LatencyFamily, shape: dict, item_lat=None, wrong=None,
                    episode_cells=None) -> None:
    """Silent decisions, a hurdle per model: with probability ρ a model has a "no answer" failure
    mode (π_m > 0: a silent decision has likelihood π + (1 − π)·S(g), an acted one 1 − π),
    otherwise π_m = 0 and a silence is a latency beyond the censor point g (likelihood S(g)).
    Marginalised over the indicator; the derived quantities draw it from its conditional. ``wrong``
    (latency by correctness): S(g) is the cell's mixture of correct and wrong decisions (its wrong
    share q of the labelled ones: a silence has no content to label). ``episode_cells`` (the latency
    table, with episode slowness): an episode's silences share its slowness, given its acted latencies
    (``_episode_silences``)."""
    silence = _prior("silence", dims="model")
    prevalence = _prior("silence_prevalence")
    if episode_cells is not None:
        with_mode, without_mode = _episode_silences(d, mu, sigma, fam, silence, episode_cells)
    else:
        with_mode, without_mode = _decision_silences(d, mu, sigma, fam, shape, silence, item_lat, wrong)
    # the acted decisions' factor 1 − π under the mode
    E = _pad(d.exposure, {"m": 0, "n_acted": 0})
    em = _data("exp_m", E["m"], "int64")
    with_mode = pt.inc_subtensor(with_mode[em], _data("exp_n", E["n_acted"], "float64") * pt.log1p(-silence[em]))
    pm.Potential("silence_hurdle", pt.sum(pt.logaddexp(pt.log(prevalence) + with_mode,
                                                       pt.log1p(-prevalence) + without_mode)))


def _decision_silences(d: ModelData, mu, sigma, fam: LatencyFamily, shape: dict, silence, item_lat=None, wrong=None):
    """Per model, the silences' log-likelihood with the no-answer mode and without, each silence on its
    own: per group of ``d.censored`` (cell, item, censor point), log[π + (1 − π)·S(g)] and log S(g)."""
    C = _pad(d.censored, {"m": 0, "i": -1, "cell": 0, "log_close": 0.0, "count": 0})
    cell = _data("cens_cell", C["cell"], "int64")
    cm_ = _data("cens_m", C["m"], "int64")
    log_c = _data("cens_log_close", C["log_close"], "float64")
    count = _data("cens_count", C["count"], "float64")
    mu_c = mu[cell] if item_lat is None else mu[cell] + item_lat[_data("cens_i", C["i"], "int64")]
    if wrong is None:
        log_s = fam.pt_logsf(log_c, mu_c, sigma[cell], **shape_at(fam, shape, cm_))
    else:
        log_s = mixed_log_sf(fam.pt_logsf, log_c, mu_c, sigma[cell], wrong[0][cell], wrong[1][cell], pt.logaddexp,
                             pt.log, pt.log1p, **shape_at(fam, shape, cm_))
    zeros = pt.zeros(_dim("model"))
    return (pt.inc_subtensor(zeros[cm_], count * pt.logaddexp(pt.log(silence[cm_]), pt.log1p(-silence[cm_]) + log_s)),
            pt.inc_subtensor(zeros[cm_], count * log_s))


def _episode_silences(d: ModelData, mu, sigma, fam: LatencyFamily, silence, L):
    """Per model, the silences' log-likelihood with the no-answer mode and without, under episode slowness:
    per group of alike episodes (:func:`.data.silent_episode_table`), the slowness given the episode's acted
    latencies where its cell is in the latency likelihood (else its prior); an episode with one silence in
    closed form (:func:`.families.single_silence_loglik`), one with several by
    :func:`.families.episode_silence_loglik`."""
    model = pm.modelcontext(None)
    with_mode, without_mode = pt.zeros(_dim("model")), pt.zeros(_dim("model"))
    for part, A in zip(("sep1", "sep"), silent_episode_arrays(d.silent_episodes), strict=True):
        cell = _data(f"{part}_cell", A["cell"], "int64")
        n = _data(f"{part}_n", A["n"] * informative_cells(L)[A["cell"]], "float64")
        xbar, c = _data(f"{part}_xbar", A["xbar"], "float64"), _data(f"{part}_c", A["c"], "float64")
        log_close = _data(f"{part}_log_close", A["log_close"], "float64")
        icc, m = model["latency_icc"][model["lat_k"][cell]], model["lat_m"][cell]
        per_episode = (mu[cell], sigma[cell], icc, n, xbar, pt.log(silence[m]), pt.log1p(-silence[m]))
        if "count" in A:
            with_g, without_g = episode_silence_loglik(
                fam.pt_logsf, log_close, _data(f"{part}_count", A["count"], "float64"), *per_episode, pt.logaddexp,
                lambda x, axis: pm.math.logsumexp(x, axis=axis, keepdims=False), pt.sqrt)
        else:
            with_g, without_g = single_silence_loglik(fam.pt_logsf, log_close, *per_episode, pt.logaddexp, pt.sqrt)
        with_mode, without_mode = pt.inc_subtensor(with_mode[m], c * with_g), pt.inc_subtensor(without_mode[m], c * without_g)
    return with_mode, without_mode


#: an item with at least this many episodes gets a centred effect, fewer a non-centred one
#: (benchmarks/bench_params.py): a data-rich item pins its effect, and the non-centred form then
#: ties the item SD to every z (sd_item_cap bulk ESS 40 of 400 draws on leaderboard60); a sparse
#: item leaves the effect to the prior, where the centred form is a funnel
ITEM_CENTRED_MIN_EPISODES = 50
#: ... and only in a task type with at least this many items: with a few items the item SD is barely
#: identified, its posterior reaches towards 0 and the centred form is a funnel there however rich
#: each item (mixed preset, 4 items per type, 90 episodes each: 90 and 124 divergences in 12 fits
#: of 4 × 500 centred, 0 in 24 after; benchmarks/results/recovery_study_mixed_centring.csv)
ITEM_CENTRED_MIN_ITEMS = 10


def _item_effects(d: ModelData, item_lat=None):
    """Capability item effects (items, + a trailing 0 for "no task id"), centred within their task
    type; centred or non-centred by the item's number of episodes (:data:`ITEM_CENTRED_MIN_EPISODES`).
    With item time intensities τ_i (``item_lat``), d_i = β_k·τ_i + e_i, e_i the item effect above:
    the regression form of LNIRT's bivariate normal on (difficulty, time intensity), so an item's
    difficulty borrows strength from its (well measured) time intensity instead of shrinking to 0
    alone, which would weaken the pairing of the two in p_timely. Recorded as ``item_cap``."""
    n_items = len(d.items)
    ep_i = d.episodes["i"].to_numpy()
    per_item = np.bincount(ep_i[ep_i >= 0], minlength=n_items) if n_items else np.zeros(1)
    own = _nested_item_effects(d, "cap", (per_item >= ITEM_CENTRED_MIN_EPISODES).astype(float),
                               record=item_lat is None)
    if item_lat is None:
        return own
    tau, has = item_lat
    slope = _prior("item_cap_per_lat", dims="task_type")
    item_k = _data("item_type_lat_slope", d.item_type, "int64")
    total = own[:-1] + slope[item_k] * tau[:-1] * has
    return pt.concatenate([pm.Deterministic("item_cap", total, dims="item"), pt.zeros(1)])


def _nested_item_effects(d: ModelData, part: str, centred: np.ndarray, record: bool = True):
    """Item effects ``item_<part>`` with SD ``sd_item_<part>`` per task type, centred within their
    type, plus a trailing 0 for "no task id". Per item, centred or non-centred by the 0/1 weight
    ``centred``, passed as data (one graph for every dataset): z ~ Normal(0, sd^w), effect =
    sd^(1−w)·z (Papaspiliopoulos, Roberts & Sköld 2007). ``record``: keep them as ``item_<part>``."""
    n_items = len(d.items)
    if n_items:  # centred only where the type has enough items to identify its SD
        items_in_type = np.bincount(d.item_type, minlength=len(d.task_types))[d.item_type]
        centred = centred * (items_in_type >= ITEM_CENTRED_MIN_ITEMS)
    w = _data(f"item_centred_{part}", centred, "float64")
    # item SD per task type (items of different types are different kinds of problem); items are
    # nested in types, so their mean within a type is removed (it is the type effect's job: left
    # in, a0 / type effects / item means form a ridge that slowed mixing, R-hat 1.011 on the example)
    sd_item = _prior(f"sd_item_{part}", dims="task_type")
    n_types = len(d.task_types)
    item_k = _data(f"item_type_{part}", d.item_type if n_items else [0], "int64")
    n_k = _data(f"type_n_items_{part}", np.maximum(np.bincount(d.item_type, minlength=n_types), 1)
                if n_items else np.ones(n_types), "float64")
    sd_i = sd_item[item_k]
    z_d = pm.Normal(f"z_item_{part}", 0, sd_i**w, dims="item")
    raw = sd_i ** (1 - w) * z_d
    raw_mean = pt.inc_subtensor(pt.zeros(_dim("task_type"))[item_k], raw) / n_k
    item = raw - raw_mean[item_k]
    if record:
        item = pm.Deterministic(f"item_{part}", item, dims="item")
    return pt.concatenate([item, pt.zeros(1)])


def _capability(d: ModelData, item_lat=None, clock_effects: bool = False):
    """The capability part; returns ``log_capable(table, prefix)``, log P(episode capable) per row.

    An episode is capable when all its decisions are content-correct: the logit acts per decision
    and P(capable) = P(decision right)^(g_k·exp(β_k x)), g_k = the type's typical (geometric mean)
    number of decisions, x = log(decisions / g_k): β = 1 → every decision counts, β = 0 → length
    does not matter. Item effects then act per decision, so the same item moves a weak model's
    episode success more than a strong one's (as it does when an episode is a chain of decisions).
    offset_k puts logit 0 at P(capable) = 0.5 for a typical episode of the type. ``clock_effects``:
    the logit moves by κ_m (``timed_cap``) under a timed clock (the tables' column ``t``)."""
    a0 = _prior("a0")
    sd_a, sd_b, sd_g = _scale("sd_model_cap"), _scale("sd_type_cap"), _scale("sd_model_type_cap")
    a_m = pm.ZeroSumNormal("model_cap", sigma=sd_a, dims="model")
    b_k = pm.ZeroSumNormal("type_cap", sigma=sd_b, dims="task_type")
    g_mk = pm.ZeroSumNormal("model_type_cap", sigma=sd_g, dims=("model", "task_type"), n_zerosum_axes=2)
    eta_mk = a0 + a_m[:, None] + b_k[None, :] + g_mk
    length = _prior("length_cap", dims="task_type")
    log_g = _data("type_log_g", d.type_log_g, "float64")
    offset = _data("type_offset", d.type_offset, "float64")
    item_eff = _item_effects(d, item_lat)  # index -1 (no task id) picks the appended 0: no item effect
    timed_cap = _prior("timed_cap", dims="model") if clock_effects else None

    def log_capable(table, prefix: str):
        """log P(capable) per row of ``table`` (columns m, k, i, x), factored: the logit's log-sigmoid
        once per distinct (m, k, i) and the length exponent once per distinct (k, x), then one
        product per row. The same numbers as per row, at a fraction of the gradient's cost: rows
        (m, k, i, x) outnumber pairs (m, k, i) 3:1 at leaderboard scale (benchmarks/bench_params.py)."""
        pair, pair_of, kx, kx_of = _factor(table)
        pm_, pk, pi = (_data(f"{prefix}_pair_{c}", pair[c], "int64") for c in ("m", "k", "i"))
        qk, qx = _data(f"{prefix}_kx_k", kx["k"], "int64"), _data(f"{prefix}_kx_x", kx["x"], "float64")
        logit = eta_mk[pm_, pk] + item_eff[pi] + offset[pk]
        if timed_cap is not None:  # a padded (empty) table has no column t: nothing timed
            t = pair["t"] if "t" in pair else np.zeros(len(pair))
            logit = logit + timed_cap[pm_] * _data(f"{prefix}_pair_t", t, "float64")
        log_sig = -pt.softplus(-logit)
        expo = pt.exp(log_g[qk] + length[qk] * qx)
        return expo[_data(f"{prefix}_kx_of", kx_of, "int64")] * log_sig[_data(f"{prefix}_pair_of", pair_of, "int64")]

    return log_capable


def _factor(table):
    """(distinct (m, k, i[, t]) rows, each row's index into them, distinct (k, x) rows, each row's
    index); ``t`` (timed) where the table has it (clock effects)."""
    import pandas as pd

    def distinct(cols):
        codes, uniques = pd.MultiIndex.from_frame(table[cols]).factorize()
        return uniques.to_frame(index=False, name=cols), codes.astype(np.int64)

    pair, pair_of = distinct(["m", "k", "i"] + (["t"] if "t" in table else []))
    kx, kx_of = distinct(["k", "x"])
    return pair, pair_of, kx, kx_of


def _success_likelihood(d: ModelData, log_capable) -> None:
    """Episode success: unlabelled groups and labelled capable episodes, given the timing fatality.

    Timing fatality is a hurdle per task type: with probability ψ a missed window always kills the
    episode (f = 1, the common realtime rule), otherwise f ~ Beta. Marginalised over the indicator;
    its log-odds is kept for the derived quantities, which draw it per draw."""
    fatality = _prior("fatality", dims="task_type")
    always = _prior("always_fatal")
    U = _pad(d.unlabelled, {"m": 0, "k": 0, "i": -1, "x": 0.0, "M": 0, "n": 0, "y": 0})
    uk = _data("unl_k", U["k"], "int64")
    uM, un, uy = (_data(f"unl_{c}", U[c], "float64") for c in ("M", "n", "y"))
    u_log_cap = log_capable(U, "unl")
    TL = _pad(d.timing_labelled, {"k": 0, "M": 0, "n": 0, "y": 0})
    tk = _data("tim_k", TL["k"], "int64")
    tM, tn, ty = (_data(f"tim_{c}", TL[c], "float64") for c in ("M", "n", "y"))

    def success_loglik(log_keep_u, log1m_f):
        """Per task type: log-likelihood of the success data given the unlabelled groups' log
        P(no fatal miss | capable) and the labelled capable episodes' log(1 − f_k)."""
        log_p = pt.minimum(u_log_cap + log_keep_u, -1e-12)
        out = pt.inc_subtensor(pt.zeros(_dim("task_type"))[uk], uy * log_p + (un - uy) * pt.log1mexp(log_p))
        # labelled capable episodes: y ~ Bernoulli(ε + (1 − 2ε)(1 − f)^M)
        p = LEAK + (1 - 2 * LEAK) * pt.exp(tM * log1m_f[tk])
        return pt.inc_subtensor(out[tk], ty * pt.log(p) + (tn - ty) * pt.log1p(-p))

    ended = _ended_by_failure(d, log_capable)
    log1m_f = pt.log1p(-fatality)
    graded = success_loglik(uM * log1m_f[uk], log1m_f) + ended(log1m_f, pt.log(fatality), leak=False)
    # always fatal (f = 1): an unlabelled episode with a miss succeeds only through the leak ε (a
    # benchmark that forgives a miss now and then, a mislogged miss), as labelled ones do; without
    # it one success after a miss would rule the branch out (probability 0) whatever the other data
    log1m_one = pt.full(_dim("task_type"), -1000.0)  # log(1 − f) at f = 1, finite for the gradients
    fatal = (success_loglik(pt.switch(uM > 0, np.log(LEAK), 0.0), log1m_one)
             + ended(log1m_one, pt.zeros(_dim("task_type")), leak=True))
    log_odds = pt.log(always) + fatal - pt.log1p(-always) - graded
    pm.Deterministic("always_fatal_log_odds", log_odds, dims="task_type")
    pm.Potential("success", pt.sum(pt.logaddexp(pt.log(always) + fatal, pt.log1p(-always) + graded)))


def _ended_by_failure(d: ModelData, log_capable):
    """The survival reading of episodes whose log ends at the fatal decision (``d.truncated``); returns
    ``loglik(log1m_f, log_f, leak)``, their log-likelihood per task type given log(1 − f_k) and log f_k.

    With H(n) = −log P(capable over n decisions) (:func:`_capability`'s cumulative content hazard), an
    episode that died at its J-th decision survived the first J − 1 (e^{−H(J−1)} (1 − f)^{M'}, M' the
    misses among them) and then did not survive the J-th: 1 − q_J (1 − f·miss_J), q_J = e^{−(H(J) −
    H(J−1))} the J-th decision's chance of content that was not fatal. A last decision labelled
    content-right and missed died of timing, seen directly: q_J·f. ``leak``: the always-fatal branch,
    where a survived miss is the leak ε (:func:`_success_likelihood`)."""
    if not d.survival:
        return lambda log1m_f, log_f, leak: 0.0
    T = d.truncated
    k = _data("trunc_k", T["k"], "int64")
    n, hp, Mp, ml, tl = (_data(f"trunc_{c}", T[c], "float64") for c in ("n", "hp", "Mp", "ml", "tl"))
    log_cap_j = log_capable(T, "trj")
    log_cap_prev = hp * log_capable(T.assign(x=T["xp"]), "trp")  # no decision before the last: 0
    log_q = pt.minimum(log_cap_j - log_cap_prev, -1e-12)  # H is increasing in n for a length slope β ≥ 0

    def loglik(log1m_f, log_f, leak: bool):
        survived = pt.switch(Mp > 0, np.log(LEAK), 0.0) if leak else Mp * log1m_f[k]
        died = pt.switch(tl > 0, log_q + log_f[k], pt.log1mexp(pt.minimum(log_q + ml * log1m_f[k], -1e-12)))
        return pt.inc_subtensor(pt.zeros(_dim("task_type"))[k], n * (log_cap_prev + survived + died))

    return loglik


def _capable_labelled(d: ModelData, log_capable) -> None:
    """Labelled episodes: capable (every decision content-correct) or not."""
    CL = _pad(d.cap_labelled, {"m": 0, "k": 0, "i": -1, "x": 0.0, "n": 0, "capable": 0})
    n, c = _data("cap_n", CL["n"], "float64"), _data("cap_capable", CL["capable"], "float64")
    log_cap = pt.minimum(log_capable(CL, "cap"), -1e-12)
    pm.Potential("capable_labelled", pt.sum(c * log_cap + (n - c) * pt.log1mexp(log_cap)))
