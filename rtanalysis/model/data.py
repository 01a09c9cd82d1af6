"""Sufficient statistics: the loader's ``episodes``/``steps`` frames reduced to the small tables the
model's likelihood needs. Cost of the fit then grows with the number of cells, not of episodes.

Tables (all integer-indexed into :attr:`ModelData.models`, ``task_types``, ``units``, ``items``):

* ``latency``: one row per (model, task_type, time_unit) cell with ``n``, ``s1 = Σ log L``,
  ``s2 = Σ (log L)²`` over decisions with an action (exact for the Normal on log-latency).
* ``censored``: silent decisions under a timed clock whose window close is known, by distinct
  (cell, close): ``count``. Each adds ``log(1 − Φ((log close − μ)/σ))``.
* ``exposure``: per model, acted decisions under a timed clock with a known window close (each
  adds ``log(1 − π_m)``, π_m = P(silent whatever the latency)).
* ``binned``: counts of log-latency per cell in fixed bins (for the Student-t variant and LOO).
* ``unlabelled``: episodes without complete labels by (model, task_type, item, M): ``n``, ``y``.
* ``cap_labelled``: labelled episodes by (model, task_type, item): ``n``, ``capable``.
* ``timing_labelled``: labelled *capable* episodes by (task_type, M): ``n``, ``y``.
* ``episodes``: one row per episode (row key, item, M, labelled, ...), for derived quantities.
* ``windows``/``episode_windows``: distinct decision windows and their counts per episode.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..schema import TIMED_CLOCKS

#: edges of the log-latency bins, in units of the per-unit pooled SD around the pooled median
BIN_EDGES_Z = np.array([-2.0, -1.4, -1.0, -0.6, -0.3, 0.0, 0.3, 0.6, 1.0, 1.4, 2.0, 2.7])


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
    bin_edges: np.ndarray  # (n_units, n_edges) in log-latency
    unlabelled: pd.DataFrame
    cap_labelled: pd.DataFrame
    timing_labelled: pd.DataFrame
    not_capable_labelled: tuple[int, int]  # (n, y) labelled not-capable episodes
    episodes: pd.DataFrame
    windows: pd.DataFrame
    episode_windows: pd.DataFrame
    log_ref: pd.DataFrame  # per unit: center, scale of log-latency (centring, not data-fitted priors)

    @property
    def dims(self) -> dict[str, int]:
        return {"model": len(self.models), "task_type": len(self.task_types), "unit": len(self.units),
                "item": len(self.items), "lat_cell": len(self.latency), "cens": len(self.censored)}

    def summary(self) -> dict:
        return {**self.dims, "episodes": int(len(self.episodes)),
                "unlabelled_groups": int(len(self.unlabelled)), "labelled_groups": int(len(self.cap_labelled))}


def _codes(values: pd.Series, levels: list[str]) -> np.ndarray:
    return pd.Categorical(values.astype(object), categories=levels).codes.astype(np.int64)


def aggregate(episodes: pd.DataFrame, steps: pd.DataFrame) -> ModelData:
    """Reduce the tidy frames to sufficient statistics. Raises ``ValueError`` on unusable input."""
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
    latency = (obs.assign(x2=obs["x"] ** 2).groupby(["m", "k", "u"], as_index=False)
               .agg(n=("x", "size"), s1=("x", "sum"), s2=("x2", "sum")))
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
    censored = cens.groupby(["m", "k", "u", "log_close"], as_index=False).size().rename(columns={"size": "count"})
    exp_sel = acted & timed_step & (close > 0) & ~np.isnan(close)
    exposure = (pd.DataFrame({"m": cell_of_step[0][exp_sel]}).groupby("m", as_index=False).size()
                .rename(columns={"size": "n_acted"}))
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

    # --- binned log-latency (observed decisions only; censored ones stay separate, exact)
    edges = np.stack([r.center + BIN_EDGES_Z * r.scale for r in log_ref.itertuples()]) if len(units) else \
        np.zeros((0, len(BIN_EDGES_Z)))
    nb = len(BIN_EDGES_Z) + 1
    counts = np.zeros((len(latency), nb), dtype=np.int64)
    if len(obs):
        oc = np.array([cell_index[(m, k, u)] for m, k, u in obs[["m", "k", "u"]].to_numpy()])
        ob = np.array([np.searchsorted(edges[u], x) for u, x in zip(obs["u"].to_numpy(), obs["x"].to_numpy())])
        np.add.at(counts, (oc, ob), 1)
    binned = pd.DataFrame(counts, columns=[f"b{j}" for j in range(nb)])

    # --- success: unlabelled marginal groups and labelled capable/timing groups
    unl = e[~e["labelled"]]
    unlabelled = unl.groupby(["m", "k", "i", "M"], as_index=False).agg(n=("y", "size"), y=("y", "sum"))
    lab = e[e["labelled"]]
    cap_labelled = lab.groupby(["m", "k", "i"], as_index=False).agg(n=("y", "size"), capable=("capable", "sum"))
    capable = lab[lab["capable"]]
    timing_labelled = capable.groupby(["k", "M"], as_index=False).agg(n=("y", "size"), y=("y", "sum"))
    notcap = lab[~lab["capable"]]
    for f in (unlabelled, cap_labelled, timing_labelled):
        for c in f.columns:
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
    return ModelData(models, task_types, units, items, latency, censored, exposure, binned, edges, unlabelled,
                     cap_labelled, timing_labelled, (int(len(notcap)), int(notcap["y"].sum())), e, windows,
                     episode_windows, log_ref)
