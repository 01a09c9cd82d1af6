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
    """Load trajectory logs of any supported format into tidy tables (see :mod:`rtanalysis.adapters`).

    A directory written by ``rtanalysis ingest --dataset`` (a partitioned Parquet dataset) is read back."""
    from .scale.dataset import is_dataset, read_dataset

    if is_dataset(paths):
        return read_dataset(paths[0] if isinstance(paths, (list, tuple)) else paths)
    try:
        from .adapters import load as _load
    except ModuleNotFoundError:
        return load_rtlog(paths, **options)
    return _load(paths, format=format, **options)


def example_data():
    """Path of the bundled example benchmark (rtlog files, ``truth.csv``, a response-slot table)."""
    from importlib.resources import files

    return files("rtanalysis") / "data" / "example"


def __getattr__(name):
    # heavy stages import lazily so `import rtanalysis` stays fast
    if name == "fit":
        from .model import fit

        return fit
    raise AttributeError(name)


__all__ = ["EpisodeSink", "LoadResult", "example_data", "json_schema", "load", "load_rtlog", "fit", "__version__"]
