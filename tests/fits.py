"""The posteriors the tests read, made once per test worker and shared.

One registry keyed by the data (a registered name and its arguments), the model's spec and the
sampling options: a test asks :func:`shared_fit` for a fit, and a second test asking for the same
key gets the same object, so no two tests sample the same model. Data sets are registered by name
with the function that makes them (:func:`data_set`); the simulator's presets are ``"preset"``.
Tests that share a fit also share an ``xdist_group``, so the fit is made on one worker only.
"""

from __future__ import annotations

import inspect
from functools import cache
from typing import Callable

from rtanalysis.model import ModelSpec

#: data set name -> the function that makes it from keyword arguments (a LoadResult or frames)
DATA: dict[str, Callable] = {}
_FITS: dict[tuple, object] = {}
#: :func:`shared_fit`'s own arguments, which a data set's may not share
FIT_ARGUMENTS = {"data", "spec", "seed", "draws", "chains", "tune", "ci_prob"}


def data_set(name: str):
    """Register the decorated function as the data set ``name`` (its results are cached too)."""

    def register(fn):
        if name in DATA:
            raise ValueError(f"data set {name!r} is registered twice")
        # a data argument named like one of shared_fit's own would be taken as the sampling's
        clash = set(inspect.signature(fn).parameters) & FIT_ARGUMENTS
        if clash:
            raise ValueError(f"data set {name!r}: rename its argument(s) {sorted(clash)} (e.g. seed -> sim_seed)")
        DATA[name] = cache(fn)
        return DATA[name]

    return register


@cache
def simulated(preset: str, seed: int, **options):
    """A simulated benchmark (:func:`rtanalysis.simulate.simulate`), with its truth; cached."""
    from rtanalysis.simulate import simulate

    return simulate(preset, seed=seed, **options)


@data_set("preset")
def _preset(preset: str, sim_seed: int, **options):
    """A preset simulated with seed ``sim_seed`` (``seed`` is :func:`shared_fit`'s sampling seed)."""
    return simulated(preset, sim_seed, **options).load()


def shared_fit(data: str, spec: ModelSpec | str | None = None, *, seed: int = 0, draws: int = 300, chains: int = 2,
               tune: int | None = None, ci_prob: float = 0.95, **data_args):
    """The fit of the data set ``data`` (made with ``data_args``) under ``spec`` with this sampling:
    made on first use, then shared. ``tune=None`` (as many tuning steps as draws, never retried) is
    the tests' default: what a test checks must not depend on a retry."""
    from rtanalysis import fit

    spec = ModelSpec.coerce(spec)
    key = (data, tuple(sorted(data_args.items())), spec, seed, draws, chains, tune, ci_prob)
    if key not in _FITS:
        _FITS[key] = fit(DATA[data](**data_args), spec, draws=draws, chains=chains, seed=seed, ci_prob=ci_prob,
                         tune=tune, progress=False)
    return _FITS[key]
