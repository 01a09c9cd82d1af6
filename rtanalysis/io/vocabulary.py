"""The analysis's words for a decision and an episode, defined once on the loader's step columns.

Metrics, the model's aggregation and the checks use these, so "missed", "labelled" and "capable"
mean the same thing in every table:

* **missed**: under a timed clock (wall or step), the action came too early, too late, or not at all
  (``too_early | too_late | no_action``). A played ``fallback`` is already ``too_late`` (or
  ``too_early``) by the loader's timing rule, so harnesses that log the tick length as every latency
  still show their misses. Under ``paused`` nothing is missed.
* **failed call**: no action, or a default action played, because the call failed
  (``no_action_cause`` ``error`` or ``other``; outcome ``error``). Neither timing nor capability: it
  is not missed, and the model leaves such decisions out (they are reported as reliability).
* **unlabelled action**: an action whose ``correct_at_obs`` is not logged.
* **wrong action**: an action with ``correct_at_obs = false``.
* an episode is **labelled** when it has at least one action and every action is labelled, and
  **capable** when it is labelled and no action is wrong.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _flag(steps: pd.DataFrame, column: str) -> np.ndarray:
    if not len(steps) or column not in steps:
        return np.zeros(len(steps), dtype=bool)
    return steps[column].fillna(False).to_numpy(bool)


def failed_call(steps: pd.DataFrame) -> np.ndarray:
    """Per decision: no action (or a default played) because the call failed (outcome ``error``)."""
    if not len(steps) or "outcome" not in steps:
        return np.zeros(len(steps), dtype=bool)
    return (steps["outcome"] == "error").to_numpy(bool, na_value=False)


def missed(steps: pd.DataFrame, timed: np.ndarray) -> np.ndarray:
    """Per decision: a timing miss (too early, too late or no action) under a timed clock; a failed
    call is not one."""
    no_action = _flag(steps, "no_action") & ~failed_call(steps)
    return (_flag(steps, "too_early") | _flag(steps, "too_late") | no_action) & timed


def acted(steps: pd.DataFrame) -> np.ndarray:
    """Per decision: an action was taken (a latency is logged)."""
    return ~np.isnan(steps["latency"].to_numpy(float)) if len(steps) else np.zeros(0, dtype=bool)


def unlabelled_action(steps: pd.DataFrame) -> np.ndarray:
    """Per decision: acted, with ``correct_at_obs`` not logged."""
    return steps["correct_at_obs"].isna().to_numpy() & acted(steps) if len(steps) else np.zeros(0, dtype=bool)


def wrong_action(steps: pd.DataFrame) -> np.ndarray:
    """Per decision: acted, with ``correct_at_obs = false``."""
    if not len(steps):
        return np.zeros(0, dtype=bool)
    return ~steps["correct_at_obs"].fillna(True).to_numpy(bool) & acted(steps)


def episode_labels(n_acted, n_unlabelled, n_wrong) -> tuple[np.ndarray, np.ndarray]:
    """(labelled, capable) per episode from its counts of actions, unlabelled and wrong actions."""
    labelled = (np.asarray(n_acted) > 0) & (np.asarray(n_unlabelled) == 0)
    return labelled, labelled & (np.asarray(n_wrong) == 0)
