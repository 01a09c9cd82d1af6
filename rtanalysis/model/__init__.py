"""The hierarchical capability × timing model: :func:`fit` → :class:`FitResult`.

See ``docs/model.md`` for the model, its priors and the recovery study.
"""

from .fit import FitResult, fit

__all__ = ["fit", "FitResult"]
