"""Shared by the statistical studies (``python studies/<name>.py``; the script's folder is on
``sys.path``, so ``from _common import ...`` works from the repository root): where their tables go,
and which runs a resumable study has already appended."""

from __future__ import annotations

from pathlib import Path

#: ``studies/results``: each study's per-fit rows (CSV) and its summary table (CSV + txt)
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


def write_summary(path, text: str, command: str) -> None:
    """Print ``text`` and write it to ``path`` (a study's small txt summary), headed by the command and
    the date, replacing the file: a summary is recomputed from the study's CSV, not appended."""
    import time

    print(text)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    Path(path).write_text(f"# {command}  ({stamp})\n{text}\n")
