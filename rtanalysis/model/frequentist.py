"""statsmodels cross-check of the posterior.

* capability: binomial GLM of success on the ``paused`` episodes, one coefficient per model ×
  task_type, SEs clustered by task → p_capable (paused success estimates capability directly);
* success: binomial GLM of success on all episodes, one coefficient per model × task_type × clock,
  clustered by task → p_success;
* latency: OLS of log-latency on acted decisions, one coefficient per model × task_type × time_unit,
  clustered by episode → median latency (ignores censoring: silent decisions are not in it).

Each estimate sits beside the posterior mean and interval; ``disagree`` flags a Wald interval that
does not overlap the posterior interval. Cells with all-success or all-failure (separation) get the
exact Clopper–Pearson interval instead of a Wald one.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import beta, norm

from ..metrics.latency import floored_log_latency


def _cell_glm(y: np.ndarray, cell: np.ndarray, groups: np.ndarray, z: float):
    """Per-cell proportion via a binomial GLM with cluster-robust SEs; (cell, est, lo, hi, method)."""
    import statsmodels.api as sm

    levels = np.unique(cell)
    out = []
    ok = [c for c in levels if 0 < y[cell == c].mean() < 1]
    if ok:
        sel = np.isin(cell, ok)
        X = pd.get_dummies(pd.Categorical(cell[sel], categories=ok)).to_numpy(float)
        g = pd.factorize(groups[sel])[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = sm.GLM(y[sel].astype(float), X, family=sm.families.Binomial()).fit(
                cov_type="cluster", cov_kwds={"groups": g})
        se = np.sqrt(np.diag(r.cov_params()))
        for j, c in enumerate(ok):
            b = r.params[j]
            out.append((c, float(expit(b)), float(expit(b - z * se[j])), float(expit(b + z * se[j])), "glm_cluster"))
    a = 2 * norm.sf(z)
    for c in levels:
        if c in ok:
            continue
        n, k = int((cell == c).sum()), int(y[cell == c].sum())
        lo = beta.ppf(a / 2, k, n - k + 1) if k > 0 else 0.0
        hi = beta.ppf(1 - a / 2, k + 1, n - k) if k < n else 1.0
        out.append((c, k / n, float(lo), float(hi), "clopper_pearson"))
    return out


def cross_check(res, ci_prob: float | None = None) -> pd.DataFrame:
    """Tidy frame: quantity, model, task_type, clock, estimate, lo, hi, method, posterior,
    posterior_lo, posterior_hi, disagree."""
    import statsmodels.api as sm

    ci_prob = res.ci_prob if ci_prob is None else ci_prob
    z = float(norm.ppf(0.5 + ci_prob / 2))
    ep, st = res.episodes, res.steps
    dec = res.decomposition(ci_prob)
    rows = []
    task = ep["task"].astype(object).where(ep["task"].notna(), ep["episode_id"].astype(object)).to_numpy()
    y = ep["success"].to_numpy(bool).astype(int)
    key = (ep["model"].astype(str) + "\x1f" + ep["task_type"].astype(str)).to_numpy()
    paused = ep["clock"].to_numpy() == "paused"
    if paused.any():
        for c, est, lo, hi, meth in _cell_glm(y[paused], key[paused], task[paused], z):
            m, k = c.split("\x1f")
            post = dec[(dec["model"] == m) & (dec["task_type"] == k)].iloc[0]
            rows.append(("p_capable", m, k, "paused", est, lo, hi, meth, post["p_capable"], post["p_capable_lo"],
                         post["p_capable_hi"]))
    key3 = (pd.Series(key) + "\x1f" + ep["clock"].astype(str).to_numpy()).to_numpy()
    for c, est, lo, hi, meth in _cell_glm(y, key3, task, z):
        m, k, clock = c.split("\x1f")
        post = dec[(dec["model"] == m) & (dec["task_type"] == k) & (dec["clock"] == clock)]
        if len(post):
            p = post.iloc[0]
            rows.append(("p_success", m, k, clock, est, lo, hi, meth, p["p_success"], p["p_success_lo"],
                         p["p_success_hi"]))
    if st is not None and len(st):
        # zero latencies floored as the fit floors them (metrics.floored_log_latency), not dropped
        x = floored_log_latency(st["latency"].to_numpy(float), st["time_unit"].astype(str).to_numpy())
        acted = ~np.isnan(x)
        s, x = st[acted], x[acted]
        cells = (s["model"].astype(str) + "\x1f" + s["task_type"].astype(str) + "\x1f" + s["time_unit"].astype(str)).to_numpy()
        levels = np.unique(cells)
        X = pd.get_dummies(pd.Categorical(cells, categories=levels)).to_numpy(float)
        g = pd.factorize((s["run_id"].astype(str) + "/" + s["episode_id"].astype(str)).to_numpy())[0]
        r = sm.OLS(x, X).fit(cov_type="cluster", cov_kwds={"groups": g})
        se = np.sqrt(np.diag(r.cov_params()))
        p = res._params
        al = (1 - ci_prob) / 2
        for j, c in enumerate(levels):
            m, k, u = c.split("\x1f")
            mi, ki, ui = res.data.models.index(m), res.data.task_types.index(k), res.data.units.index(u)
            med = np.exp(p.mu[:, ui, mi, ki])
            b = r.params[j]
            rows.append(("median_latency", m, k, u, float(np.exp(b)), float(np.exp(b - z * se[j])),
                         float(np.exp(b + z * se[j])), "ols_cluster", float(med.mean()),
                         *map(float, np.quantile(med, [al, 1 - al]))))
    f = pd.DataFrame(rows, columns=["quantity", "model", "task_type", "clock", "estimate", "lo", "hi", "method",
                                    "posterior", "posterior_lo", "posterior_hi"])
    f["disagree"] = (f["hi"] < f["posterior_lo"]) | (f["lo"] > f["posterior_hi"])
    return f
