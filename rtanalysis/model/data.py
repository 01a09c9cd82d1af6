"""Sufficient statistics: the loader's ``episodes``/``steps`` frames reduced to the small tables the
model's likelihood needs. Cost of the fit then grows with the number of cells, not of episodes.

Tables (all integer-indexed into :attr:`ModelData.models`, ``task_types``, ``units``, ``items``):

* ``latency``: one row per (model, task_type, time_unit) cell with ``n``, ``s1 = Σ log L``,
  ``s2 = Σ (log L)²`` over decisions with an action (exact for the Normal on log-latency).
* ``censored``: silent decisions under a timed clock whose window close is known, by distinct
  (cell, close): ``count``. Each adds ``log(1 − Φ((log close − μ)/σ))``.
* ``exposure``: per model, acted decisions under a timed clock with a known window close (each
  adds ``log(1 − π_m)``, π_m = P(silent whatever the latency)).
* ``binned``: counts of log-latency per cell in bins cut at the cell's quantiles (for the Student-t
  variant and the LOO choice between latency families).
* ``unlabelled``: episodes without complete labels by (model, task_type, item, x, M): ``n``, ``y``
  (x = the episode's log number of decisions, centred within its task type).
* ``cap_labelled``: labelled episodes by (model, task_type, item, x): ``n``, ``capable``.
* ``timing_labelled``: labelled *capable* episodes by (task_type, M): ``n``, ``y``.
* ``episodes``: one row per episode (row key, item, M, labelled, ...), for derived quantities.
* ``windows``/``episode_windows``: distinct decision windows and their counts per episode.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

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


def _bin_latencies(obs: pd.DataFrame, latency: pd.DataFrame, log_ref: pd.DataFrame, cell_index: dict):
    """(edges (rows of ``latency``, 13), counts frame (rows, 14)): each cell's observed log-latencies
    in bins cut at that cell's quantiles :data:`BIN_QUANTILES`; a cell without observations gets
    its unit's reference centre ± multiples of its scale. Counts sit on the cell's (last) row."""
    ref_z = np.array([-2.3, -2.0, -1.6, -1.3, -0.8, -0.4, 0.0, 0.4, 0.8, 1.3, 1.6, 2.0, 2.3])
    ref = log_ref[["center", "scale"]].to_numpy()
    edges = ref[latency["u"].to_numpy(), :1] + ref_z[None, :] * ref[latency["u"].to_numpy(), 1:]
    counts = np.zeros((len(latency), len(BIN_QUANTILES) + 1), dtype=np.int64)
    if len(obs):
        row = np.array([cell_index[tuple(r)] for r in obs[["m", "k", "u"]].to_numpy()]) if len(latency) else None
        x = obs["x"].to_numpy()
        order = np.argsort(row, kind="stable")
        bounds = np.flatnonzero(np.diff(row[order])) + 1
        for idx in np.split(order, bounds):
            r = row[idx[0]]
            e = np.quantile(x[idx], BIN_QUANTILES)
            same = latency[["m", "k", "u"]].to_numpy() == latency.loc[r, ["m", "k", "u"]].to_numpy()
            edges[same.all(axis=1)] = e
            counts[r] = np.bincount(np.searchsorted(e, x[idx]), minlength=counts.shape[1])
    return edges, pd.DataFrame(counts, columns=[f"b{j}" for j in range(counts.shape[1])])


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


def aggregate(episodes: pd.DataFrame, steps: pd.DataFrame, per_row: bool = False) -> ModelData:
    """Reduce the tidy frames to sufficient statistics. Raises ``ValueError`` on unusable input.

    ``per_row=True`` skips the reduction: one table row per decision / episode (``n = 1``), the same
    likelihood written term by term — the baseline that ``benchmarks/bench_fit.py`` times against."""
    by = (lambda f, keys: f.assign(_row=np.arange(len(f))).groupby(keys + ["_row"], as_index=False)) if per_row \
        else (lambda f, keys: f.groupby(keys, as_index=False))
    if len(episodes) == 0:
        raise ValueError("no episodes to fit: the data has 0 accepted episodes")
    for col in ("model", "task_type", "clock", "time_unit", "success"):
        if col not in episodes.columns:
            raise ValueError(f"episodes frame lacks column {col!r} (expected the loader's schema)")
    ep = episodes.reset_index(drop=True)
    models = sorted(ep["model"].astype(str).unique())
    task_types = sorted(ep["task_type"].astype(str).unique())
    units = sorted(ep["time_unit"].astype(str).unique())
    task = ep["task"].astype(object).where(ep["task"].notna(), None)
    items = sorted({t for t in task if t is not None})

    e = pd.DataFrame({
        "m": _codes(ep["model"], models), "k": _codes(ep["task_type"], task_types),
        "u": _codes(ep["time_unit"], units),
        "i": _codes(task, items),  # -1: no task id, no item effect
        "clock": ep["clock"].astype(str).to_numpy(), "y": ep["success"].to_numpy(bool).astype(np.int64),
    })
    e["timed"] = e["clock"].isin(TIMED_CLOCKS)
    key = pd.MultiIndex.from_frame(ep[["run_id", "episode_id"]].astype(str))

    st = steps.reset_index(drop=True)
    if len(st):
        ep_of_step = key.get_indexer(pd.MultiIndex.from_frame(st[["run_id", "episode_id"]].astype(str)))
        if (ep_of_step < 0).any():
            bad = st.loc[ep_of_step < 0, ["run_id", "episode_id"]].iloc[0].tolist()
            raise ValueError(f"steps frame has a decision of an episode not in episodes: {bad}")
    else:
        ep_of_step = np.zeros(0, dtype=np.int64)
    timed_step = e["timed"].to_numpy()[ep_of_step]
    lat = st["latency"].to_numpy(float) if len(st) else np.zeros(0)
    close = st["window_close"].to_numpy(float) if len(st) else np.zeros(0)
    opn = st["window_open"].to_numpy(float) if len(st) else np.zeros(0)
    acted = ~np.isnan(lat)

    # --- misses per episode (timing miss whatever the content; under paused nothing misses)
    if len(st):
        miss = (st["too_early"].fillna(False).to_numpy(bool) | st["too_late"].fillna(False).to_numpy(bool)
                | st["no_action"].to_numpy(bool)) & timed_step
        corr = st["correct_at_obs"]
        unl_step = (corr.isna().to_numpy() & acted).astype(float)
        wrong_step = (~corr.fillna(True).to_numpy(bool) & acted).astype(float)
    else:
        miss = unl_step = wrong_step = np.zeros(0)
    n_ep = len(e)
    e["M"] = np.bincount(ep_of_step, weights=miss.astype(float), minlength=n_ep).astype(np.int64)
    n_acted = np.bincount(ep_of_step, weights=acted.astype(float), minlength=n_ep)
    e["labelled"] = (n_acted > 0) & (np.bincount(ep_of_step, weights=unl_step, minlength=n_ep) == 0)
    e["capable"] = e["labelled"] & (np.bincount(ep_of_step, weights=wrong_step, minlength=n_ep) == 0)
    e["x"], type_log_g = _length_covariate(np.bincount(ep_of_step, minlength=n_ep), e["k"].to_numpy(),
                                           len(task_types))
    type_offset = -np.log(np.expm1(np.log(2.0) / np.exp(type_log_g)))  # logit(0.5 ** (1 / g))

    # --- latency sufficient statistics per (model, task_type, unit) cell
    cell_of_step = (e["m"].to_numpy()[ep_of_step], e["k"].to_numpy()[ep_of_step], e["u"].to_numpy()[ep_of_step])
    loglat = np.full(len(st), np.nan)
    for u in range(len(units)):
        sel = acted & (cell_of_step[2] == u)
        pos = lat[sel][lat[sel] > 0]
        # zero latencies are floored at half the smallest positive one of their unit (log 0 is -inf)
        floor = pos.min() / 2 if len(pos) else 1e-3
        loglat[sel] = np.log(np.maximum(lat[sel], floor))
    lat_frame = pd.DataFrame({"m": cell_of_step[0], "k": cell_of_step[1], "u": cell_of_step[2], "x": loglat})
    obs = lat_frame[acted]
    latency = (by(obs.assign(x2=obs["x"] ** 2), ["m", "k", "u"])
               .agg(n=("x", "size"), s1=("x", "sum"), s2=("x2", "sum")).drop(columns="_row", errors="ignore"))
    cens_sel = ~acted & timed_step & (close > 0) & ~np.isnan(close)
    # A silent decision tells us L > its censor point. That point is the window close, raised to the
    # largest latency any action of the same cell landed with under a timed clock: when late
    # actions are logged, the harness evidently waited at least that long, so silence is not merely
    # "L > close" (what is left of it goes to the per-model silence probability π_m).
    lat_cell = pd.DataFrame({"m": cell_of_step[0], "k": cell_of_step[1], "u": cell_of_step[2],
                             "lat": np.where(acted & timed_step, lat, np.nan)})
    cell_max = lat_cell.groupby(["m", "k", "u"])["lat"].transform("max").to_numpy()
    censor_at = np.fmax(close, cell_max)
    cens = pd.DataFrame({"m": cell_of_step[0][cens_sel], "k": cell_of_step[1][cens_sel],
                         "u": cell_of_step[2][cens_sel], "log_close": np.log(censor_at[cens_sel])})
    censored = (by(cens, ["m", "k", "u", "log_close"]).size().rename(columns={"size": "count"})
                .drop(columns="_row", errors="ignore"))
    exp_sel = acted & timed_step & (close > 0) & ~np.isnan(close)
    exposure = (by(pd.DataFrame({"m": cell_of_step[0][exp_sel]}), ["m"]).size()
                .rename(columns={"size": "n_acted"}).drop(columns="_row", errors="ignore"))
    # every cell that has observations or censored decisions
    cells = pd.concat([latency[["m", "k", "u"]], censored[["m", "k", "u"]]]).drop_duplicates()
    latency = cells.merge(latency, how="left", on=["m", "k", "u"]).fillna({"n": 0, "s1": 0.0, "s2": 0.0})
    latency = latency.sort_values(["m", "k", "u"]).reset_index(drop=True).astype({"n": np.int64})
    cell_index = {tuple(r): j for j, r in enumerate(latency[["m", "k", "u"]].to_numpy())}
    censored["cell"] = [cell_index[(m, k, u)] for m, k, u in censored[["m", "k", "u"]].to_numpy()]

    ref = []
    for u in range(len(units)):
        x = obs.loc[obs["u"] == u, "x"].to_numpy()
        c = np.log(close[cens_sel & (cell_of_step[2] == u)])
        both = np.concatenate([x, c])
        center = float(np.median(both)) if len(both) else 0.0
        scale = float(np.std(x)) if len(x) > 1 else 1.0
        ref.append((units[u], center, max(scale, 0.05)))
    log_ref = pd.DataFrame(ref, columns=["unit", "center", "scale"])

    # --- binned log-latency (observed decisions only; censored ones stay separate, exact): per
    # cell, edges at the cell's own quantiles, so every family is judged on the same bins, tails included
    edges, binned = _bin_latencies(obs, latency, log_ref, cell_index)

    # --- success: unlabelled marginal groups and labelled capable/timing groups
    unl = e[~e["labelled"]]
    unlabelled = by(unl, ["m", "k", "i", "x", "M"]).agg(n=("y", "size"), y=("y", "sum"))
    lab = e[e["labelled"]]
    cap_labelled = by(lab, ["m", "k", "i", "x"]).agg(n=("y", "size"), capable=("capable", "sum"))
    capable = lab[lab["capable"]]
    timing_labelled = by(capable, ["k", "M"]).agg(n=("y", "size"), y=("y", "sum"))
    unlabelled, cap_labelled, timing_labelled = (f.drop(columns="_row", errors="ignore")
                                                 for f in (unlabelled, cap_labelled, timing_labelled))
    notcap = lab[~lab["capable"]]
    for f in (unlabelled, cap_labelled, timing_labelled):
        for c in f.columns:
            if c != "x":
                f[c] = f[c].astype(np.int64)

    # --- windows of timed decisions, for the derived p_timely (no window = never misses)
    wsel = timed_step & ~np.isnan(close)
    w = pd.DataFrame({"ep": ep_of_step[wsel], "u": cell_of_step[2][wsel],
                      "open": np.nan_to_num(opn[wsel], nan=0.0), "close": close[wsel]})
    windows = w[["u", "open", "close"]].drop_duplicates().sort_values(["u", "open", "close"]).reset_index(drop=True)
    windows["wid"] = np.arange(len(windows))
    w = w.merge(windows, on=["u", "open", "close"])
    episode_windows = w.groupby(["ep", "wid"], as_index=False).size().rename(columns={"size": "count"})

    e["model"] = ep["model"].astype(str).to_numpy()
    e["task_type"] = ep["task_type"].astype(str).to_numpy()
    has_item = e[e["i"] >= 0]
    item_type = (has_item.groupby("i")["k"].agg(lambda s: s.value_counts().index[0]).reindex(range(len(items)))
                 .to_numpy(np.int64) if len(items) else np.zeros(0, dtype=np.int64))
    return ModelData(models, task_types, units, items, latency, censored, exposure, binned, edges, unlabelled,
                     cap_labelled, timing_labelled, (int(len(notcap)), int(notcap["y"].sum())), e, windows,
                     episode_windows, log_ref, item_type, type_log_g, type_offset)
