"""Decision validity per group: outcome shares, and "thought correctly but too late".

Long frame, one row per group × ``measure``:

- ``ok``, ``wrong``, ``late``, ``early``, ``silent``, ``error``, ``unknown``: share of all decisions with that
  ``outcome`` (denominator ``decisions``; the seven shares sum to 1).
- ``correct_late``, ``correct_early``, ``correct_missed`` (= late + early): among content-correct
  decisions (``correct_at_obs`` true, which requires an action) whose timing is known (outcome
  ok / late / early), the share that missed their window. Silent decisions have no content, so
  they are not in this denominator; content-correct decisions of unknown timing are left out
  rather than counted as on time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..io.keys import value_codes
from ..schema import OUTCOMES
from ._groups import group_counts, make_groups, resolve_by, safe_div, steps_of
from .intervals import DEFAULT_CI_PROB, proportion_interval

#: measure -> (outcomes counted, denominator) for content-correct decisions of known timing
CORRECT_MEASURES = {
    "correct_late": ("late",),
    "correct_early": ("early",),
    "correct_missed": ("late", "early"),
}
DENOMINATORS = {"outcome": "decisions", "correct": "content-correct decisions with known timing"}


def decision_validity(episodes: pd.DataFrame, steps: pd.DataFrame, by=None, ci_prob: float = DEFAULT_CI_PROB,
                      method: str = "wilson") -> pd.DataFrame:
    """Shares of decision outcomes per group (see module doc). NaN share where the denominator is 0.

    Columns: keys, ``measure``, ``count``, ``n`` (denominator size), ``share``, ``share_lo``,
    ``share_hi`` (``method`` interval with probability ``ci_prob``), ``denominator`` (what ``n`` counts).
    """
    steps = steps_of(steps, episodes)
    cols = resolve_by(by, episodes)
    groups = make_groups(episodes, cols)
    gid = groups.step_gid(steps, episodes)
    outcome = value_codes(steps["outcome"], OUTCOMES)  # positions in OUTCOMES, -1 for anything else
    correct = steps["correct_at_obs"].fillna(False).to_numpy(dtype=bool)
    correct_known_timing = correct & np.isin(outcome, [OUTCOMES.index(o) for o in ("ok", "late", "early")])

    n_dec = group_counts(gid, groups.n)
    n_cor = group_counts(gid, groups.n, correct_known_timing)
    parts = []
    for measure in OUTCOMES:
        parts.append((measure, group_counts(gid, groups.n, outcome == OUTCOMES.index(measure)), n_dec,
                      DENOMINATORS["outcome"]))
    for measure, counted in CORRECT_MEASURES.items():
        hit = correct_known_timing & np.isin(outcome, [OUTCOMES.index(o) for o in counted])
        parts.append((measure, group_counts(gid, groups.n, hit), n_cor, DENOMINATORS["correct"]))

    gids = np.tile(np.arange(groups.n), len(parts))
    count = np.concatenate([p[1] for p in parts]).astype(np.int64)
    n = np.concatenate([p[2] for p in parts]).astype(np.int64)
    lo, hi = proportion_interval(count, n, ci_prob, method)
    order = np.lexsort((np.repeat(np.arange(len(parts)), groups.n), gids))
    return groups.repeat(gids[order], {
        "measure": np.repeat([p[0] for p in parts], groups.n)[order],
        "count": count[order],
        "n": n[order],
        "share": safe_div(count, n)[order],
        "share_lo": lo[order],
        "share_hi": hi[order],
        "denominator": np.repeat([p[3] for p in parts], groups.n)[order],
    })
