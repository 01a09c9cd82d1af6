"""The capability term's NumPy Op (:mod:`rtanalysis.model.ops`) gives PyTensor's own value and gradient,
runs inside the numba-compiled log-density without object-mode fallback, and does not depend on where
its arrays sit in memory (what keeps the draws identical across processes)."""

import warnings

import numpy as np
import pytensor
import pytensor.tensor as pt

from rtanalysis.model.ops import binomial_log1mexp, binomial_log1mexp_value_grad


def _data(seed: int = 0, size: int = 5000):
    rng = np.random.default_rng(seed)
    # log p from −40 (p ≈ 4e-18) to −1e-12 (p ≈ 1), spanning both branches of PyTensor's log1mexp
    x = -np.exp(rng.uniform(np.log(1e-12), np.log(40.0), size))
    n = rng.integers(0, 40, size).astype(float)
    c = np.floor(n * rng.uniform(0, 1, size))
    return x, c, n - c


def test_value_and_gradient_equal_pytensors_log1mexp():
    x, c, w = _data()
    X = pt.dvector("x")
    ref = pt.sum(c * X + w * pt.log1mexp(X))
    new = binomial_log1mexp(X, c, w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "Numba will use object mode" fallback: the Op's own kernel runs
        f = pytensor.function([X], [ref, new, pt.grad(ref, X), pt.grad(new, X)])
    v_ref, v_new, g_ref, g_new = f(x)
    assert np.isfinite(v_ref) and v_ref < -1.0
    np.testing.assert_allclose(v_new, v_ref, rtol=1e-13)
    np.testing.assert_allclose(g_new, g_ref, rtol=1e-11, atol=1e-300)
    # and a term that depends on x through another variable (the chain rule through the Op)
    s = pt.dscalar("s")
    h = pytensor.function([s], pt.grad(binomial_log1mexp(s * X, c, w), s), givens={X: x})
    eps = 1e-6
    numeric = (binomial_log1mexp_value_grad((1 + eps) * x, c, w)[0]
               - binomial_log1mexp_value_grad((1 - eps) * x, c, w)[0]) / (2 * eps)
    np.testing.assert_allclose(h(1.0), numeric, rtol=1e-6)


def test_result_does_not_depend_on_memory_alignment():
    x, c, w = _data(seed=1, size=4099)
    ref_v, ref_g = binomial_log1mexp_value_grad(x, c, w)
    for offset in range(1, 8):  # the same values at every 8-byte offset within a 64-byte line
        buf = np.empty(len(x) + offset)
        xs = buf[offset:]
        xs[:] = x
        v, g = binomial_log1mexp_value_grad(xs, c, w)
        assert v.tobytes() == ref_v.tobytes() and g.tobytes() == ref_g.tobytes(), offset
