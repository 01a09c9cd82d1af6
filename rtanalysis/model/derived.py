"""Derived quantities computed in numpy on posterior (or prior) draws — kept out of the PyMC graph
so sampling stays cheap.

Per row (model, task_type, clock): ``p_capable`` (sample-average of p_cap over the row's episodes'
items), ``p_timely`` (mean over the row's episodes of Π_d (1 − f_k q_d), q_d = P(miss | window,
μ + log λ, σ)), ``p_success = p_capable · p_timely``, ``share_timing = p_capable(1 − p_timely) /
(1 − p_success)`` and decision-level ``p_on_time``, ``p_early``, ``p_late``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit, log_ndtr, ndtr

from .data import ModelData

QUANTITIES = ("p_success", "p_capable", "p_timely", "share_timing", "p_on_time", "p_early", "p_late", "p_silent")


@dataclass
class ParamDraws:
    """Flat posterior draws (leading axis = draw) of what the derived quantities need."""

    mu: np.ndarray  # (S, unit, model, task_type) mean log-latency
    sigma: np.ndarray  # (S, unit, model, task_type)
    eta: np.ndarray  # (S, model, task_type) capability logit without item effect
    item: np.ndarray  # (S, n_items + 1) item effects, last = 0 (no task id / unseen)
    fatality: np.ndarray  # (S, task_type)
    nu: np.ndarray | None = None
    silence: np.ndarray | None = None  # (S, model) P(silent whatever the latency)

    @property
    def n(self) -> int:
        return self.fatality.shape[0]


def _flat(ds, name, default_shape=None):
    if name not in ds:
        return None
    a = np.asarray(ds[name].values, dtype=float)
    return a.reshape((-1,) + a.shape[2:])


def param_draws(ds, d: ModelData) -> ParamDraws:
    """From a posterior/prior dataset with (chain, draw, ...) variables."""
    g = lambda n: _flat(ds, n)  # noqa: E731
    S = g("a0").shape[0]
    mk = g("model_lat")[:, :, None] + g("type_lat")[:, None, :] + g("model_type_lat")
    mu = g("c0")[:, :, None, None] + mk[:, None]
    ls = g("s0")[:, :, None, None] + (g("model_sigma")[:, :, None] + g("type_sigma")[:, None, :])[:, None]
    eta = g("a0")[:, None, None] + g("model_cap")[:, :, None] + g("type_cap")[:, None, :] + g("model_type_cap")
    if d.items:
        item = np.concatenate([g("sd_item_cap")[:, None] * g("z_item_cap"), np.zeros((S, 1))], axis=1)
    else:
        item = np.zeros((S, 1))
    nu = g("nu")
    return ParamDraws(mu, np.exp(ls), eta, item, g("fatality"), nu, g("silence"))


def rows_of(d: ModelData) -> pd.DataFrame:
    """The decomposition rows: model × task_type × timed clock present; paused-only cells get one
    ``paused`` row. Columns: model, task_type, clock, m, k, n_episodes, success_rate."""
    e = d.episodes
    out = []
    for (m, k), g in e.groupby(["m", "k"], sort=True):
        timed = g[g["timed"]]
        groups = timed.groupby("clock", sort=True) if len(timed) else [("paused", g)]
        for clock, gg in groups:
            out.append((d.models[m], d.task_types[k], clock, m, k, len(gg), gg["y"].mean(), gg.index.to_numpy()))
    return pd.DataFrame(out, columns=["model", "task_type", "clock", "m", "k", "n_episodes", "success_rate",
                                      "episodes"])


def _miss_probs(mu, sigma, lo, hi, nu=None):
    """P(latency < lo) and P(latency > hi) for log-normal (or log-t) latency; (S, W) each."""
    with np.errstate(divide="ignore"):
        llo, lhi = np.log(lo), np.log(hi)
    z_lo = (llo[None, :] - mu[:, None]) / sigma[:, None]
    z_hi = (lhi[None, :] - mu[:, None]) / sigma[:, None]
    if nu is None:
        return ndtr(z_lo), ndtr(-z_hi)
    from scipy.stats import t as student_t

    return student_t.cdf(z_lo, nu[:, None]), student_t.sf(z_hi, nu[:, None])


class Deriver:
    """Vectorised derived quantities for one dataset; reused across λ and swap scenarios."""

    def __init__(self, d: ModelData):
        self.d = d
        self.rows = rows_of(d)
        self._ew = d.episode_windows
        self._row_cache = [self._row_structure(r) for r in self.rows.itertuples()]

    def _row_structure(self, r):
        d = self.d
        eps = r.episodes
        items, item_w = np.unique(d.episodes.loc[eps, "i"].to_numpy(), return_counts=True)
        if r.clock == "paused":
            return items, item_w / item_w.sum(), None
        units = d.episodes.loc[eps, "u"].to_numpy()
        per_unit = []
        for u in np.unique(units):
            eu = eps[units == u]
            wids = d.windows.index[d.windows["u"] == u].to_numpy()
            C = np.zeros((len(eu), len(wids)))
            ew = self._ew[self._ew["ep"].isin(eu)]
            if len(ew):
                r = pd.Index(eu).get_indexer(ew["ep"].to_numpy())
                c = pd.Index(wids).get_indexer(ew["wid"].to_numpy())
                np.add.at(C, (r, c), ew["count"].to_numpy(float))
            pattern, weight = np.unique(C, axis=0, return_counts=True)
            per_unit.append((u, wids, pattern, weight / len(eps)))
        return items, item_w / item_w.sum(), per_unit

    def compute(self, p: ParamDraws, lam: float = 1.0, swap: dict[int, int] | None = None) -> dict[str, np.ndarray]:
        """Draws (rows × S) of every quantity; ``swap`` maps a row's model index to the model whose
        latency (μ, σ) it borrows (``as:<model>`` counterfactual)."""
        n, S = len(self.rows), p.n
        out = {q: np.empty((n, S)) for q in QUANTITIES}
        log_lam = np.log(lam)
        W = self.d.windows
        for j, (r, (items, iw, per_unit)) in enumerate(zip(self.rows.itertuples(), self._row_cache)):
            p_cap = expit(p.eta[:, r.m, r.k][:, None] + p.item[:, items]) @ iw
            if per_unit is None:
                p_t = np.ones(S)
                on, early, late, silent = (np.full(S, np.nan),) * 4
            else:
                lat_m = swap.get(r.m, r.m) if swap else r.m
                p_t = np.zeros(S)
                tot = np.zeros(S)
                early = np.zeros(S)
                late = np.zeros(S)
                silent = np.zeros(S)
                n_dec = 0.0
                for u, wids, pattern, weight in per_unit:
                    mu = p.mu[:, u, lat_m, r.k] + log_lam
                    pe, pl = _miss_probs(mu, p.sigma[:, u, lat_m, r.k], W.loc[wids, "open"].to_numpy(),
                                         W.loc[wids, "close"].to_numpy(), p.nu)
                    pi = p.silence[:, lat_m][:, None] if p.silence is not None else 0.0
                    pe, pl = (1 - pi) * pe, (1 - pi) * pl
                    q = np.clip(pi + pe + pl, 0.0, 1.0)
                    log_keep = np.log1p(-p.fatality[:, r.k][:, None] * q)  # (S, W)
                    p_t += np.exp(log_keep @ pattern.T) @ weight
                    dec = pattern.T @ weight  # expected decisions per window (per row episode)
                    early += pe @ dec
                    late += pl @ dec
                    silent += (np.broadcast_to(pi, pe.shape) if np.ndim(pi) else np.full(pe.shape, pi)) @ dec
                    n_dec += dec.sum()
                    tot += weight.sum()
                p_t = p_t / np.maximum(tot, 1e-300) if np.any(tot) else np.ones(S)
                if n_dec > 0:
                    early, late, silent = early / n_dec, late / n_dec, silent / n_dec
                else:
                    early = late = silent = np.full(S, np.nan)
                on = 1.0 - early - late - silent
            p_s = p_cap * p_t
            with np.errstate(invalid="ignore", divide="ignore"):
                share = np.where(p_s < 1.0, p_cap * (1.0 - p_t) / np.maximum(1.0 - p_s, 1e-300), 0.0)
            if per_unit is None:
                share = np.zeros(S)
            for q, v in zip(QUANTITIES, (p_s, p_cap, p_t, share, on, early, late, silent)):
                out[q][j] = v
        return out


def summarise(rows: pd.DataFrame, draws: dict[str, np.ndarray], quantities, interval: float) -> pd.DataFrame:
    """Posterior mean and equal-tailed interval of each quantity, one row per ``rows`` row (NaN
    where a quantity is undefined for a row, e.g. decision timing under ``paused``)."""
    import warnings

    a = (1.0 - interval) / 2.0
    out = rows.copy()
    for q in quantities:
        x = draws[q]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out[q] = np.nanmean(x, axis=1)
            lo, hi = np.nanquantile(x, [a, 1 - a], axis=1)
        out[f"{q}_lo"], out[f"{q}_hi"] = lo, hi
    return out
