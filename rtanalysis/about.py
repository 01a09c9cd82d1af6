"""The installed package's version and bundled data: a leaf every layer may import."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from importlib.resources import files

try:
    __version__ = version("rtanalysis")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"


#: the bundled examples (folders under rtanalysis/data/)
EXAMPLES = ("example", "realtimegym", "llm-colosseum")


def example_data(name: str = "example"):
    """Path of a bundled example: ``"example"`` (simulated benchmark with known truth: rtlog files,
    ``truth.csv``, a response-slot table), ``"realtimegym"`` (RealtimeGym runs converted to rtlog) or
    ``"llm-colosseum"`` (the LLM Colosseum battle royale's season 1 battles converted to rtlog)."""
    if name not in EXAMPLES:
        raise ValueError(f"unknown example {name!r}; bundled examples: {', '.join(EXAMPLES)}")
    return files("rtanalysis") / "data" / name
