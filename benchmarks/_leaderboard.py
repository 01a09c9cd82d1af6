"""The model's aggregates of ``leaderboard60`` for benchmarks that start from them: simulated at a
size, or a pickled ``ModelData`` (e.g. the aggregates of a rung too big to simulate every run)."""

from __future__ import annotations

import os
import pickle


def add_data_arguments(ap, seeds: int = 3) -> None:
    """``--aggregates`` (a pickled ModelData) or ``--tasks`` / ``--seeds`` (simulate)."""
    ap.add_argument("--aggregates", default=None, help="a pickled ModelData instead of simulating")
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=seeds)


def leaderboard_aggregates(args):
    """(ModelData, label): the pickled aggregates of ``args.aggregates``, or those of
    ``simulate("leaderboard60", seed=0, tasks=args.tasks, seeds=args.seeds)``."""
    if args.aggregates:
        with open(args.aggregates, "rb") as fh:
            return pickle.load(fh), f"aggregates {os.path.basename(args.aggregates)}"
    from rtanalysis.model.data import aggregate
    from rtanalysis.simulate import simulate

    lr = simulate("leaderboard60", seed=0, tasks=args.tasks, seeds=args.seeds).load()
    return aggregate(lr.episodes, lr.steps), f"leaderboard60 --tasks {args.tasks} --seeds {args.seeds}"
