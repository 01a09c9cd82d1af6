"""A PyTensor Op for the one term that dominates the log-density at leaderboard scale.

Per labelled group (model, item, length), ``c·x + (n − c)·log(1 − eˣ)`` with ``x = log P(capable) < 0``
(72,352 groups at 10^6 episodes). PyTensor compiles it with the numba backend, whose kernels call the
scalar libm (numba has no SVML here); NumPy's ``expm1`` and ``log`` are SIMD, so the same value and
gradient as whole arrays cost about half as much (``benchmarks/bench_kernel.py``: 1.16 against
2.16 ms, the gathers and scatters included). The Op computes the value and its gradient in one pass
and hands the gradient to :meth:`pullback`, so NUTS' value-and-gradient call evaluates it once.

Inside the numba-compiled log-density it runs in numba's object mode (one call into NumPy per
evaluation, ~µs); registered with a cache key, so the compiled function still loads from PyTensor's
on-disk cache. ``log(1 − eˣ)`` is ``log(−expm1(x))`` for every ``x`` (PyTensor's ``log1mexp`` switches
to ``log1p(−eˣ)`` below −log 2; both are accurate to the last bits there). Deterministic: NumPy's
element-wise results do not depend on memory alignment, and the two sums are pairwise over the same
order, so same data and seed still give the same draws in any process (``tests/test_model_ops.py``).
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import disconnected_type
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op


def binomial_log1mexp_value_grad(x: np.ndarray, c: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Σ c·x + w·log(1 − eˣ) as a 0-d array, its gradient in ``x``), ``x < 0``, ``w = n − c``."""
    em = np.expm1(x)
    value = np.sum(c * x) + np.sum(w * np.log(-em))
    grad = np.exp(x)  # d/dx log(1 − eˣ) = eˣ / expm1(x) (not (1 + expm1(x)): it cancels where eˣ is small)
    grad /= em
    grad *= w
    grad += c
    return np.asarray(value, dtype=np.float64), grad


class BinomialLog1mexp(Op):
    """``(value, gradient) = op(x, c, w)``: the value ``Σ c·x + w·log(1 − eˣ)`` and its gradient in ``x``
    (the second output exists for :meth:`pullback`; use the first)."""

    __props__ = ()

    def make_node(self, x, c, w):
        x, c, w = (pt.as_tensor_variable(v).astype("float64") for v in (x, c, w))
        return Apply(self, [x, c, w], [pt.dscalar(), pt.dvector()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0], output_storage[1][0] = binomial_log1mexp_value_grad(*inputs)

    def connection_pattern(self, node):
        return [[True, True], [False, False], [False, False]]

    def pullback(self, inputs, outputs, output_grads):
        # c and w are data: no gradient flows to them
        return [output_grads[0] * outputs[1], disconnected_type(), disconnected_type()]


def binomial_log1mexp(x, c, w):
    """``Σ c·x + w·log(1 − eˣ)`` (a scalar), ``x < 0``: a binomial log-likelihood with log p = x."""
    return BinomialLog1mexp()(x, c, w)[0]


def _register_numba() -> None:
    import numba
    from numba.core import types
    from pytensor.link.numba.dispatch.basic import numba_njit, register_funcify_default_op_cache_key

    returns = types.Tuple([types.Array(types.float64, 0, "C"), types.Array(types.float64, 1, "C")])

    @register_funcify_default_op_cache_key(BinomialLog1mexp)
    def _numba_binomial_log1mexp(op, node=None, **kwargs):
        @numba_njit
        def binomial_log1mexp_numba(x, c, w):
            with numba.objmode(out=returns):
                out = binomial_log1mexp_value_grad(x, c, w)
            return out

        return binomial_log1mexp_numba


def _register_jax() -> None:
    try:
        import jax.numpy as jnp
        from pytensor.link.jax.dispatch import jax_funcify
    except ImportError:  # JAX is optional (the numpyro sampler)
        return

    @jax_funcify.register(BinomialLog1mexp)
    def _jax_binomial_log1mexp(op, **kwargs):
        def binomial_log1mexp_jax(x, c, w):
            em = jnp.expm1(x)
            return jnp.sum(c * x) + jnp.sum(w * jnp.log(-em)), c + w * jnp.exp(x) / em

        return binomial_log1mexp_jax


_register_numba()
_register_jax()
