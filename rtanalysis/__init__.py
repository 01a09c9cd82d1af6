"""rtanalysis: why LLM agents fail realtime benchmarks — capability or timing — with honest uncertainty.

The pipeline, one stage per module: :mod:`~rtanalysis.load` (logs → tidy ``episodes``/``steps``),
:mod:`~rtanalysis.metrics` (observed rates and intervals), :mod:`~rtanalysis.model` (hierarchical
capability × timing model → decomposition, counterfactuals), :mod:`~rtanalysis.plots` and
:mod:`~rtanalysis.report` (figures, tables, the written report).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("rtanalysis")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

from .load import EpisodeSink, LoadResult, json_schema, load_rtlog  # noqa: E402


def load(paths, format: str = "auto", **options) -> LoadResult:
    """Load trajectory logs of any supported format into tidy tables (see :mod:`rtanalysis.adapters`)."""
    try:
        from .adapters import load as _load
    except ModuleNotFoundError:
        return load_rtlog(paths, **options)
    return _load(paths, format=format, **options)


#: the bundled examples (folders under rtanalysis/data/)
EXAMPLES = ("example", "realtimegym")


def example_data(name: str = "example"):
    """Path of a bundled example: ``"example"`` (simulated benchmark with known truth: rtlog files,
    ``truth.csv``, a response-slot table) or ``"realtimegym"`` (RealtimeGym runs converted to rtlog)."""
    from importlib.resources import files

    if name not in EXAMPLES:
        raise ValueError(f"unknown example {name!r}; bundled examples: {', '.join(EXAMPLES)}")
    return files("rtanalysis") / "data" / name


def __getattr__(name):
    # heavy stages import lazily so `import rtanalysis` stays fast
    if name == "fit":
        from .model import fit

        return fit
    raise AttributeError(name)


__all__ = ["EpisodeSink", "LoadResult", "example_data", "json_schema", "load", "load_rtlog", "fit", "__version__"]
