"""The installed package's version and bundled data: a leaf every layer may import."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from importlib.resources import files

try:
    __version__ = version("rtanalysis")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"


def example_data():
    """Path of the bundled example benchmark (rtlog files, ``truth.csv``, a response-slot table)."""
    return files("rtanalysis") / "data" / "example"
