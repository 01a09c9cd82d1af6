"""Posterior and prior predictive checks, as tidy frames with predictive p-values.

Every row: the observed statistic, the mean and equal-tailed interval of its replicates, ``covered``,
``p_value`` = P(T_rep > T_obs) + ½ P(T_rep = T_obs) and ``extreme`` (p < 0.025 or > 0.975). Checks:

* ``success_rate`` per decomposition row (replicates ``Binomial(n, p_success)/n``);
* ``success_given_misses_0/1/2+`` per task type × timed clock: success rate of the episodes that
  missed 0, 1, 2+ windows, replicated as ``Bernoulli(P(capable_e)·(1 − f_k)^{M_e})`` given each
  episode's observed misses — what identifies the fatality (a miss that is not always fatal, a
  success after a miss);
* ``success_sd_across_items`` per decomposition row: the episode-weighted SD across items of the
  item success rates, from the same replicates — what identifies the item effects;
* ``share_early``, ``share_late_or_silent`` and ``share_silent`` per timed row: shares of windowed
  decisions, against the model's p_early, p_late + p_silent and p_silent (p_silent is the share
  logged with no action: the silence mode or a latency past the censor point, one definition with
  the simulator's truth; ``share_silent`` only where the row's latencies are informative, since a
  constant-latency cell reports its logged misses as late); ``share_near_close`` per timed row with
  informative latencies: the share of windowed decisions acting in the last 10 % of the time to the
  close (:data:`NEAR_CLOSE`), against (1 − π)·P(0.9·close < L ≤ close);
* ``latency_success_corr_across_items`` per model × task type × clock × unit: across items, the
  correlation of an item's mean log-latency with its success rate among the episodes that missed no
  window, against its permutation distribution (``_item_latency_rows``; labelled or not);
* ``latency_success_within_items`` per model × task type × clock × unit: among episodes that missed no
  window, the covariance of an episode's mean log-latency (less its item's mean) with its success less
  its posterior P(capable), replicated given the latencies from Bernoulli(P(capable)) (labelled or not:
  a speed–accuracy trade-off unlabelled logs can show; ``_latency_success_within_items_rows``);
* ``latency_correct_minus_wrong`` per latency cell of labelled data: mean log-latency of correct
  minus wrong acted decisions, against its permutation distribution under the model's independence
  of latency and correctness (``_latency_by_correctness_rows``);
* ``log_latency_p10/p50/p90/p99`` per (model, task_type, time_unit) cell (clock ``all``): observed
  quantiles of acted decisions vs replicated samples of the same size drawn from the fitted family
  (normal or Student-t, ν per draw), with the silence mode: of the cell's n decisions a
  Binomial(n, π_m) are silent whatever their latency, and the largest latencies stand in for the
  rest of the observed silences (censored), as the log would have; the two order statistics each
  quantile needs are drawn exactly (:func:`replicate_quantiles`), so the check costs the same at any
  number of decisions. Cells whose latencies are
  uninformative (constant or capped at the close; left out of the likelihood) are not checked.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..io.keys import code_dtype, key_codes
from ..metrics.latency import floored_log_latency
from ..schema import TIMED_CLOCKS
from .derived import ParamDraws, capable_probability, param_draws
from .families import at_model

#: each check's family and what a flagged family points at (bambi-style registry: one table, no
#: branching); a family is flagged when more of its rows are extreme than chance gives
#: (:func:`family_flags`)
CHECK_FAMILIES = {
    "success_rate": ("success_rate", "success per cell is not reproduced: capability or timing that the "
                     "model's structure cannot represent (e.g. an agent less capable under the wall clock than "
                     "paused: try structure=\"clock_effects\" (rtanalysis report --clock-effects); item difficulty that "
                     "also slows it: structure=\"item_latency\"; or let PSIS-LOO choose: rtanalysis report --structure auto)"),
    "success_given_misses": ("success_given_misses", "how missed windows end episodes is not reproduced "
                             "(fatality per task type)"),
    "success_sd_across_items": ("success_across_items", "success varies across items more (or less) than the "
                                "item effects allow: items that differ in something besides difficulty (their "
                                "latency, their windows), or an item SD prior that is too tight"),
    "share_early": ("timing_shares", "the logged early / late / silent decisions are not reproduced by the "
                    "latency model (shape, give-up time, or latencies logged as the tick)"),
    "share_late_or_silent": ("timing_shares", None),
    "share_silent": ("timing_shares", None),
    "share_near_close": ("latency_near_close", "the share of decisions acting just before the window close "
                         "is not reproduced (an agent that paces itself to the deadline, a harness that cuts "
                         "thinking off at it, or a latency shape wrong where it matters most)"),
    "log_latency_p10": ("latency_body", "the latency distribution's body does not fit (try "
                        "latency_family='auto', which compares 't' and 'mixture', fast and reasoning modes, "
                        "by LOO; rtanalysis report --latency-family auto)"),
    "log_latency_p50": ("latency_body", None),
    "log_latency_p90": ("latency_body", None),
    "log_latency_p99": ("latency_tail", "the latency tail does not fit (a heavier tail: "
                        "latency_family='t' or 'auto'; a slow mode: 'mixture'; a harness give-up time)"),
    "latency_success_corr_across_items": ("latency_by_item", "slower items are solved less (or more) often: "
                                          "latency and difficulty are entangled across items (hard items slow the "
                                          "agent), which p_timely and the latency counterfactuals assume away; "
                                          "try structure=\"item_latency\" (rtanalysis report --item-latency), item time "
                                          "intensities paired with the items' difficulty (docs/model.md), or "
                                          "--structure auto to let PSIS-LOO choose"),
    "latency_success_within_items": ("latency_by_outcome", "on the same item, episodes that took longer succeed "
                                     "more (or less) often, without any missed window: latency and correctness are "
                                     "entangled within items (thinking longer helps), which p_timely and the latency "
                                     "counterfactuals assume away (docs/model.md, Assumptions; a positive covariance "
                                     "makes p_timely optimistic). With decision labels logged (correct_at_obs): "
                                     "structure=\"latency_by_correctness\" (rtanalysis report --latency-by-correctness); "
                                     "without them no structure of the model can separate it"),
    "latency_correct_minus_wrong": ("latency_by_correctness", "correct and wrong decisions differ in latency: "
                                    "latency and correctness are entangled, which p_timely and the latency "
                                    "counterfactuals assume away (docs/model.md, Assumptions): thinking longer "
                                    "helps: try structure=\"latency_by_correctness\" (rtanalysis report "
                                    "--latency-by-correctness), wrong decisions with their own latency; hard items "
                                    "slow the agent: structure=\"item_latency\"; or --structure auto to let PSIS-LOO choose"),
}
#: "near the close": the last 10 % of the time to the window close
NEAR_CLOSE = 0.1
#: nominal share of extreme rows (p < 0.025 or > 0.975) in a family when the model is right
ROW_RATE = 0.05
FAMILY_ALPHA = 0.05

QUANTILES = {"log_latency_p10": 0.1, "log_latency_p50": 0.5, "log_latency_p90": 0.9, "log_latency_p99": 0.99}
MAX_REPLICATES = 400
CHECK_COLUMNS = ["model", "task_type", "clock", "time_unit", "check", "observed", "predicted", "predicted_lo",
                 "predicted_hi"]


def is_extreme(p_value):
    """A predictive p-value in either 2.5 % tail."""
    return (p_value < 0.025) | (p_value > 0.975)


def check_family(check: str) -> str:
    """The family of a check name (``success_given_misses_2+`` → ``success_given_misses``)."""
    base = "success_given_misses" if check.startswith("success_given_misses") else check
    return CHECK_FAMILIES.get(base, (check, None))[0]


def family_advice(family: str) -> str:
    """What a flagged family points at (:data:`CHECK_FAMILIES`)."""
    return next((text for fam, text in CHECK_FAMILIES.values() if fam == family and text), "")


def family_flags(checks: pd.DataFrame, row_rate: float = ROW_RATE, alpha: float = FAMILY_ALPHA) -> pd.DataFrame:
    """Per kind (posterior / prior) and check family: rows, extreme rows, the number chance gives
    (``expected`` = rows × ``row_rate``), ``p_value`` = P(Binomial(rows, row_rate) ≥ extreme) and
    ``flagged`` (p ≤ ``alpha``). A family has a row per cell (dozens at leaderboard scale), so "any
    row extreme" would flag a well-specified model in most fits by multiplicity alone; counting
    extremes against chance keeps the family's false-flag rate near ``alpha``
    (``benchmarks/ppc_detection.py``). Rows within a family share one posterior, so the binomial
    is a yardstick, not an exact null."""
    from scipy.stats import binom

    cols = ["kind", "family", "rows", "extreme_rows", "expected", "p_value", "flagged", "advice"]
    if checks is None or not len(checks) or "check" not in checks:
        return pd.DataFrame(columns=cols)
    if "extreme" not in checks:
        if "p_value" not in checks:  # a frame without p-values (written before they existed) flags nothing
            return pd.DataFrame(columns=cols)
        checks = checks.assign(extreme=is_extreme(checks["p_value"]))
    f = checks.assign(family=checks["check"].astype(str).map(check_family))
    kind = f["kind"] if "kind" in f else pd.Series("posterior", index=f.index)
    out = (f.assign(kind=kind).groupby(["kind", "family"], sort=False)
           .agg(rows=("extreme", "size"), extreme_rows=("extreme", "sum")).reset_index())
    out["expected"] = (out["rows"] * row_rate).round(6)
    out["p_value"] = binom.sf(out["extreme_rows"] - 1, out["rows"], row_rate)
    out["flagged"] = (out["extreme_rows"] > 0) & (out["p_value"] <= alpha)
    out["advice"] = [family_advice(x) if flag else "" for x, flag in zip(out["family"], out["flagged"])]
    return out[cols]


def prior_params(d, latency_family: str, draws: int, seed: int, item_latency: bool = False,
                 episode_latency: bool = False) -> ParamDraws:
    """Draws of the model's parameters from its prior."""
    import warnings

    import pymc as pm

    from .build import build_model

    model = build_model(d, latency_family, item_latency=item_latency, episode_latency=episode_latency)
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


#: fewest items (with fewest episodes) of a row for its ``success_sd_across_items`` check
MIN_ITEMS, MIN_ITEM_EPISODES = 3, 10


def _weighted_sd(y, n) -> np.ndarray:
    """Per draw (rows), the episode-weighted SD across items (columns) of the item success rates:
    sqrt(Σ n_i (r_i − r̄)² / Σ n_i)."""
    rate = y / n
    mean = (y.sum(axis=-1) / n.sum())[..., None]
    return np.sqrt((n * (rate - mean) ** 2).sum(axis=-1) / n.sum())


def _success_given_misses(res, p: ParamDraws, rng, a: float) -> list:
    """Episode success replicated given each episode's observed misses, as
    ``Bernoulli(P(capable_e)·(1 − f_k)^{M_e})``; two checks from the same replicates:

    * ``success_given_misses_0/1/2+`` per task type × timed clock: success rate of the episodes that
      missed 0, 1, 2+ windows (what identifies the fatality);
    * ``success_sd_across_items`` per decomposition row (model × task type × clock): the
      episode-weighted SD across items of the item success rates (what identifies the item effects:
      items far more alike or unlike than the item SD allows; a success rate that depends on the item
      through something the model does not see, such as its latency).

    Episodes alike in what their success probability depends on (model, type, item, length, misses,
    clock) are one group, replicated as Binomial(n, p): the same distribution as one Bernoulli per
    episode. Drawn one (model, type) block at a time, so memory grows with the largest block, not
    with the episodes or all the groups."""
    d = res.data
    e = d.episodes
    out = []
    # an episode that its failure ended has no success to replicate given its log (the log stops because it
    # failed); the success-rate check of each row (over natural lengths) stands for it there
    if not len(e) or getattr(d, "survival", False):
        return out
    keys = ["m", "k", "i", "x", "M", "clock"]
    g = (e.assign(_cls=np.minimum(e["M"].to_numpy(), 2))
         .groupby(keys, sort=True, observed=True).agg(n=("y", "size"), y=("y", "sum"), cls=("_cls", "first"),
                                                      timed=("timed", "first"))
         .reset_index())
    gt = g[g["timed"].to_numpy(bool)]
    classes = gt.groupby(["k", "clock", "cls"], observed=True).agg(n=("n", "sum"), y=("y", "sum"))
    classes = classes[classes["n"] >= 3]
    slot = pd.Series(np.arange(len(classes)), index=classes.index)
    y_rep = np.zeros((p.n, len(classes)))
    for (m, k), gg in g.groupby(["m", "k"], sort=True):
        p_cap = capable_probability(p, d, m, k, gg["i"].to_numpy(), gg["x"].to_numpy(), gg["timed"].to_numpy(bool))
        p_s = p_cap * (1 - p.fatality[:, [k]]) ** gg["M"].to_numpy()[None, :]
        draws = rng.binomial(gg["n"].to_numpy()[None, :], np.clip(p_s, 0.0, 1.0))
        timed = gg["timed"].to_numpy(bool)
        at = slot.reindex(pd.MultiIndex.from_frame(gg[["k", "clock", "cls"]])).to_numpy()
        at = np.where(timed, at, np.nan)
        for c in np.unique(at[~np.isnan(at)]).astype(np.int64):
            y_rep[:, c] += draws[:, at == c].sum(axis=1)
        out += _item_spread_rows(d, m, k, gg, draws, a)
    for c, ((k, clock, cls), r) in enumerate(classes.iterrows()):
        out.append(_row(("all", d.task_types[k], clock, ""), f"success_given_misses_{('0', '1', '2+')[cls]}",
                        r["y"] / r["n"], y_rep[:, c] / r["n"], a))
    return out


def _item_spread_rows(d, m: int, k: int, gg: pd.DataFrame, draws: np.ndarray, a: float) -> list:
    """``success_sd_across_items`` of model m, type k per decomposition row (its timed clocks; the
    paused episodes form the ``paused`` row only where the cell has no timed episode, as in
    :func:`.derived.rows_of`), from one block's replicated group successes ``draws`` (draws × groups)."""
    timed = gg["timed"].to_numpy(bool)
    rows = ([(c, gg["clock"].to_numpy() == c) for c in sorted(set(gg.loc[timed, "clock"]))] if timed.any()
            else [("paused", np.ones(len(gg), dtype=bool))])
    out = []
    for clock, sel in rows:
        items, item_of = np.unique(gg["i"].to_numpy()[sel], return_inverse=True)
        n = np.bincount(item_of, weights=gg["n"].to_numpy()[sel])
        keep = (items >= 0) & (n >= 1)
        if keep.sum() < MIN_ITEMS or n[keep].sum() < MIN_ITEMS * MIN_ITEM_EPISODES:
            continue
        y_obs = np.bincount(item_of, weights=gg["y"].to_numpy()[sel])[keep]
        onehot = np.zeros((sel.sum(), len(items)))
        onehot[np.arange(sel.sum()), item_of] = 1.0
        y_rep = (draws[:, sel] @ onehot)[:, keep]
        out.append(_row((d.models[m], d.task_types[k], clock, ""), "success_sd_across_items",
                        float(_weighted_sd(y_obs, n[keep])), _weighted_sd(y_rep, n[keep]), a))
    return out


def _near_close(lat: np.ndarray, close: np.ndarray, fraction: float, chunk: int = 1 << 20) -> np.ndarray:
    """close·(1 − fraction) < latency ≤ close, per decision (False without either), a million
    decisions at a time (the scaled closes of every decision at once are a float array as long as the steps)."""
    out = np.zeros(len(lat), dtype=bool)
    with np.errstate(invalid="ignore"):
        for a in range(0, len(lat), chunk):
            x, c = lat[a:a + chunk], close[a:a + chunk]
            out[a:a + chunk] = (x > c * (1 - fraction)) & (x <= c)
    return out


def cell_shares(st, keys, mask: np.ndarray, flags: dict) -> dict:
    """``{key tuple: {"n": decisions, flag: share, ...}}`` over the decisions in ``mask``, per
    combination of the ``keys`` columns that has any (what a group-by's ``size`` and ``mean`` of
    boolean columns give), counted on the kept decisions' integer codes: no copy of the steps'
    columns, no per-decision group index."""
    columns = [key_codes(st[col]) for col in keys]
    mask = mask.copy()
    for codes, _ in columns:
        mask &= codes >= 0  # a missing key is no group (a group-by drops it too)
    idx = np.flatnonzero(mask).astype(code_dtype(len(mask)), copy=False)
    widths = [max(len(u), 1) for _, u in columns]
    c = np.zeros(len(idx), dtype=code_dtype(int(np.prod(widths))))
    for (codes, _), w in zip(columns, widths):
        c *= w
        c += codes[idx].astype(c.dtype)
    size = int(np.prod(widths))
    n = np.bincount(c, minlength=size)
    counts = {name: np.bincount(c[f[idx]], minlength=size) for name, f in flags.items()}
    out = {}
    for code in np.flatnonzero(n):
        key, rest = [], int(code)
        for (_, uniques), w in zip(reversed(columns), reversed(widths)):
            rest, j = divmod(rest, w)
            key.append(str(uniques[j]))
        out[tuple(reversed(key))] = {"n": int(n[code]), **{name: counts[name][code] / n[code] for name in flags}}
    return out


def _timing_share_rows(res, draws: dict, sub: ParamDraws, rng, a: float) -> list:
    """Observed shares of early and late-or-silent windowed decisions per timed row vs the model's."""
    st = res.steps
    if st is None or not len(st) or "window_close" not in st:
        return []
    keys = ("model", "task_type", "clock")
    windowed = st["window_close"].notna().to_numpy() & (st["clock"] != "paused").to_numpy(bool)
    lat, close = st["latency"].to_numpy(float), st["window_close"].to_numpy(float)
    silent = st["no_action"].to_numpy(bool)
    flags = {"early": st["too_early"].fillna(False).to_numpy(bool),
             "late_or_silent": st["too_late"].fillna(False).to_numpy(bool) | silent, "silent": silent,
             "near_close": _near_close(lat, close, NEAR_CLOSE)}
    obs = cell_shares(st, keys, windowed, flags)
    near = res._deriver.near_close_share(sub, NEAR_CLOSE)
    out = []
    for j, r in enumerate(res._deriver.rows.itertuples()):
        key = (r.model, r.task_type, r.clock)
        if r.clock == "paused" or key not in obs:
            continue
        n = int(obs[key]["n"])
        pred = {"early": draws["p_early"][j], "late_or_silent": draws["p_late"][j] + draws["p_silent"][j]}
        if r.latency_informative:
            pred["silent"] = draws["p_silent"][j]
            pred["near_close"] = near[j]
        for name, pr in pred.items():
            if not np.isfinite(pr).all():
                continue
            rep = rng.binomial(n, np.clip(pr, 0, 1)) / n
            out.append(_row((*key, ""), f"share_{name}", obs[key][name], rep, a))
    return out


def log_latency(st) -> np.ndarray:
    """Log-latency of every decision (NaN without an action), zeros floored as the fit floors them
    (metrics.floored_log_latency), not dropped; units as integer codes (np.unique over millions of
    unit strings costs seconds). Computed once per check and shared by the latency checks."""
    unit_code, _ = key_codes(st["time_unit"])  # a categorical's own codes: no decision-length int64
    return floored_log_latency(st["latency"].to_numpy(float), unit_code)


#: the steps columns of a latency cell
LATENCY_CELL_KEYS = ("model", "task_type", "time_unit")


def latency_cell_split(st, mask: np.ndarray, *arrays: np.ndarray) -> dict:
    """``{(model, task_type, time_unit): (array[mask & cell] for each of arrays)}``, cells in sorted
    key order (a sorted group-by's). The decisions kept are sorted once by their cell's integer code
    (a group-by of the steps frame takes every row of three text columns: seconds at 10^6 episodes);
    categorical keys are used through their own codes, and the per-decision temporaries are the
    kept decisions' positions and codes in the smallest integer types that hold them."""
    columns, levels = [], []
    for col in LATENCY_CELL_KEYS:
        codes, uniques = key_codes(st[col])
        names = [str(u) for u in uniques]
        rank = np.empty(len(names), dtype=np.int64)
        rank[np.argsort(names, kind="stable")] = np.arange(len(names))  # each value's place in sorted order
        mask = mask & (codes >= 0)  # a missing key is no cell (a group-by drops it too)
        columns.append((codes, rank))
        levels.append(sorted(names))
    idx = np.flatnonzero(mask)
    idx = idx.astype(code_dtype(len(mask)), copy=False)
    c = np.zeros(len(idx), dtype=code_dtype(int(np.prod([max(len(lv), 1) for lv in levels]))))
    for (codes, rank), lv in zip(columns, levels):
        c *= max(len(lv), 1)  # lexicographic: the first key varies slowest
        c += rank.astype(c.dtype)[codes[idx]]
    order = np.argsort(c, kind="stable")
    idx, c = idx[order], c[order]
    del order
    bounds = np.flatnonzero(np.diff(c)) + 1
    out = {}
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(c)]):
        if lo == hi:
            continue
        code, key = int(c[lo]), []
        for lv in reversed(levels):
            code, j = divmod(code, len(lv))
            key.append(lv[j])
        out[tuple(reversed(key))] = tuple(a[idx[lo:hi]] for a in arrays)
    return out


def _latency_groups(st, x: np.ndarray) -> dict:
    return {k: v[0] for k, v in latency_cell_split(st, ~np.isnan(x), x).items()}


def replicate_quantiles(mu, sd, dist, pi, n: int, n_cens: int, qs, rng) -> dict[float, np.ndarray]:
    """Per draw, the replicated q-quantiles (for each q in ``qs``) of a cell's acted log-latencies.

    The replicate: n decisions; a Binomial(n, π) of them silent by the mode; the other m iid from the
    fitted family (``dist``: the :mod:`.families` entry and its shape parameters per draw); of those, the largest stand in for the rest
    of the ``n_cens`` logged silences (censored), so ``keep = n − max(k_mode, n_cens)`` are seen; the
    statistic is the linearly interpolated q-quantile of the ``keep`` smallest. Only two order
    statistics of the m draws enter it, and those are drawn exactly without drawing the other
    m − 2 (David & Nagaraja 2003, ch. 2): U_(r) ~ Beta(r, m − r + 1) and, given it,
    U_(r+1) = U_(r) + (1 − U_(r))·Beta(1, m − r); X = F⁻¹(U). Cost per cell is O(draws), not
    O(draws × n), so the check is flat in the number of decisions (10^6 episodes: millions per cell)."""
    fam, shape = dist
    D = len(mu)
    k_mode = rng.binomial(n, pi) if pi is not None else np.zeros(D, dtype=np.int64)
    m = n - k_mode
    keep = np.maximum(n - np.maximum(k_mode, n_cens), 1)
    out = {}
    for q in qs:
        pos = q * (keep - 1)
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, keep - 1)
        r = lo + 1  # 1-based rank of the lower order statistic among the m
        u_lo = rng.beta(r, np.maximum(m - r + 1, 1))
        u_hi = u_lo + (1 - u_lo) * rng.beta(1, np.maximum(m - r, 1))
        u_hi = np.where(hi > lo, u_hi, u_lo)
        u = np.clip(np.stack([u_lo, u_hi]), np.finfo(float).tiny, 1 - np.finfo(float).eps)
        x = fam.ppf(u, mu[None, :], sd[None, :], **shape)
        out[q] = x[0] + (pos - lo) * (x[1] - x[0])
    return out


def _latency_rows(res, p: ParamDraws, idx: np.ndarray, rng, a: float, x: np.ndarray | None = None) -> list:
    d, st = res.data, res.steps
    if st is None or not len(st):
        return []
    groups = _latency_groups(st, log_latency(st) if x is None else x)
    fam = p.family
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
        dist = fam, {name: v[idx] for name, v in at_model(fam, p.shape, c.m).items()}
        rep = replicate_quantiles(p.mu[idx, c.u, c.m, c.k], p.sigma[idx, c.u, c.m, c.k], dist, pi,
                                  len(x) + n_cens, n_cens, QUANTILES.values(), rng)
        for name, q in QUANTILES.items():
            out.append(_row((key[0], key[1], "all", key[2]), name, float(np.quantile(x, q)), rep[q], a))
    return out


#: fewest correct and fewest wrong acted decisions for a cell's latency-by-correctness check
MIN_PER_LABEL = 5


def _latency_by_correctness_rows(res, n_rep: int, rng, a: float, x: np.ndarray | None = None,
                                 wrong_lat: np.ndarray | None = None) -> list:
    """Labelled data: per latency cell, mean log-latency of content-correct acted decisions minus
    that of wrong ones. The model makes latency independent of correctness within a cell, so under
    it the labels are exchangeable over the cell's latencies: the statistic's predictive
    distribution given the observed latencies is the permutation distribution, mean 0 and SD
    s·√(1/n_c + 1/n_w) (s = the cell's SD), drawn here as its normal limit (a conditional
    predictive check; it needs no latency family, so it also holds for the t fit). With latency by
    correctness (``wrong_lat``: (replicates, model, task_type) draws of δ, wrong minus correct) the
    replicate's mean is −δ_mk per draw and s the SD within the two groups."""
    d, st = res.data, res.steps
    if st is None or not len(st) or "correct_at_obs" not in st:
        return []
    label = st["correct_at_obs"]
    known = label.notna().to_numpy(bool)
    if not known.any():
        return []
    x = log_latency(st) if x is None else x
    use = known & ~np.isnan(x)
    right_all = label.fillna(False).to_numpy(bool)
    informative = {(d.models[c.m], d.task_types[c.k], d.units[c.u]) for c in d.latency.itertuples()
                   if getattr(c, "informative", True)}
    out = []
    for key, (xv, right) in latency_cell_split(st, use, x, right_all).items():
        n_c, n_w = int(right.sum()), int((~right).sum())
        sd = float(np.std(xv, ddof=1)) if len(xv) > 1 else 0.0
        if key not in informative or min(n_c, n_w) < MIN_PER_LABEL or not sd > 0:
            continue
        observed = float(xv[right].mean() - xv[~right].mean())
        mean = 0.0
        if wrong_lat is not None:
            mean = -wrong_lat[:n_rep, d.models.index(key[0]), d.task_types.index(key[1])]
            sd = float(np.sqrt((np.var(xv[right]) * n_c + np.var(xv[~right]) * n_w) / max(n_c + n_w - 2, 1)))
        rep = rng.normal(mean, sd * np.sqrt(1 / n_c + 1 / n_w), n_rep)
        out.append(_row((key[0], key[1], "all", key[2]), "latency_correct_minus_wrong", observed, rep, a))
    return out


#: fewest items (each with 2+ acted decisions and 2+ episodes without a miss) for the item check
MIN_CORR_ITEMS = 5


def _corr_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson correlation of each row of ``x`` with ``y``."""
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean()
    return (xc @ yc) / np.sqrt((xc**2).sum(axis=-1) * (yc**2).sum())


def _decision_episodes(res) -> np.ndarray | None:
    """Each decision's row of the fit's episodes (None when the fit does not carry its episodes frame):
    computed once per check run and shared by the checks that sum decisions per episode."""
    from ..metrics._groups import episode_row

    d, st, ep = res.data, res.steps, getattr(res, "episodes", None)
    if st is None or not len(st) or ep is None or len(ep) != len(d.episodes):
        return None
    return episode_row(st, ep)


def _episode_latency_sums(row: np.ndarray, x: np.ndarray, n_ep: int) -> tuple[np.ndarray, np.ndarray]:
    """Per episode: the sum of its acted decisions' log-latencies and their number (NaN: no action)."""
    acted = ~np.isnan(x)
    return (np.bincount(row, weights=np.where(acted, x, 0.0), minlength=n_ep),
            np.bincount(row, weights=acted, minlength=n_ep))


def _item_sums(e: pd.DataFrame, row: np.ndarray, x: np.ndarray) -> pd.DataFrame:
    """Per (m, k, clock, u, i) of the episodes with an item, in sorted key order (a sorted group-by's):
    the acted decisions' log-latency sum ``sx`` and count ``nx``, the episodes that missed no window
    ``n0`` and those of them that succeeded ``y0``. ``row``: each decision's episode. Summed per episode,
    then per group over one integer code per episode (a five-column group-by of a frame of every episode
    holds several episode-length index arrays at once)."""
    from .data import combined_code, split_code

    sx, nx = _episode_latency_sums(row, x, len(e))
    clock_code, clocks = pd.factorize(e["clock"], sort=True)  # the clock names in sorted order
    has = e["i"].to_numpy() >= 0
    code, widths = combined_code([e["m"].to_numpy()[has], e["k"].to_numpy()[has], clock_code[has],
                                  e["u"].to_numpy()[has], e["i"].to_numpy()[has]])
    groups, at = np.unique(code, return_inverse=True)
    clean = e["M"].to_numpy()[has] == 0
    # pandas' sum (compensated, in row order) as the group-by of the episodes' frame summed them
    sums = {"sx": pd.Series(sx[has]).groupby(at, sort=True).sum().to_numpy(),
            "nx": np.bincount(at, weights=nx[has]).astype(np.int64),
            "n0": np.bincount(at, weights=clean).astype(np.int64),
            "y0": np.bincount(at, weights=clean & (e["y"].to_numpy()[has] > 0)).astype(np.int64)}
    m, k, c, u, i = split_code(groups, widths)
    return pd.DataFrame({"m": m, "k": k, "clock": np.asarray(clocks, dtype=object)[c], "u": u, "i": i, **sums})


def _item_latency_rows(res, n_rep: int, rng, a: float, x: np.ndarray | None = None,
                       row: np.ndarray | None = None) -> list:
    """Across items, per model × task type × clock × unit: the correlation of an item's mean
    log-latency (its acted decisions) with its success rate among the episodes that missed no window.

    Under the model latency is exchangeable over the items of a cell and independent of capability,
    and an episode that missed nothing succeeds with P(capable_item) whatever its latencies, so the
    item mean latencies can be permuted over the items: the statistic's predictive distribution given
    the data is the permutation distribution (a conditional check, as for
    ``latency_correct_minus_wrong``; no labels needed). Hard items that also slow the agent give a
    negative correlation, which makes P(no fatal miss | capable) higher than the model's product.
    ``row``: :func:`_decision_episodes` (computed here when not given)."""
    d, st = res.data, res.steps
    row = _decision_episodes(res) if row is None else row
    if row is None or not len(d.items):
        return []
    x = log_latency(st) if x is None else x
    g = _item_sums(d.episodes, row, x)
    g = g[(g["nx"] >= 2) & (g["n0"] >= 2)].reset_index(drop=True)
    informative = {(c.m, c.k, c.u) for c in d.latency.itertuples() if getattr(c, "informative", True)}
    out = []
    for (m, k, clock, u), c in g.groupby(["m", "k", "clock", "u"], sort=True, observed=True):
        lat, rate = (c["sx"] / c["nx"]).to_numpy(), (c["y0"] / c["n0"]).to_numpy()
        if (m, k, u) not in informative or len(c) < MIN_CORR_ITEMS or lat.std() == 0 or rate.std() == 0:
            continue
        observed = float(_corr_rows(lat[None, :], rate)[0])
        rep = _corr_rows(rng.permuted(np.tile(lat, (n_rep, 1)), axis=1), rate)
        out.append(_row((d.models[m], d.task_types[k], clock, d.units[u]), "latency_success_corr_across_items",
                        observed, rep, a))
    return out


#: fewest episodes (in items with two or more of them) of a row for its within-item latency–success check
MIN_WITHIN_EPISODES = 10


def _latency_success_within_items_rows(res, p: ParamDraws, rng, a: float, x: np.ndarray | None = None,
                                       row: np.ndarray | None = None) -> list:
    """Per model × task type × clock × unit, among the episodes that missed no window and acted at
    least once: T = Σ_e (l_e − l̄_i)(y_e − p̄_e) / n, the covariance of an episode's mean log-latency
    l_e, less its item's mean l̄_i, with its success y_e less the posterior mean of its P(capable) p̄_e
    (episodes without a task id form one item). Under the model an episode that missed nothing
    succeeds with P(capable), which depends on its item, length and clock, never on its latencies: given
    the latencies, y_e ~ Bernoulli(p_e) per draw, so T's replicate per draw is Σ dl_e (p_e − p̄_e)/n plus
    noise of variance Σ dl_e² p_e(1 − p_e)/n², drawn as its normal limit, the sums taken once per class
    of episodes alike in item, length and clock (flat in the number of episodes). Conditioning on the
    length matters: where an episode's length depends on how fast the agent is (a fixed time budget),
    the length moves P(capable) and is tied to latency without any trade-off. Where thinking longer
    helps, the slow episodes of an item are the capable ones: T > 0, and p_timely is optimistic. Labels
    are not needed: the one check of that entanglement that unlabelled logs allow. ``row``:
    :func:`_decision_episodes` (computed here when not given)."""
    from .data import combined_code

    d, st = res.data, res.steps
    row = _decision_episodes(res) if row is None else row
    if row is None:
        return []
    x = log_latency(st) if x is None else x
    e = d.episodes
    sx, nx = _episode_latency_sums(row, x, len(e))
    lat = sx / np.maximum(nx, 1)
    use = np.flatnonzero((nx > 0) & (e["M"].to_numpy() == 0))
    clock_code, clocks = pd.factorize(e["clock"], sort=True)
    cols = [e["m"].to_numpy()[use], e["k"].to_numpy()[use], clock_code[use], e["u"].to_numpy()[use]]
    cell_code, _ = combined_code(cols)
    informative = {(c.m, c.k, c.u) for c in d.latency.itertuples() if getattr(c, "informative", True)}
    out = []
    cells, cell_of = np.unique(cell_code, return_inverse=True)
    for j in range(len(cells)):
        sel = use[cell_of == j]
        m, k, c, u = (int(v[np.argmax(cell_of == j)]) for v in cols)
        item = e["i"].to_numpy()[sel]
        _, g = np.unique(item, return_inverse=True)
        n_g = np.bincount(g)
        if (m, k, u) not in informative or (n_g[g] >= 2).sum() < MIN_WITHIN_EPISODES:
            continue
        lv = lat[sel]
        dl = lv - (np.bincount(g, weights=lv) / n_g)[g]  # an item seen once contributes dl = 0
        n = len(sel)
        xs, timed = e["x"].to_numpy()[sel], bool(e["timed"].to_numpy()[sel[0]])
        cls, cls_of = np.unique(np.column_stack([item, xs]), axis=0, return_inverse=True)
        p_cap = capable_probability(p, d, m, k, cls[:, 0].astype(np.int64), cls[:, 1], timed)  # (S, classes)
        p_bar = p_cap.mean(axis=0)
        a_c = np.bincount(cls_of, weights=dl, minlength=len(cls))
        b_c = np.bincount(cls_of, weights=dl**2, minlength=len(cls))
        mean = (p_cap - p_bar) @ a_c / n
        sd = np.sqrt((p_cap * (1 - p_cap)) @ b_c) / n
        if not (sd > 0).all():
            continue
        observed = float((dl * (e["y"].to_numpy(float)[sel] - p_bar[cls_of])).sum() / n)
        out.append(_row((d.models[m], d.task_types[k], str(clocks[c]), d.units[u]), "latency_success_within_items",
                        observed, rng.normal(mean, sd), a))
    return out


def _item_adjusted(res, p: ParamDraws, x: np.ndarray, row: np.ndarray | None) -> np.ndarray:
    """Log-latencies less the posterior mean time intensity of their item: under a fit with item
    time intensities the cell's decisions are then one Normal(μ, σ) sample again, which the latency
    checks replicate (the intensities' own uncertainty, SE σ/√n per item, is left out). ``row``:
    :func:`_decision_episodes` (None: nothing to adjust by)."""
    if row is None:
        return x
    item = res.data.episodes["i"].to_numpy()[row]
    return x - p.item_lat.mean(axis=0)[item]


def _wrong_adjusted(res, p: ParamDraws, x: np.ndarray, row: np.ndarray | None) -> np.ndarray:
    """Log-latencies less the posterior mean shift of their content class (latency by correctness):
    a wrong decision's δ_mk, an unlabelled one's q·δ_mk (q its cell's wrong share), a correct one's 0,
    so a cell's decisions are one Normal(μ, σ) sample again for the latency checks (δ's own
    uncertainty left out, as :func:`_item_adjusted` leaves out the time intensities'). ``row``:
    :func:`_decision_episodes` (None: nothing to adjust by)."""
    from .data import _cell_code

    if row is None:
        return x
    d, st = res.data, res.steps
    m, k, u = (d.episodes[c].to_numpy(np.int64)[row] for c in ("m", "k", "u"))
    L = d.latency
    widths = len(d.task_types), len(d.units)
    q = np.zeros(len(d.models) * widths[0] * widths[1])  # per (m, k, u) cell code; 0 for a cell not in the table
    q[_cell_code(*(L[c].to_numpy(np.int64) for c in ("m", "k", "u")), *widths)] = L["q_wrong"].to_numpy(float)
    label = st["correct_at_obs"]
    w = np.where(label.isna().to_numpy(bool), q[_cell_code(m, k, u, *widths)], ~label.fillna(True).to_numpy(bool))
    return x - p.wrong_lat.mean(axis=0)[m, k] * w


def predictive_check(res, p: ParamDraws, seed: int, kind: str, ci_prob: float = 0.95) -> pd.DataFrame:
    """All checks of the module docstring for parameter draws ``p`` (posterior or prior)."""
    rng = np.random.default_rng(seed)
    a = (1 - ci_prob) / 2
    idx = _thin(p, rng, MAX_REPLICATES)
    sub = p.take(idx)
    draws = res._deriver.compute(sub)
    x = log_latency(res.steps) if res.steps is not None and len(res.steps) else None
    if x is not None and getattr(res.data, "clock_effects", False):  # the latency cells hold timed decisions only
        x = np.where(res.steps["clock"].isin(TIMED_CLOCKS).to_numpy(bool), x, np.nan)
    row = _decision_episodes(res) if x is not None else None  # one lookup of every decision's episode
    by_item = res.spec.item_latency and p.item_lat is not None
    if by_item and x is not None:
        x = _item_adjusted(res, p, x, row)
    by_label = p.wrong_lat is not None and getattr(res.data, "latency_by_correctness", False)
    x_lat = _wrong_adjusted(res, p, x, row) if by_label and x is not None else x
    rows = (_success_rows(res, draws, rng, a) + _success_given_misses(res, sub, rng, a)
            + _timing_share_rows(res, draws, sub, rng, a) + _latency_rows(res, p, idx, rng, a, x_lat)
            + (_latency_by_correctness_rows(res, len(idx), rng, a, x, sub.wrong_lat if by_label else None)
               if kind == "posterior" else [])
            # with item time intensities latency is no longer exchangeable over items: that check's
            # permutation null is not the model's any more (the model pairs each item's τ and capability)
            + (_item_latency_rows(res, len(idx), rng, a, x, row) if kind == "posterior" and not by_item else [])
            # with wrong decisions' own latency the model entangles latency and success by design: this
            # check's null (latency exchangeable within items whatever the outcome) is not its own
            + (_latency_success_within_items_rows(res, sub, rng, a, x, row)
               if kind == "posterior" and not by_label else []))
    f = pd.DataFrame(rows, columns=CHECK_COLUMNS + ["p_value"])
    f["covered"] = (f["predicted_lo"] <= f["observed"]) & (f["observed"] <= f["predicted_hi"])
    f["extreme"] = is_extreme(f["p_value"])
    f["kind"] = kind
    return f
