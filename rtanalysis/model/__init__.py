"""The hierarchical capability × timing model: :func:`fit` → :class:`FitResult`.

See ``docs/model.md`` for the model, its priors and the recovery study.
"""

from .fit import DEFAULT_CHAINS, DEFAULT_DRAWS, FitResult, fit

__all__ = ["DEFAULT_CHAINS", "DEFAULT_DRAWS", "FitResult", "fit"]
