"""rtanalysis: why LLM agents fail realtime benchmarks — capability or timing — with honest uncertainty.

What a user needs is here: :func:`load` logs into tidy tables (a :class:`LoadResult`), measure them
with :mod:`metrics`, :func:`fit` the model a :class:`ModelSpec` names (a :class:`FitResult`), and
:func:`report` it all (figures, tables, the written report); :mod:`simulate` makes benchmarks with
known truth.

The pipeline, one layer per subpackage, each importing only those below it: :mod:`rtanalysis.io`
and :mod:`rtanalysis.adapters` (logs → tidy ``episodes``/``steps``), :mod:`rtanalysis.simulate`,
:mod:`rtanalysis.metrics` (observed rates and intervals), :mod:`rtanalysis.model` (the capability ×
timing model), :mod:`rtanalysis.plots` and :mod:`rtanalysis.reporting` (figures, tables, the
report); :mod:`rtanalysis.cli` on top. The errors raised on purpose are in :mod:`rtanalysis.errors`.
"""

from .about import EXAMPLES, __version__, example_data
from .adapters import load
from .io import LoadResult, json_schema

#: names loaded on first use: the model imports PyMC and the report matplotlib, so that
#: ``import rtanalysis`` stays fast
_LAZY = {
    "fit": ("rtanalysis.model", "fit"),
    "FitResult": ("rtanalysis.model", "FitResult"),
    "ModelSpec": ("rtanalysis.model.spec", "ModelSpec"),
    "report": ("rtanalysis.reporting.pipeline", "run_report"),
    "metrics": ("rtanalysis.metrics", None),
    "simulate": ("rtanalysis.simulate", None),
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'rtanalysis' has no attribute {name!r}")
    import importlib

    module, attr = _LAZY[name]
    value = importlib.import_module(module)
    return value if attr is None else getattr(value, attr)


def __dir__():
    return sorted(__all__)


__all__ = ["EXAMPLES", "FitResult", "LoadResult", "ModelSpec", "__version__", "example_data", "fit", "json_schema",
           "load", "metrics", "report", "simulate"]
