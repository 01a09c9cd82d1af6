"""Reliability: decisions with no action because the call failed, apart from timeouts.

A missing action is a timing failure only when the agent ran out of time. A provider error or a
harness crash is neither timing nor capability (docs/reference/rtlog-v1.md, *Why no action came*),
so it is counted here, per group, and nowhere else.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._groups import episode_row, group_counts, make_groups, resolve_by, safe_div, steps_of
from .intervals import DEFAULT_CI_PROB, proportion_interval

#: the steps columns :func:`reliability_summary` reads
RELIABILITY_STEP_COLUMNS = ("run_id", "episode_id", "outcome", "no_action_cause")


def reliability_summary(episodes: pd.DataFrame, steps: pd.DataFrame, by=None, ci_prob: float = DEFAULT_CI_PROB,
                        method: str = "wilson") -> pd.DataFrame:
    """Failed calls and timeouts per group.

    ``n_failed_call`` = decisions with outcome ``error`` (no action, or a default played, because the
    call failed), split into ``n_error`` and ``n_other`` by ``no_action_cause``; ``n_timeout`` =
    decisions with outcome ``silent`` (no action: a timeout, logged as such or with no cause);
    ``n_cause_given`` = decisions that carry a ``no_action_cause`` at all (0: the logs cannot tell a
    timeout from an error, and every silence counts as a timeout). ``failed_call_rate`` and
    ``timeout_rate`` are per decision, with ``method`` intervals (decisions of one episode are not
    independent: read them as a lower bound on the spread); ``share_episodes_with_failed_call`` is
    over episodes. NaN where a group has no decision.

    Columns: keys, ``n_episodes``, ``n_decisions``, ``n_failed_call``, ``n_error``, ``n_other``,
    ``n_timeout``, ``n_cause_given``, ``failed_call_rate`` (``_lo``/``_hi``), ``timeout_rate``
    (``_lo``/``_hi``), ``share_episodes_with_failed_call``.
    """
    steps = steps_of(steps, episodes)
    groups = make_groups(episodes, resolve_by(by, episodes))
    n_ep = len(episodes)
    rows = episode_row(steps, episodes) if len(steps) else np.zeros(0, dtype=np.int64)
    outcome = steps["outcome"].astype(object).to_numpy() if len(steps) else np.zeros(0, dtype=object)
    cause = (steps["no_action_cause"].astype(object).to_numpy() if "no_action_cause" in steps and len(steps)
             else np.full(len(steps), None, dtype=object))
    failed = outcome == "error"
    timeout = outcome == "silent"
    gid = groups.episode_gid
    sgid = gid[rows] if len(rows) else rows
    n_dec = group_counts(sgid, groups.n)
    n_failed = group_counts(sgid, groups.n, failed)
    n_timeout = group_counts(sgid, groups.n, timeout)
    f_lo, f_hi = proportion_interval(n_failed, n_dec, ci_prob, method)
    t_lo, t_hi = proportion_interval(n_timeout, n_dec, ci_prob, method)
    ep_failed = np.bincount(rows[failed], minlength=n_ep)[:n_ep] > 0
    n_episodes = group_counts(gid, groups.n)
    return groups.frame({
        "n_episodes": n_episodes,
        "n_decisions": n_dec.astype(np.int64),
        "n_failed_call": n_failed.astype(np.int64),
        "n_error": group_counts(sgid, groups.n, failed & (cause == "error")).astype(np.int64),
        "n_other": group_counts(sgid, groups.n, failed & (cause == "other")).astype(np.int64),
        "n_timeout": n_timeout.astype(np.int64),
        "n_cause_given": group_counts(sgid, groups.n, pd.notna(cause)).astype(np.int64),
        "failed_call_rate": safe_div(n_failed, n_dec),
        "failed_call_rate_lo": f_lo,
        "failed_call_rate_hi": f_hi,
        "timeout_rate": safe_div(n_timeout, n_dec),
        "timeout_rate_lo": t_lo,
        "timeout_rate_hi": t_hi,
        "share_episodes_with_failed_call": safe_div(group_counts(gid, groups.n, ep_failed), n_episodes),
    })
