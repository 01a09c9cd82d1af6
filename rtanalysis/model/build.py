"""The PyMC model: hierarchical capability (logit) × log-normal latency × per-type timing fatality.

All likelihood terms are written on the aggregated tables of :mod:`.data` as potentials (exact for
the Normal sufficient statistics, the censored counts and the grouped binomials), so sampling cost
grows with the number of cells, not episodes. Every prior comes from :data:`.priors.PRIORS`.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from .data import ModelData
from .priors import LEAK, PRIORS

LOG_2PI = float(np.log(2 * np.pi))
#: the main parameters whose convergence decides ``diagnostics_ok``
MAIN_PARAMS = ("a0", "sd_model_cap", "sd_type_cap", "sd_model_type_cap", "sd_item_cap", "fatality", "c0",
               "sd_model_lat", "sd_type_lat", "sd_model_type_lat", "s0", "sd_model_sigma", "sd_type_sigma", "silence",
               "model_cap", "type_cap", "model_type_cap", "model_lat", "type_lat", "model_type_lat", "model_sigma",
               "type_sigma", "nu")


def _prior(name: str, dims=None, **fill):
    dist, kwargs, _ = PRIORS[name]
    kw = {k: fill.get(v, v) if isinstance(v, str) else v for k, v in kwargs.items()}
    return getattr(pm, dist)(name, **kw, dims=dims)


def _scale(name: str):
    """A group-effect scale: a fixed number (``Fixed`` in the registry) or a hyperprior RV."""
    dist, kwargs, _ = PRIORS[name]
    return float(kwargs["value"]) if dist == "Fixed" else _prior(name)


def _data(name, values, dtype):
    return pm.Data(name, np.asarray(values, dtype=dtype))


def latency_params(d: ModelData):
    """(mu, log_sigma) tensors over the full (unit, model, task_type) grid, inside a model context."""
    c0 = _prior("c0", dims="unit", center=d.log_ref["center"].to_numpy())
    s0 = _prior("s0", dims="unit", log_scale=np.log(d.log_ref["scale"].to_numpy()))
    # latency cells hold hundreds of decisions: the centred form samples well there (non-centred
    # effects with tight data make a funnel); zero-sum effects keep c0/s0 identified
    sd_m, sd_k, sd_mk = _scale("sd_model_lat"), _scale("sd_type_lat"), _scale("sd_model_type_lat")
    sds_m, sds_k = _scale("sd_model_sigma"), _scale("sd_type_sigma")
    u_m = pm.ZeroSumNormal("model_lat", sigma=sd_m, dims="model")
    v_k = pm.ZeroSumNormal("type_lat", sigma=sd_k, dims="task_type")
    w_mk = pm.ZeroSumNormal("model_type_lat", sigma=sd_mk, dims=("model", "task_type"), n_zerosum_axes=2)
    s_m = pm.ZeroSumNormal("model_sigma", sigma=sds_m, dims="model")
    s_k = pm.ZeroSumNormal("type_sigma", sigma=sds_k, dims="task_type")
    mu = c0[:, None, None] + (u_m[:, None] + v_k[None, :] + w_mk)[None, :, :]
    log_sigma = s0[:, None, None] + (s_m[:, None] + s_k[None, :])[None, :, :]
    return mu, log_sigma


def _pad(table, zero_row: dict):
    """``table``, or one row that contributes nothing (zero counts) when it is empty."""
    import pandas as pd

    return table if len(table) else pd.DataFrame({k: [v] for k, v in zero_row.items()})


def build_model(d: ModelData, latency_family: str = "normal") -> pm.Model:
    """The PyMC model for ``d``; ``latency_family`` is ``normal`` (sufficient statistics) or ``t``
    (Student-t on binned log-latency)."""
    if latency_family not in ("normal", "t"):
        raise ValueError(f"latency_family must be 'normal' or 't', got {latency_family!r}")
    # one graph structure for every dataset: an empty table becomes one zero-count row (adds 0 to
    # the log-density) and a dataset without task ids gets one unused item, so the compiled
    # log-density (PyTensor's on-disk cache) is reused across datasets of any size
    coords = {"model": d.models, "task_type": d.task_types, "unit": d.units, "item": d.items or ["<none>"]}
    with pm.Model(coords=coords) as model:
        # ---------------- latency
        # model/type effects are zero-sum (ZeroSumNormal): the intercepts are then identified, which
        # removes the intercept-vs-effects ridge that stalls NUTS with few models or types
        mu_g, ls_g = latency_params(d)
        L = _pad(d.latency, {"m": 0, "k": 0, "u": 0, "n": 0, "s1": 0.0, "s2": 0.0})
        cu, cm, ck = (_data(f"lat_{c}", L[c], "int64") for c in ("u", "m", "k"))
        mu = mu_g[cu, cm, ck]
        log_sigma = ls_g[cu, cm, ck]
        sigma = pt.exp(log_sigma)
        if latency_family == "normal":
            n, s1, s2 = (_data(f"lat_{c}", L[c], "float64") for c in ("n", "s1", "s2"))
            pm.Potential("latency_obs", pt.sum(-n * (log_sigma + 0.5 * LOG_2PI)
                                               - (s2 - 2 * mu * s1 + n * mu**2) / (2 * sigma**2)))
        else:
            nu = _prior("nu")
            edges = _data("bin_edges", d.bin_edges, "float64")[cu]  # (cell, edges)
            dist = pm.StudentT.dist(nu=nu, mu=mu[:, None], sigma=sigma[:, None])
            cdf = pt.exp(pm.logcdf(dist, edges))
            cdf = pt.concatenate([pt.zeros((cdf.shape[0], 1)), cdf, pt.ones((cdf.shape[0], 1))], axis=1)
            probs = pt.clip(cdf[:, 1:] - cdf[:, :-1], 1e-12, 1.0)
            counts = _data("lat_bins", d.binned.to_numpy(), "float64")
            pm.Potential("latency_obs", pt.sum(counts * pt.log(probs)))
        # silent decisions: a per-model "no answer" probability π_m (silence not explained by a long
        # latency) mixed with right-censoring at the window close: log(π + (1 − π)·S(log c))
        silence = _prior("silence", dims="model")
        C = _pad(d.censored, {"m": 0, "cell": 0, "log_close": 0.0, "count": 0})
        cell = _data("cens_cell", C["cell"], "int64")
        cm_ = _data("cens_m", C["m"], "int64")
        log_c = _data("cens_log_close", C["log_close"], "float64")
        count = _data("cens_count", C["count"], "float64")
        if latency_family == "normal":
            cdist = pm.Normal.dist(mu=mu[cell], sigma=sigma[cell])
        else:
            cdist = pm.StudentT.dist(nu=nu, mu=mu[cell], sigma=sigma[cell])
        log_pi = pt.log(silence[cm_])
        log_1m_pi = pt.log1p(-silence[cm_])
        pm.Potential("latency_censored",
                     pt.sum(count * pt.logaddexp(log_pi, log_1m_pi + pm.logccdf(cdist, log_c))))
        E = _pad(d.exposure, {"m": 0, "n_acted": 0})
        em = _data("exp_m", E["m"], "int64")
        en = _data("exp_n", E["n_acted"], "float64")
        pm.Potential("acted_not_silent", pt.sum(en * pt.log1p(-silence[em])))

        # ---------------- capability
        a0 = _prior("a0")
        sd_a, sd_b, sd_g = _scale("sd_model_cap"), _scale("sd_type_cap"), _scale("sd_model_type_cap")
        a_m = pm.ZeroSumNormal("model_cap", sigma=sd_a, dims="model")
        b_k = pm.ZeroSumNormal("type_cap", sigma=sd_b, dims="task_type")
        g_mk = pm.ZeroSumNormal("model_type_cap", sigma=sd_g, dims=("model", "task_type"), n_zerosum_axes=2)
        eta_mk = a0 + a_m[:, None] + b_k[None, :] + g_mk
        z_d = pm.Normal("z_item_cap", 0, 1, dims="item")
        # index -1 (no task id) picks the appended 0: no item effect
        item_eff = pt.concatenate([_prior("sd_item_cap") * z_d, pt.zeros(1)])
        fatality = _prior("fatality", dims="task_type")
        log1m_f = pt.log1p(-fatality)

        U = _pad(d.unlabelled, {"m": 0, "k": 0, "i": -1, "M": 0, "n": 0, "y": 0})
        if True:
            m, k, i = (_data(f"unl_{c}", U[c], "int64") for c in ("m", "k", "i"))
            M, n, y = (_data(f"unl_{c}", U[c], "float64") for c in ("M", "n", "y"))
            log_p = (-pt.softplus(-(eta_mk[m, k] + item_eff[i]))) + M * log1m_f[k]
            log_q = pt.log1mexp(pt.minimum(log_p, -1e-12))
            pm.Potential("success_unlabelled", pt.sum(y * log_p + (n - y) * log_q))
        CL = _pad(d.cap_labelled, {"m": 0, "k": 0, "i": -1, "n": 0, "capable": 0})
        if True:
            m, k, i = (_data(f"cap_{c}", CL[c], "int64") for c in ("m", "k", "i"))
            n, c = _data("cap_n", CL["n"], "float64"), _data("cap_capable", CL["capable"], "float64")
            eta = eta_mk[m, k] + item_eff[i]
            pm.Potential("capable_labelled",
                         pt.sum(c * (-pt.softplus(-(eta))) + (n - c) * (-pt.softplus(-(-eta)))))
        TL = _pad(d.timing_labelled, {"k": 0, "M": 0, "n": 0, "y": 0})
        if True:
            k = _data("tim_k", TL["k"], "int64")
            M, n, y = (_data(f"tim_{c}", TL[c], "float64") for c in ("M", "n", "y"))
            p = LEAK + (1 - 2 * LEAK) * pt.exp(M * log1m_f[k])
            pm.Potential("success_labelled_capable", pt.sum(y * pt.log(p) + (n - y) * pt.log1p(-p)))
    return model
