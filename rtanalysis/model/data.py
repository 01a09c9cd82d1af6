"""Sufficient statistics: the loader's ``episodes``/``steps`` frames reduced to the small tables the
model's likelihood needs. Cost of the fit then grows with the number of cells, not of episodes.

Tables (all integer-indexed into ``ModelData.models``, ``task_types``, ``units``, ``items``):

* ``latency``: one row per (model, task_type, time_unit) cell with ``n``, ``s1 = Σ log L``,
  ``s2 = Σ (log L)²`` over decisions with an action (exact for the Normal on log-latency),
  ``n_distinct`` latencies, ``n_at_close`` (acted decisions whose latency equals their window's
  close) and ``informative`` (:func:`informative_latency`: ≥ :data:`MIN_DISTINCT_LATENCIES` distinct
  values, or one or two that do not repeat, and not capped at the close; an uninformative cell stays
  out of the latency likelihood).
* ``timed_misses``: per (model, task_type, clock, unit), timed decisions and logged misses
  (early, late, silent or ``fallback``), for rows whose latencies are uninformative.
* ``censored``: silent decisions under a timed clock whose window close is known, by distinct
  (cell, item ``i``, close): ``count``. Each adds ``log(1 − Φ((log close − μ)/σ))`` (μ plus the
  item's time intensity when the model has one).
* ``latency_item``: per (cell, item) with an item (``i`` ≥ 0): ``n`` and ``s1 = Σ log L`` of the acted
  decisions: with the cell's ``s2`` exact for the Normal with an item time intensity.
* ``exposure``: per model, acted decisions under a timed clock with a known window close (each
  adds ``log(1 − π_m)``, π_m = P(silent whatever the latency)).
* ``binned``, ``bin_edges``, ``edge_weight``: per cell, the order statistics of log-latency kept at
  fixed quantile indices (the edges), the decisions between consecutive ones (the counts) and which
  edges are distinct (the weights): an exact likelihood of those order statistics for the Student-t and
  mixture families and the LOO choice between latency families (:data:`BIN_EDGE_METHOD`).
* ``unlabelled``: episodes without complete labels by (model, task_type, item, x, M): ``n``, ``y``
  (x = the episode's log number of decisions, centred within its task type).
* ``cap_labelled``: labelled episodes by (model, task_type, item, x): ``n``, ``capable``.
* With ``clock_effects`` (:func:`aggregate`): both also by ``t`` (1 under a timed clock), and the
  latency tables hold timed decisions only (an agent may think differently when the clock runs).
* ``timing_labelled``: labelled *capable* episodes by (task_type, M): ``n``, ``y``.
* ``episodes``: one row per episode (row key, item, M, labelled, ...), for derived quantities.
* ``windows``/``episode_windows``: distinct decision windows and their counts per episode.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..io import vocabulary
from ..io.keys import code_dtype, episode_rows
from ..metrics.latency import floored_log_latency
from ..schema import TIMED_CLOCKS


@dataclass
class ModelData:
    """The aggregated data one fit sees, plus the index maps back to names."""

    models: list[str]
    task_types: list[str]
    units: list[str]
    items: list[str]
    latency: pd.DataFrame
    censored: pd.DataFrame
    exposure: pd.DataFrame  # m, n_acted (timed, windowed decisions with an action)
    binned: pd.DataFrame
    bin_edges: np.ndarray  # (latency rows, n_edges) in log-latency
    unlabelled: pd.DataFrame
    cap_labelled: pd.DataFrame
    timing_labelled: pd.DataFrame
    not_capable_labelled: tuple[int, int]  # (n, y) labelled not-capable episodes
    episodes: pd.DataFrame
    windows: pd.DataFrame
    episode_windows: pd.DataFrame
    log_ref: pd.DataFrame  # per unit: center, scale of log-latency (centring, not data-fitted priors)
    item_type: np.ndarray | None = None  # task_type index of each item (its most frequent one)
    type_log_g: np.ndarray | None = None  # per task type: log of the geometric-mean decisions per episode
    type_offset: np.ndarray | None = None  # per task type: logit(0.5^(1/g)), logit 0 ↔ P(capable) 0.5
    timed_misses: pd.DataFrame | None = None  # m, k, clock, u, n (timed decisions), miss (logged misses)
    latency_item: pd.DataFrame | None = None  # m, k, u, i, n, s1, cell: acted decisions per (cell, item)
    clock_effects: bool = False  # success tables split by timed (``t``); latency tables from timed decisions
    edge_weight: np.ndarray | None = None  # (latency rows, n_edges): 1 where an edge's density enters (None: 0)
    #: latency tables also carry each cell's content-wrong decisions (``w_n``, ``w_s1``, ``w_n2``,
    #: ``q_wrong``: :func:`correctness_sums`), for a latency shift of wrong decisions
    latency_by_correctness: bool = False
    #: episodes that their failure ended (the survival reading, ``_truncated_table``); None or empty: none
    truncated: pd.DataFrame | None = None
    #: ``episode_windows`` over natural lengths (:func:`natural_lengths`; ``episodes["x_nat"]`` the lengths):
    #: what the derived quantities average over; None: the logged ones
    natural_windows: pd.DataFrame | None = None
    #: the episodes' log-latencies by (latency row, decisions): :func:`episode_latency_table`; None: not built
    latency_episodes: pd.DataFrame | None = None
    #: the silent decisions by alike episodes (:func:`silent_episode_table`), for episode slowness's censored
    #: term; None: not built
    silent_episodes: pd.DataFrame | None = None

    @property
    def survival(self) -> bool:
        """Some episode's log ends at its fatal decision (``ended`` = failure): the survival reading."""
        return self.truncated is not None and bool(len(self.truncated))

    @property
    def dims(self) -> dict[str, int]:
        return {"model": len(self.models), "task_type": len(self.task_types), "unit": len(self.units),
                "item": len(self.items), "lat_cell": len(self.latency), "cens": len(self.censored)}

    def summary(self) -> dict:
        return {**self.dims, "episodes": int(len(self.episodes)),
                "unlabelled_groups": int(len(self.unlabelled)), "labelled_groups": int(len(self.cap_labelled))}


def _codes(values: pd.Series, levels: list[str]) -> np.ndarray:
    return pd.Categorical(values.astype(object), categories=levels).codes.astype(np.int64)


#: cumulative probabilities of the per-cell bin edges of log-latency (14 bins; finer in the tails)
BIN_QUANTILES = np.array([0.01, 0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 0.95, 0.975, 0.99])
#: The edges are order statistics of the cell's log-latencies, at indices fixed by the cell's size
#: alone (:func:`order_statistic_layout`), and the likelihood is that of those order statistics: the
#: density at each edge and, between consecutive edges, the probability of the decisions in between
#: (Σ log f(x_(k_j)) + Σ c_j log(F(x_(k_j+1)) − F(x_(k_j))), the joint density of order statistics up to a
#: constant; David & Nagaraja 2003, §2.2). That is an exact likelihood of what is kept, unlike the
#: earlier bin counts between each cell's own quantiles (a pseudo-likelihood whose edges came from the
#: data): with those, SBC found the Student-t's ν too low (50 of 200 ranks in the top tenth) and the
#: mixture's scale too high, and an isolated grid posterior of one cell shows the same (``benchmarks/
#: order_statistic_likelihood.py``). A cell of up to 5 decisions keeps every one (the per-decision
#: likelihood); the normal family uses its exact sufficient statistics regardless.
BIN_EDGE_METHOD = "order statistics"


def cell_index_of(latency: pd.DataFrame) -> dict:
    """{(m, k, u): row} of a latency table (the last row of a cell when ``per_row`` repeats it): what
    :func:`cell_rows` looks decisions up in."""
    return {tuple(r): j for j, r in enumerate(latency[["m", "k", "u"]].to_numpy())}


def cell_rows(cell_index: dict, frame: pd.DataFrame) -> np.ndarray:
    """The latency-table row of each row of ``frame`` (columns m, k, u), looked up in ``cell_index``
    ({(m, k, u): row}) in one vectorised pass (a Python loop over 5.7 M decisions took 8 s)."""
    cols = ["m", "k", "u"]
    if not len(frame):
        return np.zeros(0, dtype=np.int64)
    keys = pd.MultiIndex.from_tuples(list(cell_index), names=cols)
    pos = keys.get_indexer(pd.MultiIndex.from_frame(frame[cols].astype(np.int64)))
    if (pos < 0).any():
        raise KeyError(f"latency cell {tuple(frame[cols].to_numpy()[np.argmax(pos < 0)])} not in the latency table")
    return np.fromiter(cell_index.values(), dtype=np.int64, count=len(cell_index))[pos]


def order_statistic_layout(n) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For cells of ``n`` decisions (an array; 0 allowed): (index, count, weight), each row one cell.
    ``index`` (cells, 13): the order statistics kept (from 0), ``round(q (n − 1))`` for q in
    :data:`BIN_QUANTILES`, repeated where two quantiles share one; ``weight`` (cells, 13): 1 for the
    first of each distinct index (its density enters once), 0 for repeats and empty cells; ``count``
    (cells, 14): the decisions strictly below the first kept one, between consecutive kept ones and above
    the last (0 between repeats). A function of ``n`` only, so every aggregation path agrees."""
    n = np.asarray(n, dtype=np.int64).reshape(-1, 1)
    index = np.clip(np.rint(BIN_QUANTILES[None, :] * (n - 1)), 0, np.maximum(n - 1, 0)).astype(np.int64)
    new = np.concatenate([np.ones((len(n), 1), dtype=bool), index[:, 1:] > index[:, :-1]], axis=1)
    weight = (new & (n > 0)).astype(np.int64)
    bounds = np.concatenate([np.full((len(n), 1), -1), index, n], axis=1)
    count = np.where(n > 0, np.maximum(np.diff(bounds, axis=1) - 1, 0), 0)
    return index, count, weight


def bin_edges(x: np.ndarray) -> np.ndarray:
    """One cell's edges: the order statistics of its log-latencies that :func:`order_statistic_layout` keeps."""
    index = order_statistic_layout([len(x)])[0][0]
    return np.sort(np.asarray(x, dtype=float))[index]


def _bin_latencies(obs: pd.DataFrame, latency: pd.DataFrame, log_ref: pd.DataFrame, cell_index: dict):
    """(edges (rows of ``latency``, 13), counts frame (rows, 14), edge weights (rows, 13)): each cell's
    kept order statistics of log-latency and the decisions between them (:func:`order_statistic_layout`);
    a cell without observations gets its unit's reference centre ± multiples of its scale, and no counts
    or weights. Counts and weights sit on the cell's (last) row."""
    ref_z = np.array([-2.3, -2.0, -1.6, -1.3, -0.8, -0.4, 0.0, 0.4, 0.8, 1.3, 1.6, 2.0, 2.3])
    ref = log_ref[["center", "scale"]].to_numpy()
    edges = ref[latency["u"].to_numpy(), :1] + ref_z[None, :] * ref[latency["u"].to_numpy(), 1:]
    counts = np.zeros((len(latency), len(BIN_QUANTILES) + 1), dtype=np.int64)
    weights = np.zeros((len(latency), len(BIN_QUANTILES)), dtype=np.int64)
    if len(obs):
        row = cell_rows(cell_index, obs) if len(latency) else None
        x = obs["x"].to_numpy()
        order = np.argsort(row, kind="stable")
        bounds = np.flatnonzero(np.diff(row[order])) + 1
        for idx in np.split(order, bounds):
            r = row[idx[0]]
            same = latency[["m", "k", "u"]].to_numpy() == latency.loc[r, ["m", "k", "u"]].to_numpy()
            edges[same.all(axis=1)] = bin_edges(x[idx])
            _, counts[r], weights[r] = (a[0] for a in order_statistic_layout([len(idx)]))
    return edges, pd.DataFrame(counts, columns=[f"b{j}" for j in range(counts.shape[1])]), weights


def _length_covariate(n_decisions: np.ndarray, k: np.ndarray, n_types: int) -> tuple[np.ndarray, np.ndarray]:
    """(x, log g): x = log(number of decisions) − log g_k, g_k the geometric mean over the type's
    episodes with decisions (1 for a type without any); x = 0 for an episode without logged
    decisions (treated as typical)."""
    logn = np.log(np.maximum(n_decisions, 1)).astype(float)
    has = n_decisions > 0
    x = np.zeros(len(k))
    log_g = np.zeros(n_types)
    for kk in range(n_types):
        sel = (k == kk) & has
        if sel.any():
            log_g[kk] = logn[sel].mean()
            x[sel] = logn[sel] - log_g[kk]
    return np.round(x, 12), log_g  # equal lengths give bit-equal keys for grouping


def _grouper(per_row: bool):
    """groupby over ``keys``, or (``per_row``) one group per row: the unaggregated baseline."""
    if per_row:
        return lambda f, keys: f.assign(_row=np.arange(len(f))).groupby(keys + ["_row"], as_index=False)
    return lambda f, keys: f.groupby(keys, as_index=False)


def _check_episodes(episodes: pd.DataFrame) -> None:
    if len(episodes) == 0:
        raise ValueError("no episodes to fit: the data has 0 accepted episodes")
    for col in ("model", "task_type", "clock", "time_unit", "success"):
        if col not in episodes.columns:
            raise ValueError(f"episodes frame lacks column {col!r} (expected the loader's schema)")


def _episode_frame(ep: pd.DataFrame):
    """(e, levels): one row per episode with integer codes, and the sorted level names."""
    task = ep["task"].astype(object).where(ep["task"].notna(), None)
    levels = {"models": sorted(ep["model"].astype(str).unique()),
              "task_types": sorted(ep["task_type"].astype(str).unique()),
              "units": sorted(ep["time_unit"].astype(str).unique()),
              "items": sorted({t for t in task if t is not None})}
    e = pd.DataFrame({
        "m": _codes(ep["model"], levels["models"]), "k": _codes(ep["task_type"], levels["task_types"]),
        "u": _codes(ep["time_unit"], levels["units"]),
        "i": _codes(task, levels["items"]),  # -1: no task id, no item effect
        "clock": ep["clock"].astype(str).to_numpy(), "y": ep["success"].to_numpy(bool).astype(np.int64),
    })
    e["timed"] = e["clock"].isin(TIMED_CLOCKS)
    return e, levels


def _step_arrays(ep: pd.DataFrame, steps: pd.DataFrame, e: pd.DataFrame) -> dict:
    """Per decision: its episode, timed or not, latency, window, acted, miss and label flags. Failed
    calls (:func:`rtanalysis.io.vocabulary.failed_call`) are left out: they inform neither timing nor
    capability (the report counts them as reliability)."""
    failed = vocabulary.failed_call(steps)
    st = (steps[~failed] if failed.any() else steps).reset_index(drop=True)
    n = len(st)
    if n:
        ep_of_step = episode_rows(st, ep)
        if (ep_of_step < 0).any():
            bad = st.loc[ep_of_step < 0, ["run_id", "episode_id"]].iloc[0].tolist()
            raise ValueError(f"steps frame has a decision of an episode not in episodes: {bad}")
    else:
        ep_of_step = np.zeros(0, dtype=np.int64)
    col = lambda c: st[c].to_numpy(float) if n else np.zeros(0)  # noqa: E731
    S = {"ep": ep_of_step, "timed": e["timed"].to_numpy()[ep_of_step], "lat": col("latency"),
         "close": col("window_close"), "open": col("window_open")}
    # missed / labelled / wrong: the loader's vocabulary (rtanalysis.io.vocabulary); a played
    # fallback is a miss there, the only record of one where latency is logged as the tick length
    S["acted"] = vocabulary.acted(st)
    S["miss"] = vocabulary.missed(st, S["timed"])
    S["unl"] = vocabulary.unlabelled_action(st)
    S["wrong"] = vocabulary.wrong_action(st)
    # the last logged decision of each episode, its miss and its content label: what an episode that
    # its failure ended died of (``_episode_ends``)
    S["step"] = st["step"].to_numpy(np.int64) if n else np.zeros(0, dtype=np.int64)
    S["right"] = st["correct_at_obs"].fillna(False).to_numpy(bool) if n else np.zeros(0, dtype=bool)
    # per decision in the smallest integer type that holds them (4 × 8 bytes a decision otherwise);
    # the tables built from them are int64 as before
    S["cell"] = tuple(_compact(e[c].to_numpy())[ep_of_step] for c in ("m", "k", "u"))
    S["item"] = _compact(e["i"].to_numpy())[ep_of_step]
    return S


def _compact(codes: np.ndarray) -> np.ndarray:
    """Integer codes (-1 for none) in the smallest signed type that holds them."""
    return codes.astype(code_dtype(int(codes.max(initial=0))))


def _episode_labels(e: pd.DataFrame, S: dict, n_types: int) -> tuple[np.ndarray, np.ndarray]:
    """Adds M (misses), labelled, capable and x (centred log length) to ``e``; returns (log g, offset)."""
    n_ep = len(e)
    count = lambda w: np.bincount(S["ep"], weights=w, minlength=n_ep)  # noqa: E731
    e["M"] = count(S["miss"]).astype(np.int64)  # boolean weights: counted as 0/1, no float copy
    n_acted = count(S["acted"])
    # the label flags are needed only here: dropped, not carried through the rest of the aggregation
    e["labelled"], e["capable"] = vocabulary.episode_labels(n_acted, count(S.pop("unl")), count(S.pop("wrong")))
    e["x"], type_log_g = _length_covariate(np.bincount(S["ep"], minlength=n_ep), e["k"].to_numpy(), n_types)
    return type_log_g, -np.log(np.expm1(np.log(2.0) / np.exp(type_log_g)))  # logit(0.5 ** (1 / g))


def add_ended_flags(e: pd.DataFrame, ended: np.ndarray) -> None:
    """Adds ``survival`` (the episode says how it ended) and ``ended_failure`` (its failure ended it) to ``e``
    from each episode's ``ended`` value (None / NaN where absent); both aggregation paths call it."""
    known = pd.notna(ended) & (ended != None)  # noqa: E711 (element-wise: a masked NULL from DuckDB is None)
    e["survival"] = known
    e["ended_failure"] = known & (ended == "failure") & (e["y"].to_numpy() == 0)


def _episode_ends(e: pd.DataFrame, ep: pd.DataFrame, S: dict) -> None:
    """Adds what the survival reading needs to ``e``: ``survival`` (the episode says how it ended: the
    episode field ``ended``), ``ended_failure`` (its log ends at the fatal decision), ``n_dec``, and of its last
    logged decision ``miss_last`` (a timing miss) and ``right_last`` (labelled content-right,
    ``correct_at_obs`` true, acted or not). Without the field every episode keeps today's reading: its
    logged decisions are the whole episode (the contract's rule for an absent ``ended``)."""
    n_ep = len(e)
    ended = ep["ended"].astype(object).to_numpy() if "ended" in ep else np.full(n_ep, None, dtype=object)
    add_ended_flags(e, ended)
    e["n_dec"] = np.bincount(S["ep"], minlength=n_ep).astype(np.int64)
    miss_last = np.zeros(n_ep, dtype=np.int64)
    right_last = np.zeros(n_ep, dtype=np.int64)
    if len(S["ep"]):
        order = np.lexsort((S["step"], S["ep"]))  # by episode, then step: the last of each run is the last decision
        last = order[np.r_[S["ep"][order][1:] != S["ep"][order][:-1], True]]
        miss_last[S["ep"][last]] = S["miss"][last]
        right_last[S["ep"][last]] = S["right"][last]
    e["miss_last"], e["right_last"] = miss_last, right_last


def _prefix_length(e: pd.DataFrame, type_log_g: np.ndarray) -> None:
    """Adds ``xp`` (the centred log length of the decisions before the last, 0 where there are none) and
    ``hp`` (1 where there are some) to ``e``: the decisions an episode that its failure ended survived."""
    prev = e["n_dec"].to_numpy() - 1
    e["hp"] = (prev > 0).astype(np.int64)
    e["xp"] = np.round(np.where(prev > 0, np.log(np.maximum(prev, 1)) - type_log_g[e["k"].to_numpy()], 0.0), 12)


def natural_lengths(e: pd.DataFrame, episode_windows: pd.DataFrame) -> tuple[np.ndarray, pd.DataFrame, np.ndarray]:
    """(x, episode windows, without a donor) over the length each episode would have played.

    An episode that its failure ended (``ended_failure``) after J decisions takes the length and windows
    of a donor: an episode of the same item (else task type), time unit and clock that reached its end
    with at least J decisions. Under the survival reading the chance of dying at the J-th decision does
    not depend on how many decisions would have followed, so the failure's natural length is distributed
    as the group's lengths beyond J; the donors (which survived) over-represent short episodes, so each is
    weighted by 1 / Ŝ(n), Ŝ the group's Kaplan-Meier survival over decisions, and the failures take the
    donors at evenly spaced quantiles of those weights (deterministic: same data, same lengths). A failure
    without a donor keeps its own log (flagged in the third array)."""
    x = e["x"].to_numpy(float).copy()
    cut = np.flatnonzero(e["ended_failure"].to_numpy(bool)) if "ended_failure" in e else np.zeros(0, np.int64)
    if not len(cut):
        return x, episode_windows, np.zeros(len(e), dtype=bool)
    ended = e["ended_failure"].to_numpy(bool)
    n_dec = e["n_dec"].to_numpy()
    donor = np.full(len(e), -1, dtype=np.int64)
    for level in (["i", "u", "clock"], ["k", "u", "clock"]):
        need = cut[donor[cut] < 0]
        if not len(need):
            break
        members = e.groupby(level, sort=False).indices
        for key in e.iloc[need].groupby(level, sort=False).indices:
            if level[0] == "i" and key[0] < 0:  # no task id: not an item
                continue
            rows = members[key]
            pool = rows[~ended[rows]]
            if len(pool):
                _assign_donors(rows[ended[rows] & (donor[rows] < 0)], pool, n_dec, ended[rows], rows, donor)
    took = np.flatnonzero(donor >= 0)
    x[took] = x[donor[took]]
    labels = e.index.to_numpy()
    ew = episode_windows
    keep = ew[~ew["ep"].isin(set(labels[took].tolist()))]
    # one copy of the donor's windows per failure it stands in for (a donor may serve several)
    pairs = pd.DataFrame({"donor": labels[donor[took]], "ep_new": labels[took]})
    borrowed = (ew.merge(pairs, left_on="ep", right_on="donor").drop(columns=["ep", "donor"])
                .rename(columns={"ep_new": "ep"})[list(ew.columns)])
    no_donor = np.zeros(len(e), dtype=bool)
    no_donor[cut[donor[cut] < 0]] = True
    return x, pd.concat([keep, borrowed], ignore_index=True), no_donor


def _assign_donors(need: np.ndarray, pool: np.ndarray, n_dec: np.ndarray, ended: np.ndarray, rows: np.ndarray,
                   donor: np.ndarray) -> None:
    """Fills ``donor`` for the failures ``need`` from the episodes ``pool`` (:func:`natural_lengths`); ``rows``
    and ``ended`` (per row): the whole group, for its Kaplan-Meier survival over decisions."""
    n_rows = n_dec[rows]
    top = int(n_rows.max(initial=0))
    at_risk = np.bincount(n_rows, minlength=top + 1)[::-1].cumsum()[::-1]  # episodes with ≥ j decisions
    deaths = np.bincount(n_rows[ended], minlength=top + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        hazard = np.where(at_risk > 0, deaths / np.maximum(at_risk, 1), 0.0)
    surv = np.cumprod(1.0 - hazard)  # Ŝ(n): P(survive decisions 1..n); > 0 at every donor's length
    pool = pool[np.argsort(n_dec[pool], kind="stable")]
    weight = 1.0 / np.maximum(surv[n_dec[pool]], 1e-12)
    for j, r in enumerate(need):
        ok = n_dec[pool] >= n_dec[r]
        if not ok.any():
            continue
        cum = np.cumsum(weight[ok])
        at = np.searchsorted(cum, (j + 0.5) / len(need) * cum[-1])
        donor[r] = pool[ok][min(at, int(ok.sum()) - 1)]


def episode_latency_table(n: np.ndarray, mean: np.ndarray, within: np.ndarray, cell: np.ndarray) -> pd.DataFrame:
    """The episodes' log-latencies by (latency row ``cell``, acted decisions ``n``): ``c`` episodes, ``sr`` =
    Σ of their mean log-latency, ``sr2`` = Σ of its square, ``w`` = Σ of their within-episode sums of
    squares. Exact sufficient statistics of the normal latency with an episode intercept (``build``'s
    episode slowness), from per-episode arrays (episodes with ``n`` ≥ 1 only)."""
    keep = n > 0
    f = pd.DataFrame({"cell": cell[keep].astype(np.int64), "n": n[keep].astype(np.int64), "r": mean[keep],
                      "r2": mean[keep] ** 2, "w": within[keep]})
    out = f.groupby(["cell", "n"], as_index=False, sort=True).agg(c=("r", "size"), sr=("r", "sum"), sr2=("r2", "sum"),
                                                                   w=("w", "sum"))
    return out.astype({"c": np.int64})


def _episode_means(S: dict, obs: pd.DataFrame, n_ep: int, sel: np.ndarray):
    """Per episode, over the decisions of ``obs`` (``sel``: which of ``S``'s decisions they are): acted
    decisions ``n``, mean log-latency (0 where none) and within-episode sum of squares."""
    ep = S["ep"][sel]
    x = obs["x"].to_numpy(float)
    n = np.bincount(ep, minlength=n_ep)
    mean = np.bincount(ep, weights=x, minlength=n_ep) / np.maximum(n, 1)
    within = np.bincount(ep, weights=(x - mean[ep]) ** 2, minlength=n_ep)
    return n, mean, within


def _episode_cells(e: pd.DataFrame, cell_index: dict, which: np.ndarray) -> np.ndarray:
    """Each episode's latency row (0 where not ``which``: an episode with neither acted nor silent decisions
    has no row)."""
    cell = np.zeros(len(e), dtype=np.int64)
    cell[which] = cell_rows(cell_index, e.loc[which, ["m", "k", "u"]])
    return cell


#: columns of :func:`silent_episode_table`
SILENT_EPISODE_COLUMNS = ["g", "cell", "n", "xbar", "log_close", "count", "c"]


def silent_episode_table(ep: np.ndarray, log_close: np.ndarray, count: np.ndarray, n: np.ndarray,
                         mean: np.ndarray, cell: np.ndarray) -> pd.DataFrame:
    """Silent decisions by episode, for episode slowness's censored term (``build._silence_hurdle``):
    under an episode intercept an episode's silences are tied to its acted latencies, so they enter
    through the episode's acted count ``n`` and mean log-latency ``xbar``. Alike episodes (same latency
    row, ``n``, ``xbar`` and censor points) form one group ``g`` of ``c`` episodes. One row per (group,
    censor point ``log_close``), ``count`` the silences at it in one episode of the group. Inputs: each
    silence's episode, censor point and multiplicity (``ep``, ``log_close``, ``count``); per episode
    ``n``, ``mean``, ``cell`` (indexed by episode). Rows sorted by group key, so the pandas and DuckDB
    paths agree whatever their episode numbering."""
    if not len(ep):
        return pd.DataFrame({c: np.zeros(0, dtype=np.int64 if c in ("g", "cell", "n", "count", "c") else float)
                             for c in SILENT_EPISODE_COLUMNS})
    f = (pd.DataFrame({"ep": np.asarray(ep, dtype=np.int64), "log_close": np.asarray(log_close, dtype=float),
                       "count": np.asarray(count, dtype=np.int64)})
         .groupby(["ep", "log_close"], as_index=False, sort=True)["count"].sum())
    per = f.groupby("ep", sort=True).agg(sig=("log_close", tuple), counts=("count", tuple))
    eps = per.index.to_numpy()
    per["cell"], per["n"] = cell[eps].astype(np.int64), n[eps].astype(np.int64)
    per["xbar"] = np.where(per["n"] > 0, mean[eps], 0.0)
    keys = ["cell", "n", "xbar", "sig", "counts"]
    groups = per.groupby(keys, sort=True).size().rename("c").reset_index()
    groups["g"] = np.arange(len(groups), dtype=np.int64)
    rows = groups.explode(["sig", "counts"], ignore_index=True)
    out = pd.DataFrame({"g": rows["g"], "cell": rows["cell"], "n": rows["n"], "xbar": rows["xbar"],
                        "log_close": rows["sig"].to_numpy(float), "count": rows["counts"].to_numpy(np.int64),
                        "c": rows["c"]})
    return out.astype({"g": np.int64, "cell": np.int64, "n": np.int64, "xbar": float, "c": np.int64})


def informative_cells(L) -> np.ndarray:
    """1 for each row of the latency table ``L`` in the likelihood, 0 for a cell without spread (a tick
    length logged every time, :func:`informative_latency`): its tied values would have an
    unbounded density as σ → 0; its P(miss) comes from the logged misses instead."""
    return L["informative"].to_numpy(float) if "informative" in L else np.ones(len(L))


#: a padded censor point of :func:`silent_episode_arrays` (count 0; S there is 1 for any latency in use)
PAD_LOG_CLOSE = -50.0


def silent_episode_arrays(t: pd.DataFrame) -> tuple[dict, dict]:
    """:func:`silent_episode_table` as dense arrays, in two parts: the groups whose episodes have one
    silence (their term has a closed form, :func:`.families.single_silence_loglik`) and the others
    (Gauss–Hermite, :func:`.families.episode_silence_loglik`). Each part has per group (G,) ``cell``,
    ``n``, ``xbar``, ``c``; the single part (G,) ``log_close``, the other (G, R) ``log_close`` and
    ``count``, padded with count 0 (R the most censor points of a group). An empty part (or no table):
    one group of no episodes (``c`` = 0), so the model's graph is the same."""
    if t is None:
        t = pd.DataFrame({c: [] for c in SILENT_EPISODE_COLUMNS})
    one = t.groupby("g")["count"].transform("sum").to_numpy() == 1
    single, multi = (_dense_silences(t[sel]) for sel in (one, ~one))
    single["log_close"] = single.pop("log_close")[:, 0]
    del single["count"]
    return single, multi


def _dense_silences(t: pd.DataFrame) -> dict:
    if not len(t):
        t = pd.DataFrame({"g": [0], "cell": [0], "n": [0], "xbar": [0.0], "log_close": [PAD_LOG_CLOSE],
                          "count": [0], "c": [0]})
    g = np.unique(t["g"].to_numpy(), return_inverse=True)[1]  # this part's groups, numbered 0..G-1
    first = np.r_[True, g[1:] != g[:-1]]
    col = np.arange(len(t)) - np.maximum.accumulate(np.where(first, np.arange(len(t)), 0))
    G, R = int(g.max()) + 1, int(col.max()) + 1
    log_close, count = np.full((G, R), PAD_LOG_CLOSE), np.zeros((G, R))
    log_close[g, col], count[g, col] = t["log_close"].to_numpy(float), t["count"].to_numpy(float)
    head = t[first]
    return {"cell": head["cell"].to_numpy(np.int64), "n": head["n"].to_numpy(float),
            "xbar": head["xbar"].to_numpy(float), "c": head["c"].to_numpy(float), "log_close": log_close,
            "count": count}


def _log_latencies(S: dict, n_units: int, timed_only: bool = False) -> pd.DataFrame:
    """Acted decisions' log-latencies per (m, k, u) cell (``timed_only``: under a timed clock only);
    zero latencies are floored at half the smallest positive one of their unit (log 0 is -inf)."""
    lat, acted = S["lat"], S["acted"] & (S["timed"] if timed_only else True)
    m, k, u = S["cell"]
    loglat = floored_log_latency(lat, u)  # the one definition, shared with the checks and metrics
    # the acted rows taken column by column (no frame of every decision), as fresh arrays the frame
    # keeps without a consolidated copy; the codes stay in their compact types (the tables built from
    # them are int64)
    lat = lat[acted]
    return pd.DataFrame({"m": m[acted], "k": k[acted], "u": u[acted], "i": S["item"][acted], "x": loglat[acted],
                         "lat": lat, "at_close": at_close(lat, S["close"][acted])}, copy=False)


#: a latency cell with fewer distinct acted latencies than this, and repeats among them, says nothing
#: about its spread (a harness that logs the tick length as every latency): it is left out of the
#: latency likelihood and its decisions' P(miss) comes from the logged misses instead
#: (``latency_informative`` = False). A cell with one or two acted decisions, not repeated, is kept: its
#: few latencies are measured times (dropping them biased μ upwards in SBC with clock effects: a cell
#: where most decisions were silent lost the fast ones that acted; ``benchmarks/sbc_dropped_cells.py``)
MIN_DISTINCT_LATENCIES = 3
#: a cell where at least this share of acted latencies equals the window close (and at least
#: :data:`MIN_DISTINCT_LATENCIES` of them) is *capped*: the harness cut thinking off at the deadline
#: and acted (RealtimeGym's token budget), so a latency at the close is not a miss and the latency
#: distribution's tail says nothing about misses; its P(miss) comes from the logged misses. A
#: continuous latency lands exactly on the close with probability 0, so an honest cell never trips it.
CAPPED_SHARE = 0.05


def informative_latency(n: np.ndarray, n_distinct: np.ndarray, n_at_close: np.ndarray) -> np.ndarray:
    """Per latency cell: do its acted latencies inform P(miss)? Not when (nearly) constant (fewer
    than :data:`MIN_DISTINCT_LATENCIES` distinct values, some repeated) or capped at the window close
    (:data:`CAPPED_SHARE`). The one rule, shared by :func:`aggregate` and the DuckDB path."""
    n, n_at_close = np.asarray(n, dtype=float), np.asarray(n_at_close, dtype=float)
    n_distinct = np.asarray(n_distinct, dtype=float)
    capped = (n_at_close >= MIN_DISTINCT_LATENCIES) & (n_at_close >= CAPPED_SHARE * n)
    # a cell with no acted decision stays uninformative (nothing measured: P(miss) from the logged misses)
    return ((n_distinct >= MIN_DISTINCT_LATENCIES) | ((n_distinct == n) & (n > 0))) & ~capped


def at_close(lat: np.ndarray, close: np.ndarray) -> np.ndarray:
    """Latency equal to its window's close (to 1e-9 relative): a cut-off, not a measured time."""
    with np.errstate(invalid="ignore"):
        return (close > 0) & (np.abs(lat - close) <= 1e-9 * np.abs(close))


def _cell_code(m, k, u, k_width: int, u_width: int) -> np.ndarray:
    """One int64 code per (m, k, u) cell, ordered as (m, k, u); computed in place, so one array of
    every decision is allocated, not one per operation."""
    code = np.asarray(m).astype(np.int64)
    code *= k_width
    code += k
    code *= u_width
    code += u
    return code


def _cell_max(cell: tuple, values: np.ndarray) -> np.ndarray:
    """Per decision, the largest non-NaN of ``values`` over its (m, k, u) cell (NaN when none): a
    group-by's transform("max") on integer cell codes, without a frame of every decision."""
    m, k, u = cell
    if not len(m):
        return np.zeros(0)
    code = _cell_code(m, k, u, int(k.max()) + 1, int(u.max()) + 1)
    top = np.full(int(code.max()) + 1, -np.inf)
    have = ~np.isnan(values)
    np.maximum.at(top, code[have], values[have])
    out = top[code]
    out[np.isneginf(out)] = np.nan
    return out


def _latency_tables(S: dict, obs: pd.DataFrame, by, per_row: bool):
    """(latency, censored, exposure) tables (see the module docstring), the cell index, which decisions
    are censored silences and their censor points (log)."""
    m, k, u = S["cell"]
    latency = _latency_sums(obs, by, per_row)
    close, acted, timed = S["close"], S["acted"], S["timed"]
    cens_sel = ~acted & timed & (close > 0) & ~np.isnan(close)
    # A silent decision tells us L > its censor point. That point is the window close, raised to the
    # largest latency any action of the same cell landed with under a timed clock: when late
    # actions are logged, the harness evidently waited at least that long, so silence is not merely
    # "L > close" (what is left of it goes to the per-model silence probability π_m).
    censor_at = np.fmax(close, _cell_max(S["cell"], np.where(acted & timed, S["lat"], np.nan)))
    i64 = lambda a: a[cens_sel].astype(np.int64, copy=False)  # noqa: E731
    cens = pd.DataFrame({"m": i64(m), "k": i64(k), "u": i64(u), "i": i64(S["item"]),
                         "log_close": np.log(censor_at[cens_sel])})
    censored = (by(cens, ["m", "k", "u", "i", "log_close"]).size().rename(columns={"size": "count"})
                .drop(columns="_row", errors="ignore"))
    exp_sel = acted & timed & (close > 0) & ~np.isnan(close)
    exposure = (by(pd.DataFrame({"m": m[exp_sel].astype(np.int64)}), ["m"]).size()
                .rename(columns={"size": "n_acted"}).drop(columns="_row", errors="ignore"))
    # every cell that has observations or censored decisions
    cells = pd.concat([latency[["m", "k", "u"]], censored[["m", "k", "u"]]]).drop_duplicates()
    latency = cells.merge(latency, how="left", on=["m", "k", "u"]).fillna({"n": 0, "s1": 0.0, "s2": 0.0})
    latency = latency.sort_values(["m", "k", "u"]).reset_index(drop=True).astype({"n": np.int64})
    # per cell (also when ``per_row`` keeps one row per decision)
    per_cell = _per_cell_counts(obs, latency)
    latency["n_distinct"] = per_cell["nd"].to_numpy(np.int64)
    latency["n_at_close"] = per_cell["nc"].to_numpy(np.int64)
    latency["informative"] = informative_latency(per_cell["nn"], per_cell["nd"], per_cell["nc"])
    cell_index = cell_index_of(latency)
    censored["cell"] = cell_rows(cell_index, censored)
    return latency, censored, exposure, cell_index, cens_sel, cens["log_close"].to_numpy()


def _latency_sums(obs: pd.DataFrame, by, per_row: bool) -> pd.DataFrame:
    """Per (m, k, u) cell of the acted decisions: ``n``, ``s1`` (sum of log-latencies) and ``s2`` (of
    their squares); ``per_row``: one row per decision through ``by`` (the unaggregated baseline)."""
    x = obs["x"].to_numpy()
    sums = pd.DataFrame({"x": x, "x2": x ** 2}, copy=False)
    agg = {"n": ("x", "size"), "s1": ("x", "sum"), "s2": ("x2", "sum")}
    if per_row:
        keys = pd.DataFrame({c: obs[c].to_numpy().astype(np.int64) for c in ("m", "k", "u")})
        return by(pd.concat([keys, sums], axis=1), ["m", "k", "u"]).agg(**agg).drop(columns="_row")
    return group_by_codes({c: obs[c].to_numpy() for c in ("m", "k", "u")}, sums, agg)


def group_by_codes(keys: dict, values: pd.DataFrame, agg: dict) -> pd.DataFrame:
    """``values`` grouped by the integer key columns ``keys`` ({name: codes ≥ 0}, one per row) and
    aggregated with ``agg`` (named aggregations): what ``groupby(list(keys), sort=True)`` gives, key
    columns int64 first, but grouped on one integer code per row. A group-by of several key columns
    holds a handful of per-row index arrays at once (hundreds of MiB at 10^6 episodes); the
    aggregations are pandas' own, over the same rows in the same order."""
    code, widths = combined_code(keys.values())
    if code is None:  # codes would overflow: group on the columns themselves
        frame = pd.concat([pd.DataFrame({n: np.asarray(a, dtype=np.int64) for n, a in keys.items()}), values], axis=1)
        return frame.groupby(list(keys), as_index=False, sort=True).agg(**agg)
    out = values.groupby(code, sort=True).agg(**agg)
    parts = split_code(out.index.to_numpy(np.int64), widths)
    return pd.concat([pd.DataFrame(dict(zip(keys, parts))), out.reset_index(drop=True)], axis=1)


def combined_code(columns) -> tuple[np.ndarray | None, list[int]]:
    """(code, widths): one int64 per row that orders as the integer columns ``columns`` (codes ≥ 0) do,
    the first varying slowest, and each column's width; ``None`` when the code would overflow."""
    columns = [np.asarray(a) for a in columns]
    widths = [int(a.max(initial=0)) + 1 for a in columns]
    if np.prod(widths, dtype=float) >= 2.0**62:
        return None, widths
    code = np.zeros(len(columns[0]) if columns else 0, dtype=np.int64)
    for a, w in zip(columns, widths):
        code *= w
        code += a
    return code, widths


def split_code(code: np.ndarray, widths: list[int]) -> list[np.ndarray]:
    """The columns :func:`combined_code` combined, back from ``code``."""
    parts = []
    for w in reversed(widths):
        code, j = np.divmod(code, w)
        parts.append(j)
    return parts[::-1]


def _per_cell_counts(obs: pd.DataFrame, latency: pd.DataFrame) -> pd.DataFrame:
    """Per row of ``latency``: its cell's acted decisions (``nn``), their distinct latencies (``nd``)
    and those at the window close (``nc``); 0 for a cell without acted decisions. One sort of the
    decisions by (cell, latency) instead of a group-by's ``nunique`` (a third of the memory)."""
    width = [int(max(obs[c].to_numpy().max(initial=0), latency[c].to_numpy().max(initial=0))) + 1 for c in ("k", "u")]
    code = lambda f: _cell_code(*(f[c].to_numpy() for c in ("m", "k", "u")), *width)  # noqa: E731

    c, lat = code(obs), obs["lat"].to_numpy()
    order = np.lexsort((lat, c))
    c, lat, at_close = c[order], lat[order], obs["at_close"].to_numpy()[order]
    del order
    new_value = np.ones(len(c), dtype=bool)
    new_value[1:] = lat[1:] != lat[:-1]
    new_cell = np.ones(len(c), dtype=bool)
    new_cell[1:] = c[1:] != c[:-1]
    new_value |= new_cell
    cells = c[new_cell]
    cell_of = np.cumsum(new_cell) - 1
    counts = {"nn": np.bincount(cell_of, minlength=len(cells)),
              "nd": np.bincount(cell_of[new_value], minlength=len(cells)),
              "nc": np.bincount(cell_of, weights=at_close, minlength=len(cells))}
    rows = code(latency)
    at = np.minimum(np.searchsorted(cells, rows), max(len(cells) - 1, 0))
    found = (cells[at] == rows) if len(cells) else np.zeros(len(rows), dtype=bool)
    return pd.DataFrame({k: np.where(found, v[at] if len(cells) else 0, 0) for k, v in counts.items()})


def wrong_weights(wrong: np.ndarray, unlabelled: np.ndarray, row: np.ndarray, n_rows: int):
    """(w per acted decision, q per latency row): w = 1 for a content-wrong decision, 0 for a correct
    one, and for one without a label the share of wrong ones among its cell's labelled decisions, q
    (0 where the cell has none): the expected value of its unknown label, so an unlabelled decision
    enters the latency likelihood at the cell's mixture mean. ``row``: each decision's latency row."""
    labelled = ~unlabelled
    n_lab = np.bincount(row, weights=labelled, minlength=n_rows)
    n_wrong = np.bincount(row, weights=wrong & labelled, minlength=n_rows)
    q = np.divide(n_wrong, n_lab, out=np.zeros(n_rows), where=n_lab > 0)
    return np.where(unlabelled, q[row], wrong.astype(float)), q


def correctness_sums(latency: pd.DataFrame, obs: pd.DataFrame, wrong: np.ndarray, unlabelled: np.ndarray,
                     cell_index: dict) -> pd.DataFrame:
    """``latency`` with, per row, Σw, Σw·x, Σw² over its acted decisions (``w_n``, ``w_s1``, ``w_n2``;
    w of :func:`wrong_weights`, x the log-latency) and the share of wrong labelled decisions
    ``q_wrong``. With a shift δ of wrong decisions' mean log-latency, the cell's Normal log-likelihood
    is its sufficient statistics' one plus [δ(Σw·x − μΣw) − ½δ²Σw²]/σ² (Σ(x − μ − δw)² expanded),
    as for the item time intensities. ``wrong``, ``unlabelled``: per row of ``obs``."""
    row = cell_rows(cell_index, obs)
    n = len(latency)
    w, q = wrong_weights(wrong, unlabelled, row, n)
    out = latency.copy()
    out["w_n"] = np.bincount(row, weights=w, minlength=n)
    out["w_s1"] = np.bincount(row, weights=w * obs["x"].to_numpy(float), minlength=n)
    out["w_n2"] = np.bincount(row, weights=w * w, minlength=n)
    out["q_wrong"] = q
    return out


def latency_item_table(obs: pd.DataFrame, cell_index: dict) -> pd.DataFrame:
    """``latency_item``: per (m, k, u, i) with an item, ``n`` and ``s1`` of the acted decisions'
    log-latencies and the row of ``latency`` it refines (``cell``). The one rule for both paths
    (pandas and DuckDB hand it the same per-decision or pre-summed columns)."""
    has = obs["i"].to_numpy() >= 0
    keys = {c: obs[c].to_numpy()[has] for c in ("m", "k", "u", "i")}
    if "n" in obs:  # pre-summed per (m, k, u, i)
        agg, values = {"n": ("n", "sum"), "s1": ("s1", "sum")}, obs.loc[has, ["n", "s1"]].reset_index(drop=True)
    else:  # one row per acted decision
        agg, values = {"n": ("x", "size"), "s1": ("x", "sum")}, pd.DataFrame({"x": obs["x"].to_numpy()[has]})
    out = group_by_codes(keys, values, agg).astype({"n": np.int64})
    out["cell"] = cell_rows(cell_index, out)
    return out.reset_index(drop=True)


def _timed_misses(S: dict, e: pd.DataFrame) -> pd.DataFrame:
    """Per (m, k, clock, u): timed decisions ``n`` and logged misses ``miss`` (early, late, silent or
    fallback): what a row with uninformative latencies uses for its P(miss)."""
    sel = S["timed"]
    clock_code, clocks = pd.factorize(e["clock"], sort=True)  # per episode; the clock names in sorted order
    keys = {"m": S["cell"][0][sel], "k": S["cell"][1][sel], "clock": clock_code[S["ep"][sel]], "u": S["cell"][2][sel]}
    out = group_by_codes(keys, pd.DataFrame({"miss": S["miss"][sel].astype(np.int64)}),
                         {"n": ("miss", "size"), "miss": ("miss", "sum")})
    out["clock"] = np.asarray(clocks, dtype=object)[out["clock"].to_numpy()]
    return out


def _log_ref(S: dict, obs: pd.DataFrame, cens_sel, units) -> pd.DataFrame:
    ref = []
    for u in range(len(units)):
        x = obs.loc[obs["u"] == u, "x"].to_numpy()
        c = np.log(S["close"][cens_sel & (S["cell"][2] == u)])
        both = np.concatenate([x, c])
        center = float(np.median(both)) if len(both) else 0.0
        scale = float(np.std(x)) if len(x) > 1 else 1.0
        ref.append((units[u], center, max(scale, 0.05)))
    return pd.DataFrame(ref, columns=["unit", "center", "scale"])


def _success_tables(e: pd.DataFrame, by, clock_effects: bool = False):
    """(unlabelled, cap_labelled, timing_labelled, not-capable labelled (n, y)); ``clock_effects``:
    the first two also by ``t`` (1 under a timed clock)."""
    t = ["t"] if clock_effects else []
    # the columns the tables read, before the filtered copies below (not every episode column, text included)
    cols = e[["m", "k", "i", "x", "M", "y", "labelled", "capable"]].copy()
    if clock_effects:
        cols["t"] = e["timed"].to_numpy(np.int64)
    # the survival reading (episodes that say how they ended): the episode's own success term, labels aside
    # (a labelled wrong action the episode survived was not fatal: the label says nothing of capability
    # there); an episode its failure ended goes to ``_truncated_table`` instead
    survival = e["survival"].to_numpy(bool) if "survival" in e else np.zeros(len(e), bool)
    cut = e["ended_failure"].to_numpy(bool) if "ended_failure" in e else np.zeros(len(e), bool)
    cols["labelled"] = cols["labelled"].to_numpy(bool) & ~survival
    e = cols[~cut]
    unl = e[~e["labelled"]]
    unlabelled = by(unl, ["m", "k", "i", "x", "M"] + t).agg(n=("y", "size"), y=("y", "sum"))
    lab = e[e["labelled"]]
    cap_labelled = by(lab, ["m", "k", "i", "x"] + t).agg(n=("y", "size"), capable=("capable", "sum"))
    capable = lab[lab["capable"]]
    timing_labelled = by(capable, ["k", "M"]).agg(n=("y", "size"), y=("y", "sum"))
    tables = [f.drop(columns="_row", errors="ignore") for f in (unlabelled, cap_labelled, timing_labelled)]
    for f in tables:
        for c in f.columns:
            if c != "x":
                f[c] = f[c].astype(np.int64)
    notcap = lab[~lab["capable"]]
    return (*tables, (int(len(notcap)), int(notcap["y"].sum())))


def _truncated_table(e: pd.DataFrame, by, clock_effects: bool = False) -> pd.DataFrame:
    """Episodes that their failure ended (``ended_failure``), by (model, task_type, item, x, xp, hp, Mp, ml,
    tl[, t]): ``n``. x: the centred log length, xp/hp: that of the decisions before the last
    (:func:`_prefix_length`), Mp: the misses before the last, ml: the last decision missed, tl: the last
    decision was labelled content-right and missed (a death by timing, seen directly)."""
    cut = e[e["ended_failure"].to_numpy(bool)] if "ended_failure" in e else e.iloc[:0]
    f = pd.DataFrame({"m": cut["m"], "k": cut["k"], "i": cut["i"], "x": cut["x"], "xp": cut["xp"], "hp": cut["hp"],
                      "Mp": cut["M"] - cut["miss_last"], "ml": cut["miss_last"],
                      "tl": cut["miss_last"] * cut["right_last"], "y": 0})
    t = []
    if clock_effects:
        f["t"] = cut["timed"].to_numpy(np.int64)
        t = ["t"]
    out = by(f, ["m", "k", "i", "x", "xp", "hp", "Mp", "ml", "tl"] + t).agg(n=("y", "size"))
    out = out.drop(columns="_row", errors="ignore")
    for c in out.columns:
        if c not in ("x", "xp"):
            out[c] = out[c].astype(np.int64)
    return out


def _window_tables(S: dict):
    """Distinct windows of timed decisions and their counts per episode (no window = never misses)."""
    wsel = S["timed"] & ~np.isnan(S["close"])
    # each decision's window as one integer code, (u, open, close) in sorted order (factorised floats:
    # exact values, as a drop_duplicates / merge of the float columns matched them, without their frames)
    open_code, opens = pd.factorize(np.nan_to_num(S["open"][wsel], nan=0.0), sort=True)
    close_code, closes = pd.factorize(S["close"][wsel], sort=True)
    # (at most units × decisions² codes: far from overflowing)
    code, widths = combined_code([S["cell"][2][wsel], open_code, close_code])
    wid, window_codes = pd.factorize(code, sort=True)
    del code
    u, o, c = split_code(np.asarray(window_codes, dtype=np.int64), widths)
    windows = pd.DataFrame({"u": u, "open": np.asarray(opens, dtype=float)[o], "close": np.asarray(closes, dtype=float)[c],
                            "wid": np.arange(len(u))})
    counts = group_by_codes({"ep": S["ep"][wsel], "wid": wid}, pd.DataFrame({"n": np.zeros(len(wid), dtype=np.int8)}),
                            {"count": ("n", "size")})
    return windows, counts


def _item_types(e: pd.DataFrame, n_items: int) -> np.ndarray:
    """Each item's task type (its most frequent one)."""
    if not n_items:
        return np.zeros(0, dtype=np.int64)
    has_item = e.loc[e["i"].to_numpy() >= 0, ["i", "k"]]  # two columns, not a copy of every episode column
    return (has_item.groupby("i")["k"].agg(lambda s: s.value_counts().index[0]).reindex(range(n_items))
            .to_numpy(np.int64))


def aggregate(episodes: pd.DataFrame, steps: pd.DataFrame, per_row: bool = False,
              clock_effects: bool = False, latency_by_correctness: bool = False, read_ended: bool = True) -> ModelData:
    """Reduce the tidy frames to sufficient statistics. Raises ``ValueError`` on unusable input.

    ``per_row=True`` skips the reduction: one table row per decision / episode (``n = 1``), the same
    likelihood written term by term — the baseline that ``benchmarks/bench_fit.py`` times against.
    ``clock_effects``: the tables a fit with clock effects needs (module docstring);
    ``latency_by_correctness``: the latency table also sums each cell's content-wrong decisions
    (:func:`correctness_sums`); ``read_ended``: the survival reading of the episode field ``ended``
    (``_episode_ends``; False: every log is the whole episode)."""
    by = _grouper(per_row)
    _check_episodes(episodes)
    ep = episodes.reset_index(drop=True)
    e, lv = _episode_frame(ep)
    S = _step_arrays(ep, steps, e)
    labels = (S["wrong"], S["unl"]) if latency_by_correctness else None  # _episode_labels drops them from S
    _episode_ends(e, ep if read_ended else ep.drop(columns="ended", errors="ignore"), S)
    type_log_g, type_offset = _episode_labels(e, S, len(lv["task_types"]))
    _prefix_length(e, type_log_g)
    obs = _log_latencies(S, len(lv["units"]), timed_only=clock_effects)
    latency, censored, exposure, cell_index, cens_sel, cens_log_close = _latency_tables(S, obs, by, per_row)
    if labels is not None:
        sel = S["acted"] & (S["timed"] if clock_effects else True)  # the decisions of ``obs``, in order
        latency = correctness_sums(latency, obs, labels[0][sel], labels[1][sel], cell_index)
    acted_sel = S["acted"] & (S["timed"] if clock_effects else True)  # the decisions of ``obs``, in order
    n_acted, mean, within = _episode_means(S, obs, len(e), acted_sel)
    silent_ep = np.zeros(len(e), dtype=bool)
    silent_ep[S["ep"][cens_sel]] = True
    cell = _episode_cells(e, cell_index, (n_acted > 0) | silent_ep)
    latency_episodes = episode_latency_table(n_acted, mean, within, cell)
    silent_episodes = silent_episode_table(S["ep"][cens_sel], cens_log_close, np.ones(int(cens_sel.sum())),
                                           n_acted, mean, cell)
    log_ref = _log_ref(S, obs, cens_sel, lv["units"])
    # order statistics of log-latency (observed decisions only; censored ones stay separate, exact): per
    # cell, at indices fixed by its size, so every family is judged on the same statistics, tails included
    edges, binned, edge_weight = _bin_latencies(obs, latency, log_ref, cell_index)
    unlabelled, cap_labelled, timing_labelled, notcap = _success_tables(e, by, clock_effects)
    truncated = _truncated_table(e, by, clock_effects)
    windows, episode_windows = _window_tables(S)
    e["x_nat"], natural_windows, e["no_donor"] = natural_lengths(e, episode_windows)
    e["model"] = ep["model"].astype(str).to_numpy()
    e["task_type"] = ep["task_type"].astype(str).to_numpy()
    return ModelData(lv["models"], lv["task_types"], lv["units"], lv["items"], latency, censored, exposure, binned,
                     edges, unlabelled, cap_labelled, timing_labelled, notcap, e, windows, episode_windows,
                     log_ref, _item_types(e, len(lv["items"])), type_log_g, type_offset, _timed_misses(S, e),
                     latency_item_table(obs, cell_index), clock_effects, edge_weight, latency_by_correctness,
                     truncated, natural_windows, latency_episodes, silent_episodes)
