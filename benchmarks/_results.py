"""Where benchmark scripts record what they measured: printed, and appended to
``benchmarks/results/<name>`` (a log kept in the repository, newest run last)."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def done_runs(path, columns: list[str]) -> set:
    """The key tuples (``columns``) of the runs a resumable study already appended to the CSV at
    ``path`` (an empty set before the first): the study skips them when it runs again."""
    import os

    import pandas as pd

    if not os.path.exists(path):
        return set()
    old = pd.read_csv(path)
    return set(zip(*(old[c] for c in columns)))


def append_result(name: str, text: str) -> None:
    """Print ``text`` and append it, followed by a blank line, to ``results/<name>``."""
    print(text)
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / name, "a") as fh:
        fh.write(text + "\n")


#: the decomposition's quantities whose posterior means a benchmark compares between two fits
QUANTITIES = ("p_capable", "p_timely", "share_timing")


def shift_in_sd(dec, ref) -> dict:
    """How far decomposition ``dec`` moved from ``ref`` (both indexed by row): |difference of the
    posterior means| in units of ``ref``'s posterior SD (its 95 % interval's width / 3.92), the largest
    and the mean over every row and quantity."""
    import numpy as np

    sd = {q: (ref[f"{q}_hi"] - ref[f"{q}_lo"]) / (2 * 1.96) for q in QUANTITIES}
    shift = np.concatenate([(np.abs(dec[q] - ref[q]) / sd[q].where(sd[q] > 0)).dropna().to_numpy()
                            for q in QUANTITIES])
    return {"max_shift_in_sd": round(float(shift.max()), 3), "mean_shift_in_sd": round(float(shift.mean()), 3)}
