"""Where benchmark scripts record what they measured: printed, and appended to
``benchmarks/results/<name>`` (a log kept in the repository, newest run last)."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def append_result(name: str, text: str) -> None:
    """Print ``text`` and append it, followed by a blank line, to ``results/<name>``."""
    print(text)
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / name, "a") as fh:
        fh.write(text + "\n")
