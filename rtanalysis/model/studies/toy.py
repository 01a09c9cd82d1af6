"""A small self-contained generator of rtlog episodes with known truth, for the model's tests and
benchmarks (independent of :mod:`rtanalysis.simulate`, so the model can be checked on its own).

Each episode: capable with probability ``sigmoid(cap_logit[m] + type_logit[k])``; each decision's
latency is log-normal ``(mu[m] + type_mu[k], sigma)``; the window is ``[0, close[k]]``; a latency
beyond ``silent_factor * close`` is logged as no action; each missed window kills the episode with
probability ``fatality[k]``. Under ``paused`` nothing is missed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import norm

from ...io import EpisodeSink, LoadResult


@dataclass
class ToyDesign:
    """The toy benchmark's truth: per model ``(capability logit, log-latency mean)``, per task type
    ``(capability logit shift, latency log shift, window close, fatality)``, the log-latency SD
    ``sigma``, decisions per episode, items per task type, the ``silent_factor`` and the clocks."""

    models: dict[str, tuple[float, float]] = field(default_factory=lambda: {
        "model-a": (1.5, np.log(0.4)), "model-b": (0.3, np.log(1.0)), "model-c": (-0.5, np.log(0.6))})
    #: task_type -> (capability logit shift, latency log shift, window close, fatality)
    task_types: dict[str, tuple[float, float, float, float]] = field(default_factory=lambda: {
        "high_frequency": (0.0, 0.0, 0.8, 0.6), "long_horizon": (-0.3, 0.3, 2.0, 0.3)})
    sigma: float = 0.5
    n_decisions: int = 5
    n_items: int = 6
    silent_factor: float = 3.0
    clocks: tuple[str, ...] = ("wall", "paused")


def toy_truth(design: ToyDesign) -> pd.DataFrame:
    """The true decomposition per model × task_type × clock (same columns as ``sim.truth``)."""
    rows = []
    for m, (cl, mu) in design.models.items():
        for k, (tl, tmu, close, f) in design.task_types.items():
            p_cap = float(expit(cl + tl))
            q = float(norm.sf((np.log(close) - mu - tmu) / design.sigma))
            for c in design.clocks:
                p_t = 1.0 if c == "paused" else float((1 - f * q) ** design.n_decisions)
                p_s = p_cap * p_t
                share = 0.0 if c == "paused" else p_cap * (1 - p_t) / (1 - p_s)
                rows.append((m, k, c, p_cap, p_t, p_s, share))
    return pd.DataFrame(rows, columns=["model", "task_type", "clock", "p_capable", "p_timely", "p_success",
                                       "share_timing"])


def toy_records(design: ToyDesign, n_per_cell: int, seed: int = 0, labelled: bool = True):
    """Yield rtlog v1 episode dicts: ``n_per_cell`` episodes per model × task_type × clock."""
    rng = np.random.default_rng(seed)
    n = 0
    for m, (cl, mu) in design.models.items():
        for k, (tl, tmu, close, f) in design.task_types.items():
            for c in design.clocks:
                for _ in range(n_per_cell):
                    capable = rng.random() < expit(cl + tl)
                    lat = np.exp(rng.normal(mu + tmu, design.sigma, design.n_decisions))
                    acting = np.flatnonzero(lat <= design.silent_factor * close)
                    wrong_at = -1 if capable or not len(acting) else int(rng.choice(acting))
                    alive = True
                    steps = []
                    t = 0.0
                    for d in range(design.n_decisions):
                        silent = lat[d] > design.silent_factor * close
                        missed = c != "paused" and (silent or lat[d] > close)
                        if missed and rng.random() < f:
                            alive = False
                        step = {"t_obs": round(t, 6), "window": [0.0, close]}
                        if silent:
                            step["t_act"] = None
                        else:
                            step["latency"] = float(lat[d])
                            if labelled:
                                step["correct_at_obs"] = bool(d != wrong_at)
                        steps.append(step)
                        t += close
                    n += 1
                    yield {"run_id": "toy", "episode_id": f"e{n}", "model": m,
                           "task": f"{k}-{rng.integers(design.n_items)}", "task_type": k, "clock": c,
                           "success": bool(capable and alive), "steps": steps}


def toy_load(design: ToyDesign | None = None, n_per_cell: int = 60, seed: int = 0,
             labelled: bool = True) -> LoadResult:
    """Simulate and load through :class:`~rtanalysis.io.EpisodeSink` (the real loader path)."""
    sink = EpisodeSink()
    for i, rec in enumerate(toy_records(design or ToyDesign(), n_per_cell, seed, labelled)):
        sink.add(rec, "toy", i + 1)
    return sink.finish()


def random_param_draws(d, S: int, rng):
    """S random :class:`.derived.ParamDraws` on ``d``'s dimensions (plausible ranges, not a posterior):
    inputs for checking derived quantities against a brute force and for timing them."""
    from ..derived import ParamDraws

    U, M, K = len(d.units), len(d.models), len(d.task_types)
    return ParamDraws(mu=rng.normal(0.2, 0.5, (S, U, M, K)), sigma=rng.uniform(0.3, 0.8, (S, U, M, K)),
                      eta=rng.normal(0, 1, (S, M, K)),
                      item=np.concatenate([rng.normal(0, 0.5, (S, len(d.items))), np.zeros((S, 1))], axis=1),
                      fatality=rng.uniform(0.2, 1.0, (S, K)), silence=rng.uniform(0, 0.1, (S, M)),
                      length=rng.normal(1, 0.5, (S, K)))
