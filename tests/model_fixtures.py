"""Shared, cached fits for the model tests: each fit runs once per test session (worker)."""

from __future__ import annotations

from functools import lru_cache

from rtanalysis.io import EpisodeSink
from rtanalysis.model.studies.toy import ToyDesign, toy_load, toy_truth

TOY_DRAWS = dict(draws=300, chains=2, seed=0, progress=False, tune=None)


@lru_cache(maxsize=None)
def toy_data(labelled: bool, n_per_cell: int = 60, seed: int = 3):
    return toy_load(ToyDesign(), n_per_cell=n_per_cell, seed=seed, labelled=labelled)


@lru_cache(maxsize=None)
def toy_fit(labelled: bool):
    from rtanalysis import fit

    return fit(toy_data(labelled), **TOY_DRAWS)


def truth():
    return toy_truth(ToyDesign())


def _ep(i, model, task_type, clock, success, steps, task="t0"):
    return {"run_id": "deg", "episode_id": f"e{i}", "model": model, "task": task, "task_type": task_type,
            "clock": clock, "success": success, "steps": steps}


@lru_cache(maxsize=None)
def degenerate_data():
    """Awkward cells: a model that never succeeds, one that always does, a task type with one model,
    a cell with one episode, a cell with no latencies, a paused-only cell, and no task ids."""
    recs = []
    i = 0
    for model, succ in (("never", False), ("always", True), ("half", None)):
        for clock in ("wall", "paused"):
            for r in range(12):
                lat = 0.3 + 0.05 * (r % 5)
                s = succ if succ is not None else bool(r % 2)
                steps = [{"t_obs": 0.0, "latency": lat, "window": [0, 0.5]},
                         {"t_obs": 1.0, "latency": lat * 1.5, "window": [0, 0.5]}]
                recs.append(_ep(i := i + 1, model, "common", clock, s, steps, task=f"c{r % 3}"))
    recs.append(_ep(i := i + 1, "half", "lonely", "wall", True, [{"t_obs": 0.0, "latency": 0.2, "window": [0, 1.0]}]))
    for r in range(5):  # no latencies at all: no steps
        recs.append(_ep(i := i + 1, "always", "nolat", "wall", bool(r % 2), [], task=None))
    for r in range(6):  # paused only
        recs.append(_ep(i := i + 1, "never", "pausedonly", "paused", bool(r % 3 == 0),
                        [{"t_obs": 0.0, "latency": 2.0}]))
    sink = EpisodeSink()
    for j, rec in enumerate(recs):
        if rec["task"] is None:
            del rec["task"]
        assert sink.add(rec, "degenerate", j + 1), sink._quarantine[-1]
    return sink.finish()


@lru_cache(maxsize=None)
def degenerate_fit():
    from rtanalysis import fit

    # separation (never/always succeeding models) makes long trajectories: fewer draws keep it cheap
    return fit(degenerate_data(), **{**TOY_DRAWS, "draws": 150, "tune": 200})
