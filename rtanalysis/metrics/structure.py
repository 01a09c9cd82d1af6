"""How the logs are shaped: do failed episodes stop early, do latencies cluster within episodes?

Two properties of real realtime logs that a model of independent decisions over a given episode
length does not expect, each measured from the logs alone, per group:

* **Logs that end at the fatal decision.** Without truncation an episode with more decisions has
  more chances to fail, so failed episodes are as long as or longer than successful ones; where the
  log stops at the fatal decision, they are shorter. ``failed_shorter`` is P(a failed episode logged
  fewer decisions than a successful one of its group), ties counted half (the Mann–Whitney
  probability, 0.5 = no difference), with a Hanley–McNeil (1982) normal interval. An episode that
  says so itself (``ended`` = ``failure``) is counted in ``n_ended_failure``.
* **Latencies that cluster within episodes** (a hard state or a hard item slows the agent for many
  decisions in a row): ``latency_icc`` is the one-way intraclass correlation of log-latency between
  the episodes of a group, ICC(1) with its F-distribution interval (Shrout & Fleiss 1979), over acted
  decisions with a positive latency. 0 = decisions of one episode are no more alike than any two.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ._groups import episode_row, group_counts, make_groups, resolve_by, safe_div, steps_of
from .intervals import DEFAULT_CI_PROB, check_ci_prob

#: the steps columns :func:`episode_structure` reads
STRUCTURE_STEP_COLUMNS = ("run_id", "episode_id", "latency", "outcome")


def episode_structure(episodes: pd.DataFrame, steps: pd.DataFrame, by=None,
                      ci_prob: float = DEFAULT_CI_PROB) -> pd.DataFrame:
    """Per group: how failed episodes' lengths compare with successful ones', and how alike the
    latencies of one episode are (module docstring).

    Columns: keys, ``n_episodes``, ``n_failure``, ``steps_success`` / ``steps_failure`` (mean logged
    decisions), ``failed_shorter`` (``_lo``/``_hi``; NaN without both successes and failures),
    ``n_ended_failure`` (episodes logged with ``ended`` = failure; 0 where the field is absent),
    ``latency_icc`` (``_lo``/``_hi``; NaN with fewer than two episodes holding two or more latencies)
    and ``n_latency_episodes`` (the episodes it is computed over).
    """
    check_ci_prob(ci_prob)
    steps = steps_of(steps, episodes, STRUCTURE_STEP_COLUMNS)
    groups = make_groups(episodes, resolve_by(by, episodes))
    gid = groups.episode_gid
    n_steps = episodes["n_steps"].to_numpy(float)
    success = episodes["success"].to_numpy(bool)
    failure = ~success
    n_ep = group_counts(gid, groups.n)
    n_fail = group_counts(gid, groups.n, failure)
    ended = (episodes["ended"].astype(object).to_numpy() == "failure") if "ended" in episodes else np.zeros(len(gid), bool)
    auc = np.full((groups.n, 3), np.nan)
    order = np.argsort(gid, kind="stable")  # each group's episodes as one slice
    bounds = np.searchsorted(gid[order], np.arange(groups.n + 1))
    for g in range(groups.n):
        e = order[bounds[g]:bounds[g + 1]]
        auc[g] = _failed_shorter(n_steps[e][failure[e]], n_steps[e][success[e]], ci_prob)
    icc = _latency_icc(steps, episodes, gid, groups.n, ci_prob)
    return groups.frame({
        "n_episodes": n_ep.astype(np.int64),
        "n_failure": n_fail.astype(np.int64),
        "steps_success": safe_div(group_counts(gid, groups.n, n_steps * success), n_ep - n_fail),
        "steps_failure": safe_div(group_counts(gid, groups.n, n_steps * failure), n_fail),
        "failed_shorter": auc[:, 0], "failed_shorter_lo": auc[:, 1], "failed_shorter_hi": auc[:, 2],
        "n_ended_failure": group_counts(gid, groups.n, ended).astype(np.int64),
        "latency_icc": icc[:, 0], "latency_icc_lo": icc[:, 1], "latency_icc_hi": icc[:, 2],
        "n_latency_episodes": icc[:, 3].astype(np.int64),
    })


def _failed_shorter(fail: np.ndarray, ok: np.ndarray, ci_prob: float) -> tuple[float, float, float]:
    """P(fail < ok) + ½ P(tie) with a Hanley–McNeil normal interval, clipped to [0, 1]."""
    n1, n2 = len(fail), len(ok)
    if not n1 or not n2:
        return np.nan, np.nan, np.nan
    # ranks of the pooled lengths (ties averaged): U of the successes counts the pairs they exceed
    ranks = stats.rankdata(np.r_[fail, ok])
    a = (ranks[n1:].sum() - n2 * (n2 + 1) / 2) / (n1 * n2)
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    var = (a * (1 - a) + (n2 - 1) * (q1 - a * a) + (n1 - 1) * (q2 - a * a)) / (n1 * n2)
    z = stats.norm.ppf(0.5 + ci_prob / 2)
    half = z * np.sqrt(max(var, 0.0))
    return a, max(a - half, 0.0), min(a + half, 1.0)


def _latency_icc(steps: pd.DataFrame, episodes: pd.DataFrame, gid: np.ndarray, n_groups: int,
                 ci_prob: float) -> np.ndarray:
    """(ICC(1), lo, hi, episodes used) per group of log-latency between episodes (module docstring)."""
    out = np.full((n_groups, 4), np.nan)
    out[:, 3] = 0
    if not len(steps):
        return out
    lat = steps["latency"].to_numpy(float)
    acted = np.isfinite(lat) & (lat > 0) & (steps["outcome"].astype(object).to_numpy() != "error")
    rows = episode_row(steps, episodes)[acted]
    x = np.log(lat[acted])
    n_e = np.bincount(rows, minlength=len(episodes)).astype(float)
    s1 = np.bincount(rows, weights=x, minlength=len(episodes))
    s2 = np.bincount(rows, weights=x * x, minlength=len(episodes))
    use = n_e >= 2  # an episode with one latency says nothing about likeness within episodes
    g = gid[use]

    def per_group(w):
        return np.bincount(g, weights=w, minlength=n_groups)

    n, t1, t2 = n_e[use], s1[use], s2[use]
    k = per_group(np.ones(len(n)))
    total, sum1, within = per_group(n), per_group(t1), per_group(t1**2 / n)
    ssb = within - np.divide(sum1**2, total, out=np.zeros(n_groups), where=total > 0)
    ssw = per_group(t2) - within
    ok = (k >= 2) & (total - k >= 1)
    df1, df2 = np.where(ok, k - 1, 1), np.where(ok, total - k, 1)
    msb, msw = ssb / df1, ssw / df2
    ok &= msw > 0
    # the group size, unbalanced (Shrout & Fleiss's n0)
    n0 = (total - np.divide(per_group(n**2), total, out=np.zeros(n_groups), where=total > 0)) / df1
    f = np.divide(msb, msw, out=np.ones(n_groups), where=ok)
    alpha = 1 - ci_prob
    f_lo = f / stats.f.ppf(1 - alpha / 2, df1, df2)
    f_hi = f * stats.f.ppf(1 - alpha / 2, df2, df1)
    with np.errstate(divide="ignore", invalid="ignore"):  # groups that are not ``ok`` become NaN
        for col, x in enumerate((f, f_lo, f_hi)):
            out[:, col] = np.where(ok, (x - 1) / (x + n0 - 1), np.nan)
    out[:, 3] = k
    return out
