"""Shared by the statistical studies (``python studies/<name>.py``; the script's folder is on
``sys.path``, so ``from _common import ...`` works from the repository root): where their tables go,
and which runs a resumable study has already appended."""

from __future__ import annotations

import io
import os
import sys
import time
from contextlib import contextmanager
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


class _Tee:
    def __init__(self, *streams):
        self.streams = streams

    def write(self, text):
        for s in self.streams:
            s.write(text)
        return len(text)

    def flush(self):
        for s in self.streams:
            s.flush()


@contextmanager
def summary_to(path):
    """Print as usual, and write what was printed to ``path`` (a study's small txt summary, next to its
    CSV table), headed by the command and the date; the file is replaced: a summary is recomputed from
    the study's CSV, not appended. ``path`` None: print only."""
    if path is None:
        yield
        return
    buf = io.StringIO()
    old = sys.stdout
    sys.stdout = _Tee(old, buf)
    try:
        yield
    finally:
        sys.stdout = old
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    command = " ".join(["python"] + [os.path.relpath(sys.argv[0])] + sys.argv[1:])
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(f"# {command}  ({stamp})\n{buf.getvalue()}")
