"""Observed summaries the figures draw, computed straight from the tidy ``episodes``/``steps``.

Kept here (rather than borrowed from :mod:`rtanalysis.metrics`) so each figure states exactly
what it shows; the numbers are plain counts with Wilson score intervals.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

#: latency / window-close bin edges for the success-versus-latency figure (1 = the deadline)
LATENCY_RATIO_EDGES = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0, np.inf)
GROUP = ["model", "task_type", "clock"]


def wilson(k, n, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for ``k`` successes in ``n`` trials (arrays broadcast)."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    z = stats.norm.ppf(0.5 + level / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
        half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def rate_table(frame: pd.DataFrame, by: list[str], flag: str, level: float = 0.95) -> pd.DataFrame:
    """``n``, ``k``, ``rate``, ``lo``, ``hi`` of boolean column ``flag`` per ``by`` group."""
    data = frame.dropna(subset=[flag])
    out = (data.assign(_k=data[flag].astype(bool).astype(int))
           .groupby(by, observed=True, sort=True)["_k"].agg(n="size", k="sum").reset_index())
    out["rate"] = out["k"] / out["n"]
    out["lo"], out["hi"] = wilson(out["k"], out["n"], level)
    return out


def success_rates(episodes: pd.DataFrame, by=GROUP, level: float = 0.95) -> pd.DataFrame:
    return rate_table(episodes, list(by), "success", level)


def episode_latency_ratio(steps: pd.DataFrame) -> pd.DataFrame:
    """Median latency relative to the window close, per episode (steps with both known)."""
    ok = steps["latency"].notna() & steps["window_close"].notna() & (steps["window_close"] > 0)
    s = steps.loc[ok, ["run_id", "episode_id", "latency", "window_close"]]
    ratio = (s["latency"] / s["window_close"]).rename("latency_ratio")
    return (pd.concat([s[["run_id", "episode_id"]], ratio], axis=1)
            .groupby(["run_id", "episode_id"], sort=False)["latency_ratio"].median().reset_index())


def success_by_latency(episodes: pd.DataFrame, steps: pd.DataFrame, level: float = 0.95,
                       edges=LATENCY_RATIO_EDGES) -> pd.DataFrame:
    """Observed success per model × task type × clock × latency-ratio bin, with intervals."""
    ep = episodes.merge(episode_latency_ratio(steps), on=["run_id", "episode_id"], how="inner")
    if ep.empty:
        return pd.DataFrame(columns=GROUP + ["bin", "ratio_mid", "n", "k", "rate", "lo", "hi"])
    ep["bin"] = pd.cut(ep["latency_ratio"], bins=list(edges), right=False, include_lowest=True)
    ep["bin"] = ep["bin"].astype(str)
    mids = ep.groupby(GROUP + ["bin"], sort=True)["latency_ratio"].median().rename("ratio_mid")
    out = rate_table(ep, GROUP + ["bin"], "success", level)
    return out.merge(mids.reset_index(), on=GROUP + ["bin"])


def step_outcome_shares(steps: pd.DataFrame) -> pd.DataFrame:
    """Share of decisions per outcome (ok, wrong, late, early, silent, unknown) per group."""
    counts = steps.groupby(GROUP + ["outcome"], sort=True).size().rename("n").reset_index()
    totals = counts.groupby(GROUP)["n"].transform("sum")
    counts["share"] = counts["n"] / totals
    return counts


def first_failure_hazard(steps: pd.DataFrame, level: float = 0.95, max_step: int | None = None) -> pd.DataFrame:
    """Discrete hazard of the first failed decision (outcome not ok/unknown) by step index.

    At step ``s`` the risk set is the episodes that reached ``s`` with no failure before it;
    the hazard is the share of them whose first failure is at ``s``.
    """
    s = steps[steps["outcome"] != "unknown"].sort_values(["run_id", "episode_id", "step"])
    failed = s["outcome"] != "ok"
    s = s.assign(_failed=failed, _before=failed.groupby([s["run_id"], s["episode_id"]]).cumsum() - failed)
    at_risk = s[s["_before"] == 0]
    if max_step is not None:
        at_risk = at_risk[at_risk["step"] <= max_step]
    return rate_table(at_risk, ["model", "task_type", "clock", "step"], "_failed", level)


def fallback_rates(steps: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    return rate_table(steps, ["model", "task_type", "clock"], "fallback", level)


def paired_success(episodes: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Observed success per model × task type under each clock (for the paused/wall slopegraph)."""
    return success_rates(episodes, GROUP, level)
