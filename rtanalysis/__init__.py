"""rtanalysis: why LLM agents fail realtime benchmarks — capability or timing — with honest uncertainty.

The pipeline, one layer per package, each importing only those before it: :mod:`~rtanalysis.load`
and :mod:`~rtanalysis.adapters` (logs → tidy ``episodes``/``steps``), :mod:`~rtanalysis.metrics`
(observed rates and intervals), :mod:`~rtanalysis.model` (hierarchical capability × timing model →
decomposition, counterfactuals), :mod:`~rtanalysis.plots`, :mod:`~rtanalysis.tables` and
:mod:`~rtanalysis.report` (figures, tables, the written report); :mod:`rtanalysis.cli` on top.
Errors the stages raise on purpose are in the leaf :mod:`rtanalysis.errors`.
"""

from .about import EXAMPLES, __version__, example_data
from .load import EpisodeSink, LoadResult, json_schema, load_rtlog
from .adapters import load  # after .load: the name `rtanalysis.load` is this function, not the module


def __getattr__(name):
    # the model stage imports PyMC: load it on first use so `import rtanalysis` stays fast
    if name == "fit":
        from .model import fit

        return fit
    raise AttributeError(name)


__all__ = ["EXAMPLES", "EpisodeSink", "LoadResult", "example_data", "json_schema", "load", "load_rtlog", "fit", "__version__"]
