"""Posterior and prior predictive checks, as tidy frames.

Rows: ``check = "success_rate"`` per decomposition row (observed rate vs replicated rates
``Binomial(n, p_success)/n``) and ``check = "log_latency_p10/p50/p90"`` per (model, task_type,
time_unit) cell (clock ``all``: latency is pooled over clocks; observed quantiles of acted decisions vs quantiles of replicated samples of the same
size; the cell's censored (silent) decisions are replicated too and the largest values dropped, as
the log would have).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .derived import ParamDraws, param_draws

QUANTILES = {"log_latency_p10": 0.1, "log_latency_p50": 0.5, "log_latency_p90": 0.9}
MAX_REPLICATES = 400


def prior_params(d, latency_family: str, draws: int, seed: int) -> ParamDraws:
    """Draws of the model's parameters from its prior."""
    import pymc as pm

    from .build import build_model

    model = build_model(d, latency_family)
    import warnings

    with warnings.catch_warnings():  # the likelihood is all potentials: no data enters the prior
        warnings.filterwarnings("ignore", message=".*Potentials.*")
        idata = pm.sample_prior_predictive(draws=draws, model=model, random_seed=seed)
    return param_draws(idata["prior"], d, seed=seed, prior=True)


def _thin(p: ParamDraws, rng, k: int) -> np.ndarray:
    return np.sort(rng.choice(p.n, size=min(k, p.n), replace=False))


def predictive_check(res, p: ParamDraws, seed: int, kind: str, interval: float = 0.95) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = (1 - interval) / 2
    idx = _thin(p, rng, MAX_REPLICATES)
    rows = res._deriver.rows
    draws = res._deriver.compute(p.take(idx))
    out = []
    for j, r in enumerate(rows.itertuples()):
        rep = rng.binomial(r.n_episodes, np.clip(draws["p_success"][j], 0, 1)) / r.n_episodes
        lo, hi = np.quantile(rep, [a, 1 - a])
        out.append((r.model, r.task_type, r.clock, "", "success_rate", r.success_rate, rep.mean(), lo, hi))
    d = res.data
    st = res._steps
    if st is not None and len(st):
        lat = st["latency"].to_numpy(float)
        acted = ~np.isnan(lat) & (lat > 0)
        frame = pd.DataFrame({"model": st["model"].astype(str), "task_type": st["task_type"].astype(str),
                              "unit": st["time_unit"].astype(str), "x": np.log(np.where(acted, lat, 1.0))})[acted]
        groups = {k: g["x"].to_numpy() for k, g in frame.groupby(["model", "task_type", "unit"])}
        for c in d.latency.itertuples():
            key = (d.models[c.m], d.task_types[c.k], d.units[c.u])
            x = groups.get(key)
            if x is None or len(x) < 5:
                continue
            n_cens = int(d.censored.loc[d.censored["cell"] == c.Index, "count"].sum())
            n = len(x) + n_cens
            mu = p.mu[idx, c.u, c.m, c.k][:, None]
            sd = p.sigma[idx, c.u, c.m, c.k][:, None]
            sim = np.sort(mu + sd * rng.standard_normal((len(idx), n)), axis=1)[:, : len(x)]
            for name, q in QUANTILES.items():
                rq = np.quantile(sim, q, axis=1)
                lo, hi = np.quantile(rq, [a, 1 - a])
                out.append((key[0], key[1], "all", key[2], name, float(np.quantile(x, q)), rq.mean(), lo, hi))
    f = pd.DataFrame(out, columns=["model", "task_type", "clock", "time_unit", "check", "observed", "predicted", "predicted_lo",
                                   "predicted_hi"])
    f["covered"] = (f["predicted_lo"] <= f["observed"]) & (f["observed"] <= f["predicted_hi"])
    f["kind"] = kind
    return f
