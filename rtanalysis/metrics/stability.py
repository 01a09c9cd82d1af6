"""Trajectory stability: hazard of the first failed decision, fallback use, between-episode spread."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..io.keys import value_codes
from ._groups import episode_row, group_counts, make_groups, resolve_by, safe_div, steps_of
from .intervals import DEFAULT_CI_PROB, proportion_interval

#: decision outcomes that count as a failed decision
FAILED_OUTCOMES = ("wrong", "late", "early", "silent")
#: the steps columns :func:`failure_hazard` and :func:`fallback_summary` read
STABILITY_STEP_COLUMNS = ("run_id", "episode_id", "step", "outcome", "fallback")


def _first_step(steps: pd.DataFrame, rows: np.ndarray, mask: np.ndarray, n_episodes: int) -> np.ndarray:
    """Per episode, the smallest ``step`` where ``mask`` holds (a large sentinel when none)."""
    first = np.full(n_episodes, np.iinfo(np.int64).max, dtype=np.int64)
    if mask.any():
        np.minimum.at(first, rows[mask], steps["step"].to_numpy(np.int64)[mask])
    return first


def _risk_spans(episodes: pd.DataFrame, steps: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per episode: the last step it is at risk (-1 = never), the step of its first failure (-1 when
    it does not fail while at risk) and the step where an unknown outcome censors it (-1 = none)."""
    n_ep = len(episodes)
    rows = episode_row(steps, episodes) if len(steps) else np.zeros(0, dtype=np.int64)
    outcome = value_codes(steps["outcome"], (*FAILED_OUTCOMES, "unknown"))
    first_fail = _first_step(steps, rows, (outcome >= 0) & (outcome < len(FAILED_OUTCOMES)), n_ep)
    first_unknown = _first_step(steps, rows, outcome == len(FAILED_OUTCOMES), n_ep)
    # one past the last decision index (robust to a caller passing a filtered steps frame)
    n_steps = np.zeros(n_ep, dtype=np.int64)
    if len(rows):
        np.maximum.at(n_steps, rows, steps["step"].to_numpy(np.int64) + 1)
    fails = first_fail < np.minimum(first_unknown, n_steps)
    last = np.minimum(np.minimum(first_fail, first_unknown - 1), n_steps - 1)
    censored = (first_unknown < first_fail) & (first_unknown < n_steps)
    return last, np.where(fails, first_fail, -1), np.where(censored, first_unknown, -1)


def _count_at(gid: np.ndarray, step: np.ndarray, n_groups: int, width: int) -> np.ndarray:
    """groups × steps counts of episodes with ``step >= 0`` (one count at its group and step)."""
    out = np.zeros((n_groups, width), dtype=np.int64)
    keep = step >= 0
    np.add.at(out, (gid[keep], step[keep]), 1)
    return out


HAZARD_COLUMNS = ("step", "n_at_risk", "n_failed", "n_censored", "hazard", "hazard_lo", "hazard_hi", "survival")


def failure_hazard(episodes: pd.DataFrame, steps: pd.DataFrame, by=None, ci_prob: float = DEFAULT_CI_PROB,
                   method: str = "wilson") -> pd.DataFrame:
    """Discrete-time hazard of the first failed decision, by step index, per group.

    hazard(t) = P(first failure at step t | no failure before t) = ``n_failed / n_at_risk``.
    An episode is at risk at step t when it has a decision t, none of its decisions before t
    failed (outcome wrong / late / early / silent), and none before or at t is ``unknown``: an
    unknown outcome might have been a failure, so the episode is censored there (``n_censored``
    counts episodes leaving the risk set at t for that reason) instead of being assumed to
    survive. Episodes also leave the risk set when their decisions end. ``survival`` is the
    Kaplan–Meier product of (1 − hazard) up to and including t. Steps where no episode is at risk
    are not listed.

    Columns: keys, ``step``, ``n_at_risk``, ``n_failed``, ``n_censored``, ``hazard``,
    ``hazard_lo``, ``hazard_hi`` (``method`` interval with probability ``ci_prob``), ``survival``.
    """
    steps = steps_of(steps, episodes)
    groups = make_groups(episodes, resolve_by(by, episodes))
    last, fail_step, censor_step = _risk_spans(episodes, steps)
    horizon = int(last.max(initial=-1)) + 1
    if horizon == 0:
        return groups.repeat(np.zeros(0, dtype=np.int64), {k: [] for k in HAZARD_COLUMNS})
    gid = groups.episode_gid
    width = horizon + 1  # last step index horizon - 1, plus censoring at step "horizon"
    # at risk at t = episodes whose last at-risk step is >= t
    at_risk = _count_at(gid, last, groups.n, width)[:, ::-1].cumsum(axis=1)[:, ::-1][:, :horizon]
    failed = _count_at(gid, fail_step, groups.n, width)[:, :horizon]
    cens = _count_at(gid, censor_step, groups.n, width)[:, :horizon]
    hazard = safe_div(failed, at_risk)
    survival = np.cumprod(np.where(at_risk > 0, 1 - hazard, 1.0), axis=1)
    g_idx, t_idx = np.nonzero(at_risk > 0)
    lo, hi = proportion_interval(failed[g_idx, t_idx], at_risk[g_idx, t_idx], ci_prob, method)
    values = (t_idx.astype(np.int64), at_risk[g_idx, t_idx], failed[g_idx, t_idx], cens[g_idx, t_idx],
              hazard[g_idx, t_idx], lo, hi, survival[g_idx, t_idx])
    return groups.repeat(g_idx, dict(zip(HAZARD_COLUMNS, values)))


def fallback_summary(episodes: pd.DataFrame, steps: pd.DataFrame, by=None, ci_prob: float = DEFAULT_CI_PROB,
                     method: str = "wilson") -> pd.DataFrame:
    """Fallback (default action because inference did not finish) use per group.

    Only decisions with a ``fallback`` label count: ``fallback_rate`` = fallbacks / labelled
    decisions; ``fallback_per_episode`` = mean fallbacks over episodes with at least one labelled
    decision (``n_episodes_labelled``); ``share_episodes_with_fallback`` over the same episodes.
    NaN, not 0, when a group has no labelled decision.

    Columns: keys, ``n_episodes``, ``n_decisions``, ``n_labelled``, ``n_fallback``,
    ``fallback_rate``, ``fallback_rate_lo``/``_hi`` (``method`` interval over labelled decisions;
    decisions of one episode are not independent, so read it as a lower bound on the spread),
    ``n_episodes_labelled``, ``fallback_per_episode``,
    ``share_episodes_with_fallback``.
    """
    steps = steps_of(steps, episodes)
    cols = resolve_by(by, episodes)
    groups = make_groups(episodes, cols)
    n_ep = len(episodes)
    rows = episode_row(steps, episodes) if len(steps) else np.zeros(0, dtype=np.int64)
    fb = steps["fallback"]
    labelled = fb.notna().to_numpy(dtype=bool)
    is_fb = fb.fillna(False).to_numpy(dtype=bool)
    ep_labelled = np.bincount(rows, weights=labelled.astype(float), minlength=n_ep)[:n_ep] > 0
    ep_fb = np.bincount(rows, weights=is_fb.astype(float), minlength=n_ep)[:n_ep]
    gid = groups.episode_gid
    n_lab_ep = group_counts(gid, groups.n, ep_labelled)
    sgid = gid[rows] if len(rows) else rows
    n_labelled = group_counts(sgid, groups.n, labelled)
    n_fallback = group_counts(sgid, groups.n, is_fb)
    lo, hi = proportion_interval(n_fallback, n_labelled, ci_prob, method)
    return groups.frame({
        "n_episodes": group_counts(gid, groups.n),
        "n_decisions": group_counts(sgid, groups.n),
        "n_labelled": n_labelled.astype(np.int64),
        "n_fallback": n_fallback.astype(np.int64),
        "fallback_rate": safe_div(n_fallback, n_labelled),
        "fallback_rate_lo": lo,
        "fallback_rate_hi": hi,
        "n_episodes_labelled": n_lab_ep.astype(np.int64),
        "fallback_per_episode": safe_div(group_counts(gid, groups.n, np.where(ep_labelled, ep_fb, 0.0)), n_lab_ep),
        "share_episodes_with_fallback": safe_div(group_counts(gid, groups.n, ep_labelled & (ep_fb > 0)), n_lab_ep),
    })


def _mean_var(x: np.ndarray, gid: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-group count of non-missing ``x``, mean, and sample variance (ddof = 1; NaN below 2)."""
    keep = ~np.isnan(x)
    n = group_counts(gid[keep], n_groups)
    mean = safe_div(group_counts(gid[keep], n_groups, x[keep]), n)
    dev2 = (x[keep] - mean[gid[keep]]) ** 2
    return n, mean, safe_div(group_counts(gid[keep], n_groups, dev2), n - 1)


def score_variance(episodes: pd.DataFrame, by=None) -> pd.DataFrame:
    """Between-episode spread of ``score`` and of success per group (sample variance, ddof = 1).

    Columns: keys, ``n_episodes``, ``n_scored`` (episodes with a score), ``score_mean``,
    ``score_var``, ``score_sd``, ``success_rate``, ``success_var``. NaN variance below 2 episodes.
    """
    cols = resolve_by(by, episodes)
    groups = make_groups(episodes, cols)
    gid = groups.episode_gid
    n_s, m_s, v_s = _mean_var(episodes["score"].to_numpy(dtype=float), gid, groups.n)
    n_e, m_e, v_e = _mean_var(episodes["success"].to_numpy(dtype=float), gid, groups.n)
    return groups.frame({
        "n_episodes": n_e.astype(np.int64),
        "n_scored": n_s.astype(np.int64),
        "score_mean": m_s,
        "score_var": v_s,
        "score_sd": np.sqrt(v_s),
        "success_rate": m_e,
        "success_var": v_e,
    })
