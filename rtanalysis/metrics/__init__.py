"""Observed realtime-benchmark metrics: tidy tables from the loader's ``episodes`` and ``steps``.

Every table has one row per group (default model × task_type × clock; ``by=`` any episode
columns, including condition columns) or per group × level for the long tables, and NaN — never
a misleading 0 — where a quantity is undefined. Definitions and formulas: docs/user-guide/measure.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pandas as pd

from ._groups import DEFAULT_BY, shared_episode_rows
from .decomposition import observed_decomposition
from .intervals import (DEFAULT_CI_PROB, PROPORTION_INTERVALS, beta_posterior, clopper_pearson, clustered_se, jeffreys,
                        proportion_interval, wilson)
from .latency import (episode_relative_latency, floored_log_latency, latency_ecdf, latency_summary, positive_latency,
                      relative_latency, success_by_latency)
from .paired import paired_difference
from .reliability import reliability_summary
from .power import episodes_needed, min_detectable_difference, n_needed_exact, power_difference
from .stability import failure_hazard, fallback_summary, score_variance
from .structure import episode_structure
from .success import success_rates
from .validity import decision_validity

#: key -> function(episodes, steps, by, ci_prob) for :func:`compute_all`; keys are the stable table names
METRICS: dict[str, Callable[[pd.DataFrame, pd.DataFrame, object, float], pd.DataFrame]] = {
    "success": lambda ep, st, by, ci_prob: success_rates(ep, by, ci_prob=ci_prob),
    "latency": lambda ep, st, by, ci_prob: latency_summary(ep, st, by),
    "latency_ecdf": lambda ep, st, by, ci_prob: latency_ecdf(ep, st, by),
    "success_by_latency": lambda ep, st, by, ci_prob: success_by_latency(ep, st, by, ci_prob=ci_prob),
    "validity": lambda ep, st, by, ci_prob: decision_validity(ep, st, by, ci_prob=ci_prob),
    "hazard": lambda ep, st, by, ci_prob: failure_hazard(ep, st, by, ci_prob=ci_prob),
    "fallback": lambda ep, st, by, ci_prob: fallback_summary(ep, st, by, ci_prob=ci_prob),
    "reliability": lambda ep, st, by, ci_prob: reliability_summary(ep, st, by, ci_prob=ci_prob),
    "score_variance": lambda ep, st, by, ci_prob: score_variance(ep, by),
    "episode_structure": lambda ep, st, by, ci_prob: episode_structure(ep, st, by, ci_prob=ci_prob),
    "observed_decomposition": lambda ep, st, by, ci_prob: observed_decomposition(ep, by, ci_prob=ci_prob),
}


def compute_all(episodes: pd.DataFrame, steps: pd.DataFrame, by=None,
                ci_prob: float = DEFAULT_CI_PROB) -> dict[str, pd.DataFrame]:
    """Every table of :data:`METRICS`, intervals at probability ``ci_prob``, keyed by its stable name."""
    with shared_episode_rows():
        return {key: fn(episodes, steps, by, ci_prob) for key, fn in METRICS.items()}


def write_metrics(tables: dict[str, pd.DataFrame], out_dir) -> list[Path]:
    """Write each table as ``out_dir/metrics_<key>.csv`` (created if needed); return the paths in order."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for key, table in tables.items():
        path = out / f"metrics_{key}.csv"
        table.to_csv(path, index=False)
        paths.append(path)
    return paths


__all__ = [
    "DEFAULT_BY", "DEFAULT_CI_PROB", "METRICS", "PROPORTION_INTERVALS", "beta_posterior", "clopper_pearson",
    "clustered_se", "compute_all", "decision_validity", "episode_structure", "episode_relative_latency", "episodes_needed",
    "failure_hazard", "fallback_summary", "floored_log_latency", "jeffreys", "latency_ecdf", "latency_summary",
    "min_detectable_difference", "n_needed_exact", "observed_decomposition", "paired_difference",
    "positive_latency", "power_difference", "proportion_interval", "relative_latency", "reliability_summary", "score_variance",
    "success_by_latency", "success_rates", "wilson", "write_metrics",
]
