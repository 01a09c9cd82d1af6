"""The model tests' small designs, registered as data sets of :mod:`tests.fits` (``toy``,
``degenerate``), and their shared fits."""

from __future__ import annotations

from rtanalysis.io import EpisodeSink
from rtanalysis.model.studies.toy import ToyDesign, toy_load, toy_truth
from tests.fits import data_set, shared_fit



@data_set("toy")
def toy_data(labelled: bool, n_per_cell: int = 60, sim_seed: int = 3):
    return toy_load(ToyDesign(), n_per_cell=n_per_cell, seed=sim_seed, labelled=labelled)


def toy_fit(labelled: bool):
    return shared_fit("toy", labelled=labelled)


def truth():
    return toy_truth(ToyDesign())


def _ep(i, model, task_type, clock, success, steps, task="t0"):
    return {"run_id": "deg", "episode_id": f"e{i}", "model": model, "task": task, "task_type": task_type,
            "clock": clock, "success": success, "steps": steps}


@data_set("degenerate")
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


def degenerate_fit():
    # separation (never/always succeeding models) makes long trajectories: fewer draws keep it cheap
    return shared_fit("degenerate", draws=150, tune=200)
