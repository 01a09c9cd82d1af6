"""Derived quantities computed in numpy on posterior (or prior) draws — kept out of the PyMC graph
so sampling stays cheap.

Per row (model, task_type, clock): ``p_capable`` (sample-average of p_cap over the row's episodes,
with their items and lengths), ``p_success`` (sample-average of p_cap_e · Π_d (1 − f_k q_d), q_d =
P(miss | window, μ + log λ, σ, π)), ``p_timely = p_success / p_capable``, ``share_timing =
p_capable(1 − p_timely) / (1 − p_success)`` and decision-level ``p_on_time``, ``p_early``,
``p_late``, ``p_silent``. ``p_silent`` is the share of windowed decisions logged with no action
(the no-answer mode π or a latency past the censor point), as the simulator's truth and the
observed shares define it; ``p_late`` counts actions after the close only.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy.special import expit, log_expit, logsumexp

from ..schema import TIMED_CLOCKS
from .data import ModelData, informative_cells, silent_episode_arrays
from .families import (FAMILIES, SILENT_SLOWNESS_NODES, WRONG_SHARE_FLOOR, LatencyFamily, at_model, episode_silence_loglik,
                       family, mixed_log_sf, normal_gauss_hermite, single_silence_loglik)

QUANTITIES = ("p_success", "p_capable", "p_timely", "share_timing", "p_on_time", "p_early", "p_late", "p_silent")


@dataclass
class ParamDraws:
    """Flat posterior draws (leading axis = draw) of what the derived quantities need."""

    mu: np.ndarray  # (S, unit, model, task_type) mean log-latency
    sigma: np.ndarray  # (S, unit, model, task_type)
    eta: np.ndarray  # (S, model, task_type) capability logit without item effect
    item: np.ndarray  # (S, n_items + 1) item effects, last = 0 (no task id / unseen)
    fatality: np.ndarray  # (S, task_type)
    silence: np.ndarray | None = None  # (S, model) P(silent whatever the latency), 0 without the mode
    length: np.ndarray | None = None  # (S, task_type) capability slope on centred log decisions
    item_lat: np.ndarray | None = None  # (S, n_items + 1) item time intensities (log-latency), last = 0
    latency_family: str = "normal"  # a :mod:`.families` entry
    shape: dict = field(default_factory=dict)  # its shape parameters: (S,) or (S, model) each
    timed_cap: np.ndarray | None = None  # (S, model) capability logit under a timed clock minus paused
    #: (S, model, task_type) log-latency of content-wrong decisions minus correct ones (``latency_by_correctness``):
    #: ``mu`` is then the correct decisions' mean
    wrong_lat: np.ndarray | None = None
    #: (S, task_type) share of log-latency variance between episodes (episode slowness); None: decisions independent
    latency_icc: np.ndarray | None = None

    @property
    def n(self) -> int:
        return self.fatality.shape[0]

    @property
    def family(self) -> LatencyFamily:
        return family(self.latency_family)

    def take(self, idx) -> "ParamDraws":
        """The draws ``idx`` only."""
        arrays = ("mu", "sigma", "eta", "item", "fatality", "silence", "length", "item_lat", "timed_cap", "wrong_lat",
                  "latency_icc")
        return replace(self, **{a: None if getattr(self, a) is None else getattr(self, a)[idx] for a in arrays},
                       shape={k: v[idx] for k, v in self.shape.items()})

    def dist_at(self, m: int) -> tuple[LatencyFamily, dict]:
        """The latency family and its shape parameters for model ``m``, as (S, 1) columns."""
        return self.family, at_model(self.family, self.shape, m, column=True)

    def item_shift(self, items) -> np.ndarray | float:
        """(S, len(items)) log-latency shift of these items (0 without item time intensities)."""
        return 0.0 if self.item_lat is None else self.item_lat[:, np.asarray(items)]


def _flat(ds, name, default_shape=None):
    if name not in ds:
        return None
    a = np.asarray(ds[name].values, dtype=float)
    return a.reshape((-1,) + a.shape[2:])


#: draws × censored groups evaluated at a time in :func:`silence_mode_probability` (~16 MB a temporary)
SILENCE_CHUNK_ELEMENTS = 2_000_000


def censored_log_sf(fam: LatencyFamily, log_close, mu, sigma, shape: dict, d: ModelData, cells, k, m,
                    wrong_lat=None):
    """log S(g) of silent decisions at their censor points ``log_close`` (the hurdle's censored term):
    one latency distribution, or with ``wrong_lat`` (S, model, task_type) the cell's mixture of correct
    and wrong decisions, weighted by its wrong share (``build._silence_hurdle``). ``cells``: the
    decisions' latency rows; ``m``, ``k``: their model and task type codes."""
    if wrong_lat is None:
        return fam.logsf(log_close, mu, sigma, **shape)
    q = np.clip(d.latency["q_wrong"].to_numpy(float)[cells], WRONG_SHARE_FLOOR, 1 - WRONG_SHARE_FLOOR)
    with np.errstate(divide="ignore"):
        return mixed_log_sf(fam.logsf, log_close, mu, sigma, wrong_lat[:, m, k], q, np.logaddexp, np.log, np.log1p,
                            **shape)


def silence_mode_probability(mu, sigma, fam: LatencyFamily, shape: dict, pi, prevalence, d: ModelData,
                             item_lat=None, wrong_lat=None, latency_icc=None) -> np.ndarray:
    """(S, model): P(the model has a no-answer mode | parameters, data), from the hurdle's two
    likelihoods (what :func:`.build.build_model` marginalises). Computed a block of draws at a time:
    several (draws × censored groups) arrays would be alive at once otherwise. ``wrong_lat``: latency
    by correctness (:func:`censored_log_sf`); ``latency_icc`` (S, task_type): episode slowness, an
    episode's silences given its acted latencies (``_episode_silences``)."""
    S, n_m = pi.shape
    C, E = d.censored, d.exposure
    with_mode = np.zeros((S, n_m))
    without = np.zeros((S, n_m))
    if latency_icc is not None and d.silent_episodes is not None:
        with_mode, without = _episode_silences(mu, sigma, pi, latency_icc, d)
    elif len(C):
        u, m, k = C["u"].to_numpy(), C["m"].to_numpy(), C["k"].to_numpy()
        items, log_close = C["i"].to_numpy(), C["log_close"].to_numpy()[None, :]
        cnt = C["count"].to_numpy(float)
        onehot = np.zeros((len(C), n_m))
        onehot[np.arange(len(C)), m] = 1.0
        step = max(1, SILENCE_CHUNK_ELEMENTS // len(C))
        for a in range(0, S, step):
            b = slice(a, a + step)
            shift = 0.0 if item_lat is None else item_lat[b][:, items]
            log_s = censored_log_sf(fam, log_close, mu[b][:, u, m, k] + shift, sigma[b][:, u, m, k],
                                    at_model(fam, {n: v[b] for n, v in shape.items()}, m), d, C["cell"].to_numpy(),
                                    k, m, None if wrong_lat is None else wrong_lat[b])
            pic = pi[b][:, m]
            with_mode[b] += (cnt * np.logaddexp(np.log(pic), np.log1p(-pic) + log_s)) @ onehot
            without[b] += (cnt * log_s) @ onehot
    if len(E):
        em = E["m"].to_numpy()
        np.add.at(with_mode.T, em, (E["n_acted"].to_numpy(float) * np.log1p(-pi[:, em])).T)
    logit = np.log(prevalence)[:, None] + with_mode - np.log1p(-prevalence)[:, None] - without
    return expit(logit)


def _episode_silences(mu, sigma, pi, latency_icc, d: ModelData) -> tuple[np.ndarray, np.ndarray]:
    """(S, model) ×2: the silences' log-likelihood with the no-answer mode and without, under episode
    slowness, as ``build._episode_silences`` (the acted decisions' factor 1 − π aside)."""
    L = d.latency
    fam = family("normal")
    S, n_m = pi.shape
    with_mode, without = np.zeros((S, n_m)), np.zeros((S, n_m))
    for A in silent_episode_arrays(d.silent_episodes):
        cell = A["cell"]
        m, k, u = (L[c].to_numpy()[cell] for c in ("m", "k", "u"))
        n = A["n"] * informative_cells(L)[cell]
        onehot = np.zeros((len(cell), n_m))
        onehot[np.arange(len(cell)), m] = A["c"]
        nodes = SILENT_SLOWNESS_NODES if "count" in A else 1
        step = max(1, SILENCE_CHUNK_ELEMENTS // max(1, A["log_close"].size * nodes))
        for a in range(0, S, step):
            b = slice(a, a + step)
            pim = pi[b][:, m]
            per_episode = (mu[b][:, u, m, k], sigma[b][:, u, m, k], latency_icc[b][:, k], n, A["xbar"], np.log(pim),
                           np.log1p(-pim))
            with np.errstate(divide="ignore"):
                if "count" in A:
                    w, wo = episode_silence_loglik(fam.logsf, A["log_close"], A["count"], *per_episode, np.logaddexp,
                                                   logsumexp, np.sqrt)
                else:
                    w, wo = single_silence_loglik(fam.logsf, A["log_close"], *per_episode, np.logaddexp, np.sqrt)
            with_mode[b] += w @ onehot
            without[b] += wo @ onehot
    return with_mode, without


def param_draws(ds, d: ModelData, seed: int = 0, prior: bool = False) -> ParamDraws:
    """From a posterior/prior dataset with (chain, draw, ...) variables. The two hurdle indicators
    marginalised in the sampler — a model's silence mode, a task type's always-fatal misses — are
    drawn per draw from their conditional probabilities given the data (``prior``: from their
    prevalence alone), seeded by ``seed``."""
    g = lambda n: _flat(ds, n)  # noqa: E731
    S = g("a0").shape[0]
    mk = g("model_lat")[:, :, None] + g("type_lat")[:, None, :] + g("model_type_lat")
    mu = g("c0")[:, :, None, None] + mk[:, None]
    ls = g("s0")[:, :, None, None] + (g("model_sigma")[:, :, None] + g("type_sigma")[:, None, :])[:, None]
    eta = g("a0")[:, None, None] + g("model_cap")[:, :, None] + g("type_cap")[:, None, :] + g("model_type_cap")
    if d.items and "item_cap" in ds:  # the item effects as the model computed them
        item = np.concatenate([g("item_cap"), np.zeros((S, 1))], axis=1)
    elif d.items:  # a fit saved before item_cap was recorded: every item non-centred
        z = g("z_item_cap")
        in_type = np.eye(len(d.task_types))[d.item_type]  # item × type membership; build.py centres the same way
        z_mean = (z @ in_type) / np.maximum(in_type.sum(axis=0), 1)
        item = np.concatenate([g("sd_item_cap")[:, d.item_type] * (z - z_mean[:, d.item_type]), np.zeros((S, 1))],
                              axis=1)
    else:
        item = np.zeros((S, 1))
    fam = _fitted_family(ds)
    shape = {name: g(name) for name in fam.params}
    sigma = np.exp(ls)
    item_lat = np.concatenate([g("item_lat"), np.zeros((S, 1))], axis=1) if "item_lat" in ds else None
    wrong_lat = g("wrong_lat")
    pi = g("silence")
    prevalence = g("silence_prevalence")
    if pi is not None and prevalence is not None:
        p_mode = (np.broadcast_to(prevalence[:, None], pi.shape) if prior
                  else silence_mode_probability(mu, sigma, fam, shape, pi, prevalence, d, item_lat, wrong_lat,
                                                g("latency_icc")))
        pi = np.where(np.random.default_rng(seed).random(pi.shape) < p_mode, pi, 0.0)
    fatality = g("fatality")
    always = g("always_fatal")
    if always is not None:
        rng = np.random.default_rng([seed, 1])
        p_always = (np.broadcast_to(always[:, None], fatality.shape) if prior
                    else expit(g("always_fatal_log_odds")))
        fatality = np.where(rng.random(fatality.shape) < p_always, 1.0, fatality)
    return ParamDraws(mu, sigma, eta, item, fatality, pi, g("length_cap"), item_lat, fam.name, shape, g("timed_cap"),
                      wrong_lat, g("latency_icc"))


def _fitted_family(ds) -> LatencyFamily:
    """The latency family a posterior was drawn from: the one with the most shape parameters, all
    present in ``ds`` (``normal`` has none)."""
    have = [f for f in FAMILIES.values() if all(p in ds for p in f.params)]
    return max(have, key=lambda f: len(f.params))


def capable_probability(p: ParamDraws, d: ModelData, m: int, k: int, items, xs, timed=False) -> np.ndarray:
    """(S, G) P(capable) of episodes of model m, type k with ``items`` and centred log lengths ``xs``
    (:func:`.build.build_model`: P(decision right)^(g_k exp(β_k x))); ``timed`` (one flag or one per
    episode group): under a timed clock, which moves the logit by κ_m when the fit has clock effects."""
    items = np.asarray(items)
    timed = np.broadcast_to(np.asarray(timed, dtype=float), items.shape)
    # the logit depends on the item (and the clock), the exponent on the length: each is computed once per
    # distinct value and gathered, not once per class (same operations per element: the same numbers)
    pairs, by_pair = np.unique(np.column_stack([items.astype(float), timed]), axis=0, return_inverse=True)
    logit = p.eta[:, m, k][:, None] + p.item[:, pairs[:, 0].astype(np.int64)] + d.type_offset[k]
    if p.timed_cap is not None:
        logit = logit + p.timed_cap[:, m][:, None] * pairs[:, 1]
    lengths, by_length = np.unique(np.asarray(xs, dtype=float), return_inverse=True)
    expo = np.exp(d.type_log_g[k] + p.length[:, k][:, None] * lengths[None, :])
    return np.exp(expo[:, by_length.ravel()] * log_expit(logit)[:, by_pair.ravel()])


def rows_of(d: ModelData) -> pd.DataFrame:
    """The decomposition rows: model × task_type × timed clock present; paused-only cells get one
    ``paused`` row. Columns: model, task_type, clock, m, k, n_episodes, success_rate, episodes
    (index labels). Sorted by (m, k, clock); one pass over integer codes (a pandas group-by that takes
    the whole frame per group costs seconds at 10^6 episodes)."""
    e = d.episodes
    m, k = e["m"].to_numpy(np.int64), e["k"].to_numpy(np.int64)
    timed = e["timed"].to_numpy(bool)
    codes, names = pd.factorize(e["clock"])
    names = [str(x) for x in names]
    if "paused" not in names:
        names.append("paused")
    cell = m * (int(k.max(initial=0)) + 1) + k
    cell_timed = np.bincount(cell, weights=timed.astype(float)) > 0
    # a timed episode's row is its clock; in a cell without timed episodes, one paused row
    row_clock = np.where(timed, codes, np.where(cell_timed[cell], -1, names.index("paused")))
    alpha = np.argsort(np.argsort(names))  # clocks in alphabetical order, as a sorted group-by had them
    pos = np.flatnonzero(row_clock >= 0)
    pos = pos[np.lexsort((alpha[row_clock[pos]], k[pos], m[pos]))]  # stable: index order within a row
    key = np.column_stack([m[pos], k[pos], row_clock[pos]])
    starts = np.flatnonzero(np.r_[True, (key[1:] != key[:-1]).any(axis=1)])
    ends = np.r_[starts[1:], len(pos)]
    y = e["y"].to_numpy(float)
    labels = e.index.to_numpy()
    out = []
    for a, b in zip(starts, ends):
        mm, kk, cc = key[a]
        sel = pos[a:b]
        out.append((d.models[mm], d.task_types[kk], names[cc], int(mm), int(kk), len(sel), float(y[sel].mean()),
                    labels[sel]))
    return pd.DataFrame(out, columns=["model", "task_type", "clock", "m", "k", "n_episodes", "success_rate",
                                      "episodes"])


def _distinct_rows(columns) -> tuple[np.ndarray, np.ndarray]:
    """(distinct rows of the stacked ``columns``, in order of first appearance, and each row's index into
    them), by hashing each row's bytes in a dict (np.unique with axis=0 sorts row views, and a pandas
    MultiIndex factorises every column first: seconds over 240 rows × thousands of episodes)."""
    arr = np.column_stack([np.asarray(c, dtype=float) for c in columns]) + 0.0  # + 0.0: -0.0 is 0.0
    arr = np.ascontiguousarray(np.where(np.isnan(arr), np.nan, arr))  # one NaN, whatever its payload
    if not len(arr):
        return arr, np.zeros(0, dtype=np.int64)
    rows = arr.view(np.dtype((np.void, arr.dtype.itemsize * arr.shape[1]))).ravel()
    first: dict = {}
    codes = np.fromiter((first.setdefault(r.tobytes(), len(first)) for r in rows), dtype=np.int64, count=len(rows))
    starts = np.zeros(len(first), dtype=np.int64)
    starts[codes[::-1]] = np.arange(len(codes))[::-1]  # each distinct row's first position
    return arr[starts], codes


def censor_points(d: ModelData) -> dict[tuple[int, int, int], float]:
    """Log censor point g of each (m, k, u) latency cell that logged a silent decision: a latency
    beyond g is logged as no action (``data._latency_tables``: g = max(window close, the
    cell's largest timed latency), what the hurdle's censored term uses). The smallest censored
    point of the cell, raised to each window's close where used: exact when the cell's windows share
    one close. A cell without silences has no observed give-up (no g): every miss there is early or late."""
    C = d.censored
    if not len(C):
        return {}
    return {tuple(int(x) for x in key): float(v)
            for key, v in C.groupby(["m", "k", "u"])["log_close"].min().items()}


def _beyond(dist, mu, sigma, log_point):
    """P(log latency > ``log_point``) per draw and window; (S, W). ``dist``: (family, shape columns)."""
    fam, shape = dist
    return fam.sf(np.asarray(log_point)[None, :], mu[:, None], sigma[:, None], **shape)


def _miss_probs(dist, mu, sigma, lo, hi):
    """P(latency < lo) and P(latency > hi); (S, W) each. ``dist``: (family, shape columns)."""
    fam, shape = dist
    with np.errstate(divide="ignore"):
        llo, lhi = np.log(lo), np.log(hi)
    return (fam.cdf(llo[None, :], mu[:, None], sigma[:, None], **shape),
            fam.sf(lhi[None, :], mu[:, None], sigma[:, None], **shape))


#: the most memory :class:`Deriver` keeps for the capability of every row's timing classes
#: (draws × classes; ``Deriver._capability_by_class``)
CAPABILITY_CACHE_BYTES = 256 * 2**20


@dataclass
class RowStructure:
    """One row's episodes grouped twice: by what capability depends on (item, length: ``A`` classes)
    and by what timing depends on (time unit, the item when items have time intensities, and the
    count of decisions in each window: ``B`` classes). ``weight`` (A × B, sparse) is the share of the row's episodes in each pair, so
    ``p_success = Σ_ab weight_ab · p_cap_a · keep_b``: capability and timing are combined per
    episode (longer episodes can be both harder and more exposed to misses), yet the capability,
    the costly part, is computed once per ``A`` class and reduced to ``B`` classes once per set of
    draws, whatever the λ or latency swap."""

    items: np.ndarray  # (A,)
    xs: np.ndarray  # (A,)
    weight: object  # scipy.sparse (A, B)
    class_weight: np.ndarray  # (B,) share of the row's episodes per timing class
    units: np.ndarray  # the row's distinct time units
    class_unit: np.ndarray  # (B,) time unit of each timing class
    #: per (time unit, item): (unit, item (-1: none or no time intensity), (window opens, closes),
    #: pattern (B_u, W_u) decisions per window, B indices)
    per_unit: list | None


class Deriver:
    """Vectorised derived quantities for one dataset; reused across λ and swap scenarios.

    A row's episodes are grouped by what their probabilities depend on (:class:`RowStructure`).
    ``p_capable = Σ_a w_a p_cap_a`` and ``p_success = Σ_ab w_ab p_cap_a T_b``, so ``p_timely =
    p_success / p_capable`` is P(no fatal miss | capable) even when longer episodes are both harder
    and more exposed to misses.
    """

    def __init__(self, d: ModelData, item_latency: bool = False):
        self.d = d
        #: timing classes split by item: the item's time intensity moves its decisions' P(miss)
        self.item_latency = bool(item_latency and d.items)
        self.rows = rows_of(d)
        self._row_windows = self._windows_by_row()
        self._row_cache = [self._row_structure(r, w) for r, w in zip(self.rows.itertuples(), self._row_windows)]
        lat = d.latency
        flat = lat[~lat["informative"]] if "informative" in lat else lat.iloc[:0]
        #: (m, k, u) latency cells with (nearly) constant latencies: P(miss) from the logged misses
        self.uninformative = {tuple(x) for x in flat[["m", "k", "u"]].to_numpy()}
        self.rows["latency_informative"] = [
            not any((r.m, r.k, u) in self.uninformative for u in s.units)
            for r, s in zip(self.rows.itertuples(), self._row_cache)]
        self._logged_q: dict = {}
        #: (m, k, u) -> share of content-wrong labelled decisions, where wrong ones have their own latency
        self._q_wrong = ({(int(m), int(k), int(u)): float(q) for m, k, u, q in
                          zip(lat["m"], lat["k"], lat["u"], lat["q_wrong"])} if d.latency_by_correctness else {})
        self._caps: list[tuple] = []
        self._layout_cache: dict | None = None
        self._censor = censor_points(d)

    def logged_miss_draws(self, m: int, k: int, clock: str, u: int, S: int) -> np.ndarray:
        """(S,) draws of P(miss) per decision from the logged misses of (m, k, clock, u): the
        Beta(1 + misses, 1 + timed decisions − misses) posterior under a uniform prior, seeded by the
        cell, so the same data give the same draws."""
        key = (m, k, clock, u, S)
        if key not in self._logged_q:
            tm = self.d.timed_misses
            sel = tm[(tm["m"] == m) & (tm["k"] == k) & (tm["clock"] == clock) & (tm["u"] == u)] \
                if tm is not None else None
            n, miss = (int(sel["n"].sum()), int(sel["miss"].sum())) if sel is not None else (0, 0)
            rng = np.random.default_rng([20261, m, k, u, sum(map(ord, clock))])
            self._logged_q[key] = rng.beta(1 + miss, 1 + n - miss, size=S)
        return self._logged_q[key]

    def _windows_by_row(self) -> list[pd.DataFrame]:
        """Each row's slice of ``episode_windows`` (ep, wid, count), split in one pass (a filter per
        row costs minutes at 10^6 episodes)."""
        d = self.d
        # the windows of the episodes as they would have been played (an episode that its failure ended
        # borrows those of one that reached its end: :func:`.data.natural_lengths`)
        ew = d.natural_windows if d.natural_windows is not None else d.episode_windows
        row_of = np.full(len(d.episodes), -1, dtype=np.int64)
        for j, eps in enumerate(self.rows["episodes"]):
            row_of[d.episodes.index.get_indexer(eps)] = j
        at = d.episodes.index.get_indexer(ew["ep"].to_numpy())
        ew_row = np.where(at >= 0, row_of[at], -1)
        order = np.argsort(ew_row, kind="stable")
        bounds = np.searchsorted(ew_row[order], np.arange(len(self.rows) + 1))
        return [ew.iloc[order[a:b]] for a, b in zip(bounds[:-1], bounds[1:])]

    def modal_unit(self) -> np.ndarray:
        """Per row, the time unit most of its episodes use (the smallest code on a tie)."""
        return np.array([int(np.argmax(np.bincount(s.class_unit, weights=s.class_weight))) for s in self._row_cache])

    def median_close(self) -> np.ndarray:
        """Per row, the median window close over its decisions (NaN for a row without windows)."""
        close = self.d.windows["close"]
        out = np.full(len(self.rows), np.nan)
        for j, w in enumerate(self._row_windows):
            if len(w):
                out[j] = float(np.median(np.repeat(close.loc[w["wid"]].to_numpy(float), w["count"].to_numpy())))
        return out

    def _row_structure(self, r, ew: pd.DataFrame) -> RowStructure:
        from scipy.sparse import coo_matrix

        d = self.d
        eps = np.asarray(r.episodes)
        ep = d.episodes.loc[eps]
        units = ep["u"].to_numpy()
        wids_all = d.windows.index.to_numpy()
        C = np.zeros((len(eps), len(wids_all)))
        if r.clock != "paused":
            if len(ew):
                np.add.at(C, (pd.Index(eps).get_indexer(ew["ep"].to_numpy()),
                              pd.Index(wids_all).get_indexer(ew["wid"].to_numpy())), ew["count"].to_numpy(float))
        x = ep["x_nat"] if "x_nat" in ep else ep["x"]  # over natural lengths (the logged ones without truncation)
        cap_key, a_of = _distinct_rows([ep["i"].to_numpy(float), x.to_numpy(float)])
        timing_item = ep["i"].to_numpy(float) if self.item_latency else np.full(len(eps), -1.0)
        tim_key, b_of = _distinct_rows([units.astype(float), timing_item, *C.T])
        weight = coo_matrix((np.full(len(eps), 1.0 / len(eps)), (a_of, b_of)),
                            shape=(len(cap_key), len(tim_key))).tocsr()  # duplicates summed
        class_weight = np.bincount(b_of, minlength=len(tim_key)) / len(eps)
        gu = tim_key[:, 0].astype(np.int64)
        structure = RowStructure(cap_key[:, 0].astype(np.int64), cap_key[:, 1], weight, class_weight,
                                 np.unique(gu), gu, None)
        if r.clock == "paused":
            return structure
        structure.per_unit = []
        gi = tim_key[:, 1].astype(np.int64)
        for u in np.unique(gu):
            in_unit = (d.windows["u"] == u).to_numpy()
            # window bounds as arrays here, once, not looked up per λ and swap in compute()
            bounds = (d.windows["open"].to_numpy(float)[in_unit], d.windows["close"].to_numpy(float)[in_unit])
            wids = d.windows.index[in_unit].to_numpy()
            for item in np.unique(gi[gu == u]):
                sel = np.flatnonzero((gu == u) & (gi == item))
                pattern = tim_key[sel][:, 2 + wids]
                # only the windows these episodes have: the others' miss probabilities would be computed
                # for every λ and swap and multiplied by zero
                used = pattern.any(axis=0)
                structure.per_unit.append((u, item, (bounds[0][used], bounds[1][used]), pattern[:, used], sel))
        return structure

    def near_close_share(self, p: ParamDraws, fraction: float) -> np.ndarray:
        """(rows, S): expected share of a timed row's windowed decisions that act in the last
        ``fraction`` of the time to the close, (1 − π)·P(close·(1 − fraction) < L ≤ close), averaged
        over its windows by decisions; NaN for paused rows and rows with uninformative latencies."""
        out = np.full((len(self.rows), p.n), np.nan)
        informative = self.rows["latency_informative"].to_numpy(bool)
        for j, (r, s) in enumerate(zip(self.rows.itertuples(), self._row_cache)):
            if s.per_unit is None or not informative[j]:
                continue
            num, n_dec = np.zeros(p.n), 0.0
            pi = p.silence[:, r.m][:, None] if p.silence is not None else 0.0
            for u, item, (_, close), pattern, sel in s.per_unit:
                mu, sigma = p.mu[:, u, r.m, r.k] + p.item_shift(item), p.sigma[:, u, r.m, r.k]
                near = []
                for shift in self._wrong_shifts(p, r.m, r.k, r.m, u):
                    below, beyond = _miss_probs(p.dist_at(r.m), mu + shift, sigma, close * (1 - fraction), close)
                    near.append(1 - below - beyond)
                dec = pattern.T @ s.class_weight[sel]
                num += ((1 - pi) * self._mix_wrong(r.m, r.k, u, near)) @ dec
                n_dec += dec.sum()
            if n_dec > 0:
                out[j] = num / n_dec
        return out

    def _kept_capability(self, p: ParamDraws) -> dict | None:
        """What is kept of the capability of draws ``p`` (a dict, filled by the callers), or None where it
        does not fit :data:`CAPABILITY_CACHE_BYTES`. Kept for the last two sets of draws: the posterior's
        and a thinned one (the report's λ curves)."""
        entry = next((e for e in self._caps if e[0] is p), None)
        if entry is None:
            fits = p.n * sum(len(s.class_weight) for s in self._row_cache) * 8 <= CAPABILITY_CACHE_BYTES
            entry = (p, {} if fits else None)
            self._caps = [*self._caps[-1:], entry]
        return entry[1]

    def _row_capability(self, p: ParamDraws, j: int) -> np.ndarray:
        """Row ``j``'s (S, B): Σ_a w_ab P(capable)_a per timing class b."""
        r, s = self.rows.iloc[j], self._row_cache[j]
        cap = capable_probability(p, self.d, int(r["m"]), int(r["k"]), s.items, s.xs,
                                  timed=r["clock"] in TIMED_CLOCKS)  # (S, A)
        return np.asarray((s.weight.T @ cap.T).T)  # sparse (B, A) @ (A, S): O(S × nonzeros)

    def _capability_by_class(self, p: ParamDraws, j: int) -> np.ndarray:
        """:meth:`_row_capability`: the same for every λ and swap, so kept per set of draws
        (counterfactual grids call :meth:`compute` dozens of times) when all rows fit in
        :data:`CAPABILITY_CACHE_BYTES`; otherwise recomputed."""
        kept = self._kept_capability(p)
        if kept is not None and j in kept:
            return kept[j]
        by_class = self._row_capability(p, j)
        if kept is not None:
            kept[j] = by_class
        return by_class

    def _capability_all(self, p: ParamDraws) -> np.ndarray:
        """(S, classes of all rows side by side): every row's :meth:`_row_capability`, kept as one array
        (:meth:`_compute_batched` runs only where it fits the budget)."""
        kept = self._kept_capability(p)
        if kept is not None and "all" in kept:
            return kept["all"]
        out = np.concatenate([self._row_capability(p, j) for j in range(len(self.rows))], axis=1)
        if kept is not None:
            kept["all"] = out
        return out

    def _wrong_shifts(self, p: ParamDraws, m: int, k: int, lat_m: int, u: int) -> list:
        """The log-latency shifts of a decision's content classes in cell (m, k, u): [0] (one latency for
        all), or with latency by correctness [0, δ] (correct, wrong; δ that of ``lat_m``, whose latency
        the decisions have, per draw) where the cell has wrong decisions."""
        if p.wrong_lat is None or not self._q_wrong.get((int(m), int(k), int(u)), 0.0):
            return [0.0]
        return [0.0, p.wrong_lat[:, lat_m, k]]

    def _mix_wrong(self, m: int, k: int, u: int, values: list):
        """A decision-level probability over the cell's decisions: the correct decisions' (``values[0]``)
        alone, or mixed with the wrong ones' (``values[1]``) at the cell's wrong share."""
        if len(values) == 1:
            return values[0]
        q = self._q_wrong[(int(m), int(k), int(u))]
        return (1 - q) * values[0] + q * values[1]

    def _timing_split(self, p: ParamDraws, r, u: int, item: int, bounds, lat_m: int, log_lam: float,
                      shift=0.0, sd_scale=1.0):
        """(P(early), P(late), P(silent)), (S, W) each, for row ``r``'s windows (``bounds`` = their
        (open, close) arrays) of unit ``u`` and ``item`` (its time intensity, the same under a latency swap):
        early (1 − π)·P(L < open), late (1 − π)·P(close < L ≤ g), silent π + (1 − π)·P(L > g).
        Silent is what the logs show, no action: the no-answer mode (π) or a latency beyond the
        cell's censor point g (:func:`censor_points`; the harness's, so it stays put under λ or a
        latency swap). ``shift``: (S,) added to log-latency (wrong decisions, latency by correctness; an episode's
        slowness); ``sd_scale``: (S,) or 1, multiplies σ (the within-episode SD under episode slowness)."""
        w_open, close = bounds
        mu = p.mu[:, u, lat_m, r.k] + p.item_shift(item) + log_lam + shift
        sigma = p.sigma[:, u, lat_m, r.k] * sd_scale
        dist = p.dist_at(lat_m)
        pe, pl = _miss_probs(dist, mu, sigma, w_open, close)
        pi = p.silence[:, lat_m][:, None] if p.silence is not None else np.zeros((p.n, 1))
        g = self._censor.get((int(r.m), int(r.k), int(u)))
        beyond = np.zeros_like(pl) if g is None else _beyond(dist, mu, sigma, np.maximum(np.log(close), g))
        beyond = np.minimum(beyond, pl)
        return (1 - pi) * pe, (1 - pi) * (pl - beyond), pi + (1 - pi) * beyond

    def _keep_over_slowness(self, p: ParamDraws, r, u: int, item: int, bounds, lat_m: int, log_lam: float,
                            pattern: np.ndarray) -> np.ndarray:
        """(S, B) P(no fatal miss) of timing classes ``pattern`` (B × W decisions per window) when an
        episode's decisions share a slowness s ~ N(0, r_k σ²) and scatter around it with SD σ√(1 − r_k):
        the product over the episode's windows given s, averaged over s by Gauss–Hermite quadrature
        (:data:`SLOWNESS_NODES` nodes). The decision-level shares need no quadrature: each decision's
        latency is N(μ, σ²) whatever s."""
        icc = np.clip(p.latency_icc[:, r.k], 0.0, 1.0)
        sigma = p.sigma[:, u, lat_m, r.k]
        between, within = np.sqrt(icc) * sigma, np.sqrt(1.0 - icc)
        out = 0.0
        for z, w in zip(*SLOWNESS_GH):
            pe, pl, silent = self._timing_split(p, r, u, item, bounds, lat_m, log_lam, between * z, within)
            out = out + w * _keep(p.fatality[:, r.k], pe + pl + silent, pattern)
        return out

    def compute(self, p: ParamDraws, lam: float = 1.0, swap: dict[int, int] | None = None) -> dict[str, np.ndarray]:
        """Draws (rows × S) of every quantity; ``swap`` maps a row's model index to the model whose
        latency (μ, σ, silence) it borrows (``as:<model>`` counterfactual). All rows at once
        (``_compute_batched``) where the draws have no latency of wrong decisions to mix in and the
        capability is kept; row by row (``_compute_by_row``) otherwise."""
        if self._batchable(p):
            return self._compute_batched(p, lam, swap)
        return self._compute_by_row(p, lam, swap)

    def _batchable(self, p: ParamDraws) -> bool:
        if p.wrong_lat is not None and any(self._q_wrong.values()):
            return False
        return p.n * sum(len(s.class_weight) for s in self._row_cache) * 8 <= CAPABILITY_CACHE_BYTES

    def _layout(self) -> dict:
        """Every timed row's windows side by side as columns, for :meth:`_compute_batched`: per column its
        row, model, task type, unit, item, log open and close, censor point (NaN: none) and expected
        decisions per row episode; ``pattern`` (classes × columns, sparse): decisions of each timing class
        (classes of all rows side by side) in each column; ``class_row`` and ``column_row`` (sparse): which
        row a class or a column belongs to."""
        if self._layout_cache is not None:
            return self._layout_cache
        from scipy.sparse import coo_matrix

        cols = {n: [] for n in ("row", "m", "k", "u", "item", "open", "close", "g", "dec")}
        pat_r, pat_c, pat_v = [], [], []
        class_offset = np.cumsum([0] + [len(s.class_weight) for s in self._row_cache])
        for j, (r, s) in enumerate(zip(self.rows.itertuples(), self._row_cache)):
            if s.per_unit is None:
                continue
            for u, item, (w_open, w_close), pattern, sel in s.per_unit:
                c0 = len(cols["row"])
                g = self._censor.get((int(r.m), int(r.k), int(u)))
                for n, v in (("row", j), ("m", r.m), ("k", r.k), ("u", u), ("item", item),
                             ("g", np.nan if g is None else g)):
                    cols[n] += [v] * len(w_open)
                with np.errstate(divide="ignore"):
                    cols["open"] += list(np.log(w_open))
                    cols["close"] += list(np.log(w_close))
                cols["dec"] += list(pattern.T @ s.class_weight[sel])
                b, w = np.nonzero(pattern)
                pat_r += list(class_offset[j] + sel[b])
                pat_c += list(c0 + w)
                pat_v += list(pattern[b, w])
        C, B, R = len(cols["row"]), int(class_offset[-1]), len(self.rows)
        out = {n: np.asarray(v, dtype=float if n in ("open", "close", "g", "dec") else np.int64)
               for n, v in cols.items()}
        out["pattern"] = coo_matrix((pat_v, (pat_r, pat_c)), shape=(B, C)).tocsr()
        class_rows = np.repeat(np.arange(R), np.diff(class_offset))
        out["class_row"] = coo_matrix((np.ones(B), (np.arange(B), class_rows)), shape=(B, R)).tocsc()
        out["column_row"] = coo_matrix((np.ones(C), (np.arange(C), out["row"])), shape=(C, R)).tocsc()
        out["timed_row"] = np.array([s.per_unit is not None for s in self._row_cache])
        out["n_dec"] = np.bincount(out["row"], weights=out["dec"], minlength=R)
        self._layout_cache = out
        return out

    def _compute_batched(self, p: ParamDraws, lam: float, swap: dict[int, int] | None) -> dict[str, np.ndarray]:
        """:meth:`_compute_by_row` with every row's windows as columns of one (S, windows) array: the same
        arithmetic per element, in a few array operations instead of a dozen per row (a report computes
        every quantity at dozens of λ and, per model, once with its latency lent to the others)."""
        L, S = self._layout(), p.n
        cap = self._capability_all(p)
        m, k, u = L["m"], L["k"], L["u"]
        lat = np.array([swap.get(int(x), int(x)) for x in m], dtype=np.int64) if swap else m
        # in _timing_split's order: μ + the item's shift (item -1: the last column, 0) + log λ
        mu = p.mu[:, u, lat, k] + p.item_shift(L["item"]) + np.log(lam)
        sigma = p.sigma[:, u, lat, k]
        flat = np.array([(a, b, c) in self.uninformative for a, b, c in zip(lat, k, u)], dtype=bool)
        logged = None
        if flat.any():  # constant latencies: every window misses with the logged rate, counted as late
            clocks = self.rows["clock"].to_numpy()
            logged = np.stack([self.logged_miss_draws(int(lat[c]), int(k[c]), clocks[L["row"][c]], int(u[c]), S)
                               for c in np.flatnonzero(flat)], axis=1)
        early, late, silent = self._window_split(p, L, lat, mu, sigma, flat, logged)
        if p.latency_icc is None:
            keep = self._keep_columns(p, L, early + late + silent)  # (S, classes); 1 for a paused row's classes
        else:  # episode slowness: as _keep_over_slowness, over every column at once
            icc = np.clip(p.latency_icc[:, k], 0.0, 1.0)
            between, within = np.sqrt(icc) * sigma, np.sqrt(1.0 - icc) * sigma
            keep = 0.0
            for z, w in zip(*SLOWNESS_GH):
                keep = keep + w * self._keep_columns(p, L, sum(self._window_split(p, L, lat, mu + between * z, within,
                                                                                  flat, logged)))
        p_cap = np.asarray((L["class_row"].T @ cap.T).T)  # (S, rows)
        p_s = np.asarray((L["class_row"].T @ (cap * keep).T).T)
        by_row = lambda x: np.asarray((L["column_row"].T @ (x * L["dec"]).T).T)  # noqa: E731
        timed, n_dec = L["timed_row"], L["n_dec"]
        out = {}
        with np.errstate(invalid="ignore", divide="ignore"):
            shares = {q_: np.where(n_dec > 0, by_row(x) / np.where(n_dec > 0, n_dec, 1.0), np.nan)
                      for q_, x in (("p_early", early), ("p_late", late), ("p_silent", silent))}
            shares["p_on_time"] = 1.0 - shares["p_early"] - shares["p_late"] - shares["p_silent"]
            p_t = np.where(p_cap > 0, p_s / p_cap, 1.0)
            share = np.where(p_s < 1.0, (p_cap - p_s) / np.maximum(1.0 - p_s, 1e-300), 0.0)
        for q_ in shares:
            shares[q_][:, ~timed] = np.nan
        p_t[:, ~timed], share[:, ~timed] = 1.0, 0.0
        out.update(p_success=p_s, p_capable=p_cap, p_timely=p_t, share_timing=share, **shares)
        return {q_: np.ascontiguousarray(out[q_].T) for q_ in QUANTITIES}

    @staticmethod
    def _window_split(p: ParamDraws, L: dict, lat, mu, sigma, flat, logged) -> tuple:
        """(early, late, silent), (S, columns) each, of :meth:`_layout`'s columns at log-latency mean ``mu`` and
        SD ``sigma`` (as ``_timing_split``); ``flat`` columns (constant latencies) miss at their ``logged``
        rate, counted as late."""
        fam = p.family
        shape = at_model(fam, p.shape, lat)
        pe = fam.cdf(L["open"][None, :], mu, sigma, **shape)
        pl = fam.sf(L["close"][None, :], mu, sigma, **shape)
        pi = p.silence[:, lat] if p.silence is not None else np.zeros((p.n, 1))
        has_g = ~np.isnan(L["g"])
        beyond = np.zeros_like(pl)
        if has_g.any():
            point = np.maximum(L["close"], np.where(has_g, L["g"], 0.0))[None, has_g]
            beyond[:, has_g] = fam.sf(point, mu[:, has_g], sigma[:, has_g],
                                      **{n: (v[:, has_g] if v.shape[1] > 1 else v) for n, v in shape.items()})
        beyond = np.minimum(beyond, pl)
        early, late, silent = (1 - pi) * pe, (1 - pi) * (pl - beyond), pi + (1 - pi) * beyond
        if logged is not None:
            early[:, flat], silent[:, flat], late[:, flat] = 0.0, 0.0, logged
        return early, late, silent

    @staticmethod
    def _keep_columns(p: ParamDraws, L: dict, q) -> np.ndarray:
        """(S, classes) P(no fatal miss) of every timing class, from each column's P(miss) ``q`` (as _keep)."""
        q = np.clip(q, 0.0, 1.0)
        log_keep = np.log1p(-np.minimum(p.fatality[:, L["k"]] * q, 1 - 1e-16))
        return np.exp(np.asarray((L["pattern"] @ log_keep.T).T))

    def _compute_by_row(self, p: ParamDraws, lam: float = 1.0,
                        swap: dict[int, int] | None = None) -> dict[str, np.ndarray]:
        """:meth:`compute`, one row at a time."""
        n, S = len(self.rows), p.n
        out = {q: np.empty((n, S)) for q in QUANTITIES}
        log_lam = np.log(lam)
        for j, (r, s) in enumerate(zip(self.rows.itertuples(), self._row_cache)):
            cap_b = self._capability_by_class(p, j)  # (S, B)
            p_cap = cap_b.sum(axis=1)
            nan = np.full(S, np.nan)
            if s.per_unit is None:
                p_s, on, early, late, silent = p_cap, nan, nan, nan, nan
            else:
                lat_m = swap.get(r.m, r.m) if swap else r.m
                keep = np.ones((S, len(s.class_weight)))  # P(no fatal miss) per timing class
                early, late, silent = np.zeros(S), np.zeros(S), np.zeros(S)
                n_dec = 0.0
                for u, item, (w_open, w_close), pattern, sel in s.per_unit:
                    if (lat_m, r.k, u) in self.uninformative:
                        # constant latencies (of this model, or of the one whose latency it is given):
                        # no distribution to scale, and its μ, σ are the prior's; every window misses
                        # with that model's logged rate (counted as late), whatever λ
                        pe = np.zeros((S, len(w_open)))
                        pl = np.repeat(self.logged_miss_draws(lat_m, r.k, r.clock, u, S)[:, None], len(w_open),
                                       axis=1)
                        silent_w = np.zeros_like(pe)
                    else:
                        pe, pl, silent_w = self._timing_split(p, r, u, item, (w_open, w_close), lat_m, log_lam)
                    # P(miss) of a capable episode's decisions: the correct ones' latency (the same for all
                    # without latency by correctness); the decision-level shares below mix in the wrong ones
                    if p.latency_icc is not None and (lat_m, r.k, u) not in self.uninformative:
                        keep[:, sel] = self._keep_over_slowness(p, r, u, item, (w_open, w_close), lat_m, log_lam,
                                                                pattern)
                    else:
                        keep[:, sel] = _keep(p.fatality[:, r.k], pe + pl + silent_w, pattern)
                    dec = pattern.T @ s.class_weight[sel]  # expected decisions per window (per row episode)
                    shifts = self._wrong_shifts(p, r.m, r.k, lat_m, u)
                    if len(shifts) > 1 and (lat_m, r.k, u) not in self.uninformative:
                        wrong = self._timing_split(p, r, u, item, (w_open, w_close), lat_m, log_lam, shifts[1])
                        pe, pl, silent_w = (self._mix_wrong(r.m, r.k, u, [a, b]) for a, b in
                                            zip((pe, pl, silent_w), wrong))
                    early += pe @ dec
                    late += pl @ dec
                    silent += silent_w @ dec
                    n_dec += dec.sum()
                p_s = (cap_b * keep).sum(axis=1)
                if n_dec > 0:
                    early, late, silent = early / n_dec, late / n_dec, silent / n_dec
                    on = 1.0 - early - late - silent
                else:
                    on = early = late = silent = nan
            with np.errstate(invalid="ignore", divide="ignore"):
                p_t = np.where(p_cap > 0, p_s / p_cap, 1.0)
                share = np.where(p_s < 1.0, (p_cap - p_s) / np.maximum(1.0 - p_s, 1e-300), 0.0)
            if s.per_unit is None:
                p_t, share = np.ones(S), np.zeros(S)
            for q, v in zip(QUANTITIES, (p_s, p_cap, p_t, share, on, early, late, silent)):
                out[q][j] = v
        return out


#: Gauss–Hermite nodes over an episode's slowness (``Deriver._keep_over_slowness``)
SLOWNESS_NODES = 12
#: their nodes and weights (:func:`.families.normal_gauss_hermite`)
SLOWNESS_GH = normal_gauss_hermite(SLOWNESS_NODES)


def _keep(fatality: np.ndarray, q: np.ndarray, pattern: np.ndarray) -> np.ndarray:
    """(S, B) P(no fatal miss) of timing classes ``pattern`` (B × W) given each window's P(miss) ``q``
    (S, W) and the fatality (S,)."""
    q = np.clip(q, 0.0, 1.0)
    # f q = 1 (an always-fatal type, a sure miss) would give 0 · log 0 for windows an episode group does
    # not have; e^-37 per miss is zero for every purpose
    log_keep = np.log1p(-np.minimum(fatality[:, None] * q, 1 - 1e-16))  # (S, W)
    return np.exp(log_keep @ pattern.T)


def summarise(rows: pd.DataFrame, draws: dict[str, np.ndarray], quantities, ci_prob: float) -> pd.DataFrame:
    """Posterior mean and equal-tailed interval of each quantity, one row per ``rows`` row (NaN
    where a quantity is undefined for a row, e.g. decision timing under ``paused``)."""
    import warnings

    a = (1.0 - ci_prob) / 2.0
    out = rows.copy()
    for q in quantities:
        x = draws[q]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out[q] = np.nanmean(x, axis=1)
            lo, hi = _row_quantiles(x, [a, 1 - a])
        out[f"{q}_lo"], out[f"{q}_hi"] = lo, hi
    return out


def _row_quantiles(x: np.ndarray, probs) -> np.ndarray:
    """``np.nanquantile(x, probs, axis=1)``, with the rows without NaN (nearly all) in one vectorised
    ``np.quantile``: nanquantile walks the rows one by one in Python (3 s of a report's 13 s of derived
    quantities at 240 rows). The same numbers: both interpolate linearly over the non-NaN values."""
    out = np.full((len(probs), x.shape[0]), np.nan)
    has_nan = np.isnan(x).any(axis=1)
    if (~has_nan).any():
        out[:, ~has_nan] = np.quantile(x[~has_nan], probs, axis=1)
    some = has_nan & ~np.isnan(x).all(axis=1)  # all-NaN rows (undefined quantities) stay NaN
    if some.any():
        out[:, some] = np.nanquantile(x[some], probs, axis=1)
    return out
