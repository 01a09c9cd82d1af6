"""Harmony across task types: is a model's aggregate one uniform competence or one strong/weak type?

``harmony = 1 − normalised Gini`` of a model's per-task-type values ``v_1..v_K``
(``docs/user-guide/measure.md``): ``G = Σ_i Σ_j |v_i − v_j| / (2 K² mean(v))`` and
``harmony = 1 − G · K / (K − 1)``, in [0, 1]: 1 when every task type has the same value, 0 when one type holds
all of it. Computed per posterior draw (so it has a posterior interval) for ``p_capable`` and ``p_timely``,
per model × timed clock; a model whose timing failures sit in one task type has low ``harmony_timely``, a
model slow everywhere a high one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: the columns of the harmony table: per model × timed clock, each harmony's mean and interval
HARMONY_COLUMNS = ["model", "clock", "n_task_types", "harmony_capable", "harmony_capable_lo", "harmony_capable_hi",
                   "harmony_timely", "harmony_timely_lo", "harmony_timely_hi"]


def gini_harmony(values: np.ndarray) -> np.ndarray:
    """1 − normalised Gini along the last axis (K ≥ 2 non-negative values); 1 where all are 0."""
    v = np.asarray(values, dtype=float)
    K = v.shape[-1]
    if K < 2:
        return np.full(v.shape[:-1], np.nan)
    diff = np.abs(v[..., :, None] - v[..., None, :]).sum(axis=(-1, -2))
    mean = v.mean(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        g = np.where(mean > 0, diff / (2 * K**2 * np.where(mean > 0, mean, 1.0)), 0.0)
    return 1.0 - g * K / (K - 1)


def _per_draw(long: pd.DataFrame) -> dict[tuple[str, str], np.ndarray]:
    """(model, clock) → (draws, task types) matrix of a long draws frame."""
    out = {}
    for (m, c), g in long.groupby(["model", "clock"], sort=False):
        wide = g.pivot_table(index="draw", columns="task_type", values="value", sort=True)
        out[(m, c)] = wide.to_numpy()
    return out


def harmony_table(capable: pd.DataFrame, timely: pd.DataFrame, ci_prob: float = 0.95) -> pd.DataFrame:
    """From long draw frames (model, task_type, clock, draw, value) of p_capable and p_timely: one
    row per model × timed clock with :data:`HARMONY_COLUMNS` (mean and equal-tailed interval)."""
    return _harmony_rows(_per_draw(capable), _per_draw(timely), ci_prob)


def _harmony_rows(cap: dict, tim: dict, ci_prob: float) -> pd.DataFrame:
    a = (1 - ci_prob) / 2
    rows = []
    for key, t in tim.items():
        c = cap[key]
        row = [key[0], key[1], t.shape[1]]
        for x in (c, t):
            h = gini_harmony(x)
            row += [float(np.mean(h)), *map(float, np.quantile(h, [a, 1 - a]))] if np.isfinite(h).all() \
                else [np.nan] * 3
        rows.append(row)
    return pd.DataFrame(rows, columns=HARMONY_COLUMNS)


def harmony(res, ci_prob: float | None = None) -> pd.DataFrame:
    """Per model × timed clock of a :class:`~rtanalysis.model.result.FitResult`: harmony of p_capable
    and of p_timely across task types, with posterior intervals (:data:`HARMONY_COLUMNS`). From the fit's
    draws as arrays (what :func:`harmony_table` computes from long frames, without building and pivoting
    rows × draws rows)."""
    ci_prob = res.ci_prob if ci_prob is None else ci_prob
    rows = res._rows()
    draws = {q: res._quantity_draws(q) for q in ("p_capable", "p_timely")}
    at = np.flatnonzero((rows["clock"] != "paused").to_numpy())
    timed = rows.iloc[at]
    mats = {q: {} for q in draws}
    for key, idx in timed.groupby(["model", "clock"], sort=False).indices.items():
        pos = at[idx][np.argsort(timed["task_type"].to_numpy()[idx], kind="stable")]  # task types in order
        for q, x in draws.items():
            mats[q][key] = x[pos].T
    return _harmony_rows(mats["p_capable"], mats["p_timely"], ci_prob)
