"""The hierarchical capability × timing model.

Where things are:

* **what to fit**: :mod:`.spec` (:class:`ModelSpec`: the latency family and the structure, and the
  registry of structure parts);
* **the model**: :mod:`.data` (the logs aggregated into sufficient statistics), :mod:`.build` (the
  PyMC model: the likelihood), :mod:`.families` (latency families), :mod:`.priors` (the prior
  registry);
* **fitting**: :mod:`.fit` (:func:`fit`), :mod:`.sampler`, :mod:`.diagnostics`;
* **the result**: :mod:`.result` (:class:`FitResult`), computed from the draws by :mod:`.derived`
  (P(capable), P(timely), the timing share, counterfactuals), :mod:`.checks` (predictive checks),
  :mod:`.compare` and :mod:`.choice` (PSIS-LOO choice of the latency family and the structure),
  :mod:`.sensitivity` (prior sensitivity), :mod:`.frequentist` (the statsmodels cross-check),
  :mod:`.assumptions`, :mod:`.harmony`;
* **simulation studies**: :mod:`.studies` (SBC, calibration on simulated designs, toy designs).
"""

from .fit import DEFAULT_CHAINS, DEFAULT_DRAWS, fit
from .result import FitResult
from .spec import PARTS, STRUCTURES, ModelSpec

__all__ = ["DEFAULT_CHAINS", "DEFAULT_DRAWS", "FitResult", "ModelSpec", "PARTS", "STRUCTURES", "fit"]
