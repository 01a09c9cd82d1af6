"""Posterior and prior predictive checks, as tidy frames with predictive p-values.

Every row: the observed statistic, the mean and equal-tailed interval of its replicates, ``covered``,
``p_value`` = P(T_rep > T_obs) + ½ P(T_rep = T_obs) and ``extreme`` (p < 0.025 or > 0.975). Checks:

* ``success_rate`` per decomposition row (replicates ``Binomial(n, p_success)/n``);
* ``success_given_misses_0/1/2+`` per task type × timed clock: success rate of the episodes that
  missed 0, 1, 2+ windows, replicated as ``Bernoulli(P(capable_e)·(1 − f_k)^{M_e})`` given each
  episode's observed misses — what identifies the fatality (a miss that is not always fatal, a
  success after a miss);
* ``share_early``, ``share_late_or_silent`` and ``share_silent`` per timed row: shares of windowed
  decisions, against the model's p_early, p_late + p_silent and p_silent (p_silent is the share
  logged with no action: the silence mode or a latency past the censor point, one definition with
  the simulator's truth; ``share_silent`` only where the row's latencies are informative, since a
  constant-latency cell reports its logged misses as late);
* ``log_latency_p10/p50/p90/p99`` per (model, task_type, time_unit) cell (clock ``all``): observed
  quantiles of acted decisions vs replicated samples of the same size drawn from the fitted family
  (normal or Student-t, ν per draw), with the silence mode: of the cell's n decisions a
  Binomial(n, π_m) are silent whatever their latency, and the largest latencies stand in for the
  rest of the observed silences (censored), as the log would have. Cells whose latencies are
  uninformative (constant or capped at the close; left out of the likelihood) are not checked.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..metrics.latency import floored_log_latency
from .derived import ParamDraws, capable_probability, param_draws

QUANTILES = {"log_latency_p10": 0.1, "log_latency_p50": 0.5, "log_latency_p90": 0.9, "log_latency_p99": 0.99}
MAX_REPLICATES = 400
CHECK_COLUMNS = ["model", "task_type", "clock", "time_unit", "check", "observed", "predicted", "predicted_lo",
                 "predicted_hi"]


def prior_params(d, latency_family: str, draws: int, seed: int) -> ParamDraws:
    """Draws of the model's parameters from its prior."""
    import warnings

    import pymc as pm

    from .build import build_model

    model = build_model(d, latency_family)
    with warnings.catch_warnings():  # the likelihood is all potentials: no data enters the prior
        warnings.filterwarnings("ignore", message=".*Potentials.*")
        idata = pm.sample_prior_predictive(draws=draws, model=model, random_seed=seed)
    return param_draws(idata["prior"], d, seed=seed, prior=True)


def _thin(p: ParamDraws, rng, k: int) -> np.ndarray:
    return np.sort(rng.choice(p.n, size=min(k, p.n), replace=False))


def predictive_p_value(rep: np.ndarray, observed: float) -> float:
    """Mid-p: P(T_rep > T_obs) + ½ P(T_rep = T_obs) over the replicates."""
    rep = np.asarray(rep, dtype=float)
    return float(np.mean(rep > observed) + 0.5 * np.mean(rep == observed))


def _row(keys, check: str, observed: float, rep: np.ndarray, a: float) -> tuple:
    lo, hi = np.quantile(rep, [a, 1 - a])
    return (*keys, check, float(observed), float(np.mean(rep)), lo, hi, predictive_p_value(rep, observed))


def _success_rows(res, draws: dict, rng, a: float) -> list:
    out = []
    for j, r in enumerate(res._deriver.rows.itertuples()):
        rep = rng.binomial(r.n_episodes, np.clip(draws["p_success"][j], 0, 1)) / r.n_episodes
        out.append(_row((r.model, r.task_type, r.clock, ""), "success_rate", r.success_rate, rep, a))
    return out


def _success_given_misses(res, p: ParamDraws, rng, a: float) -> list:
    """Per task type × timed clock and miss class (0, 1, 2+): success rate, replicated given each
    episode's observed misses. Episodes alike in what their success probability depends on (model,
    type, item, length, misses) are one group, replicated as Binomial(n, p): the same distribution
    as one Bernoulli per episode, in memory that grows with the groups, not the episodes."""
    d = res.data
    e = d.episodes
    timed = e[e["timed"]]
    out = []
    if not len(timed):
        return out
    keys = ["m", "k", "i", "x", "M", "clock"]
    g = (timed.assign(_cls=np.minimum(timed["M"].to_numpy(), 2))
         .groupby(keys, sort=True).agg(n=("y", "size"), y=("y", "sum"), cls=("_cls", "first")).reset_index())
    p_cap = np.empty((p.n, len(g)))
    for (m, k), gg in g.groupby(["m", "k"]):
        pos = gg.index.to_numpy()
        p_cap[:, pos] = capable_probability(p, d, m, k, gg["i"].to_numpy(), gg["x"].to_numpy())
    p_s = p_cap * (1 - p.fatality[:, g["k"].to_numpy()]) ** g["M"].to_numpy()[None, :]
    y_rep = rng.binomial(g["n"].to_numpy()[None, :], np.clip(p_s, 0.0, 1.0))
    for (k, clock, c), gg in g.groupby(["k", "clock", "cls"]):
        n = int(gg["n"].sum())
        if n < 3:
            continue
        sel = gg.index.to_numpy()
        out.append(_row(("all", d.task_types[k], clock, ""), f"success_given_misses_{('0', '1', '2+')[c]}",
                        gg["y"].sum() / n, y_rep[:, sel].sum(axis=1) / n, a))
    return out


def _timing_share_rows(res, draws: dict, rng, a: float) -> list:
    """Observed shares of early and late-or-silent windowed decisions per timed row vs the model's."""
    st = res.steps
    if st is None or not len(st) or "window_close" not in st:
        return []
    keys = ["model", "task_type", "clock"]
    w = st[st["window_close"].notna() & (st["clock"].astype(str) != "paused")]
    f = pd.DataFrame({k: w[k].astype(str).to_numpy() for k in keys})
    f["early"] = w["too_early"].fillna(False).to_numpy(bool)
    f["silent"] = w["no_action"].to_numpy(bool)
    f["late_or_silent"] = w["too_late"].fillna(False).to_numpy(bool) | f["silent"].to_numpy()
    obs = f.groupby(keys).agg(n=("early", "size"), early=("early", "mean"), late_or_silent=("late_or_silent", "mean"),
                              silent=("silent", "mean"))
    out = []
    for j, r in enumerate(res._deriver.rows.itertuples()):
        key = (r.model, r.task_type, r.clock)
        if r.clock == "paused" or key not in obs.index:
            continue
        n = int(obs.loc[key, "n"])
        pred = {"early": draws["p_early"][j], "late_or_silent": draws["p_late"][j] + draws["p_silent"][j]}
        if r.latency_informative:
            pred["silent"] = draws["p_silent"][j]
        for name, pr in pred.items():
            if not np.isfinite(pr).all():
                continue
            rep = rng.binomial(n, np.clip(pr, 0, 1)) / n
            out.append(_row((*key, ""), f"share_{name}", obs.loc[key, name], rep, a))
    return out


def _latency_groups(st) -> dict:
    # zero latencies floored as the fit floors them (metrics.floored_log_latency), not dropped
    unit = st["time_unit"].astype(str).to_numpy()
    x = floored_log_latency(st["latency"].to_numpy(float), unit)
    acted = ~np.isnan(x)
    frame = pd.DataFrame({"model": st["model"].astype(str), "task_type": st["task_type"].astype(str),
                          "unit": unit, "x": x})[acted]
    return {k: g["x"].to_numpy() for k, g in frame.groupby(["model", "task_type", "unit"])}


def _replicate_acted(mu, sd, nu, pi, n: int, n_cens: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """(sorted replicated log-latencies with removed entries at +inf, kept count per draw)."""
    D = len(mu)
    z = rng.standard_normal((D, n)) if nu is None else rng.standard_t(nu[:, None], (D, n))
    sim = mu[:, None] + sd[:, None] * z
    k_mode = rng.binomial(n, pi) if pi is not None else np.zeros(D, dtype=int)
    sim[np.arange(n)[None, :] < k_mode[:, None]] = np.inf  # mode silences (iid: the first k_mode)
    keep = n - np.maximum(k_mode, n_cens)  # the largest latencies stand in for the other silences
    return np.sort(sim, axis=1), np.maximum(keep, 1)


def _quantile_of_first(s: np.ndarray, keep: np.ndarray, q: float) -> np.ndarray:
    """Per row, the q-quantile (linear) of its first ``keep`` entries."""
    pos = q * (keep - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, keep - 1)
    r = np.arange(len(s))
    return s[r, lo] + (pos - lo) * (s[r, hi] - s[r, lo])


def _latency_rows(res, p: ParamDraws, idx: np.ndarray, rng, a: float) -> list:
    d, st = res.data, res.steps
    if st is None or not len(st):
        return []
    groups = _latency_groups(st)
    nu = p.nu[idx] if getattr(res, "latency_family", "normal") == "t" and p.nu is not None else None
    out = []
    for c in d.latency.itertuples():
        if not getattr(c, "informative", True):
            continue  # left out of the likelihood: its replicates would check only the prior
        key = (d.models[c.m], d.task_types[c.k], d.units[c.u])
        x = groups.get(key)
        if x is None or len(x) < 5:
            continue
        n_cens = int(d.censored.loc[d.censored["cell"] == c.Index, "count"].sum())
        pi = p.silence[idx, c.m] if p.silence is not None else None
        s, keep = _replicate_acted(p.mu[idx, c.u, c.m, c.k], p.sigma[idx, c.u, c.m, c.k], nu, pi,
                                   len(x) + n_cens, n_cens, rng)
        for name, q in QUANTILES.items():
            out.append(_row((key[0], key[1], "all", key[2]), name, float(np.quantile(x, q)),
                            _quantile_of_first(s, keep, q), a))
    return out


def predictive_check(res, p: ParamDraws, seed: int, kind: str, ci_prob: float = 0.95) -> pd.DataFrame:
    """All checks of the module docstring for parameter draws ``p`` (posterior or prior)."""
    rng = np.random.default_rng(seed)
    a = (1 - ci_prob) / 2
    idx = _thin(p, rng, MAX_REPLICATES)
    sub = p.take(idx)
    draws = res._deriver.compute(sub)
    rows = (_success_rows(res, draws, rng, a) + _success_given_misses(res, sub, rng, a)
            + _timing_share_rows(res, draws, rng, a) + _latency_rows(res, p, idx, rng, a))
    f = pd.DataFrame(rows, columns=CHECK_COLUMNS + ["p_value"])
    f["covered"] = (f["predicted_lo"] <= f["observed"]) & (f["observed"] <= f["predicted_hi"])
    f["extreme"] = (f["p_value"] < 0.025) | (f["p_value"] > 0.975)
    f["kind"] = kind
    return f
