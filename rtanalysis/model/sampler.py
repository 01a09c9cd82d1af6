"""nutpie's NUTS on a log-density compiled by PyTensor's default backend, with its on-disk cache.

``nutpie.compile_pymc_model`` compiles the model into one numba function for its Rust side, which
costs minutes on a small machine and is not cached between processes. PyTensor's own compiled
functions are cached in ``compiledir`` (``PYTENSOR_FLAGS=base_compiledir=...``, set by the Makefile),
so here the log-density and its gradient are compiled by PyTensor and handed to nutpie's Rust
sampler as Python callables (``nutpie.compiled_pyfunc.from_pyfunc``; the route nutpie takes for
JAX). Each chain gets its own copy of the function (PyTensor functions are not thread-safe).

Compiled without numba's fastmath: with it, vectorised reductions depend on memory alignment, the
log-density differs in the last bits between processes and NUTS amplifies that into different
draws; without it, same data and seed give bit-identical posteriors in any process.
"""

from __future__ import annotations

import numpy as np


def compile_model_c(model):
    """A nutpie ``CompiledModel`` for ``model`` whose logp/gradient run in PyTensor's C backend."""
    from nutpie.compile_pymc import _make_functions, _prepare_dims_and_coords
    from nutpie.compiled_pyfunc import from_pyfunc
    from pymc.initial_point import make_initial_point_fn

    point_fn = make_initial_point_fn(model=model, default_strategy="support_point",
                                     jitter_rvs=set(model.free_RVs), return_transformed=True)
    import threading

    lock = threading.Lock()

    def locked_point_fn(seed):
        with lock:
            return point_fn(seed)

    import pytensor

    # set for the process, not in a context: numba compiles lazily, at the first call
    pytensor.config.numba__fastmath = False
    n_dim, _, logp_fn_pt, expand_fn_pt, initial_point_fn, shape_info, reparam = _make_functions(
        model, mode="FAST_RUN", compute_grad=True, join_expanded=False,
        pymc_initial_point_fn=locked_point_fn)
    names, _, shapes = shape_info
    dtypes = [np.dtype("float64")] * len(names)

    def make_logp_func():
        fn = logp_fn_pt.copy(share_memory=False)

        def logp(x, **_):
            lp, grad = fn(x)
            return float(lp), np.asarray(grad, dtype="float64", order="C")

        return logp

    def make_expand_func(seed1, seed2, chain):
        fn = expand_fn_pt.copy(share_memory=False)

        def expand(x, **_):
            return {n: np.asarray(v, order="C", dtype=t).reshape(s)
                    for n, v, t, s in zip(names, fn(x), dtypes, shapes, strict=True)}

        return expand

    dims, coords = _prepare_dims_and_coords(model, shape_info, reparam)
    return from_pyfunc(ndim=n_dim, make_logp_fn=make_logp_func, make_expand_fn=make_expand_func,
                       make_initial_point_fn=initial_point_fn, expanded_dtypes=dtypes, expanded_shapes=shapes,
                       expanded_names=names, dims=dims, coords=coords, reparameterized_names=reparam)
