"""The two private nutpie functions model/sampler.py relies on still keep the contract it uses.

nutpie's public ``compile_pymc_model`` compiles through numba or JAX (minutes on a small machine,
not cached between processes); :func:`rtanalysis.model.sampler.compile_model_c` instead asks
``nutpie.compile_pymc._make_functions`` for PyTensor functions in its default C mode (cached on
disk) and hands them to nutpie's public ``compiled_pyfunc.from_pyfunc``. Being private, these may
change in any nutpie release: pyproject.toml caps nutpie below 0.17, requirements.lock pins the
version tested, and this test checks the contract on a model whose log density is known.
"""

import inspect

import numpy as np
import pymc as pm
import pytest
from scipy import stats

nutpie_compile = pytest.importorskip("nutpie.compile_pymc")


@pytest.fixture(scope="module")
def model():
    with pm.Model(coords={"g": ["a", "b"]}) as m:
        pm.Normal("mu", 1.0, 2.0, dims="g")
        pm.HalfNormal("sigma", 3.0)  # transformed: the sampler sees sigma_log__
    return m


@pytest.fixture(scope="module")
def functions(model):
    point_fn = pm.initial_point.make_initial_point_fn(model=model, default_strategy="support_point",
                                                      return_transformed=True)
    return nutpie_compile._make_functions(model, mode="FAST_RUN", compute_grad=True, join_expanded=False,
                                          pymc_initial_point_fn=point_fn)


def test_make_functions_takes_the_keywords_sampler_passes():
    params = inspect.signature(nutpie_compile._make_functions).parameters
    assert {"mode", "compute_grad", "join_expanded", "pymc_initial_point_fn"} <= set(params)
    assert list(inspect.signature(nutpie_compile._prepare_dims_and_coords).parameters) == [
        "model", "shape_info", "reparameterized_names"]


def test_logp_and_gradient_are_the_models_on_the_unconstrained_vector(model, functions):
    n_dim, _, logp_fn, expand_fn, initial_point_fn, shape_info, _ = functions
    assert n_dim == 3  # mu (2) + sigma_log__ (1)
    x = np.array([0.3, -1.2, np.log(1.7)])
    lp, grad = logp_fn(x)
    # known density: two Normal(1, 2) and a HalfNormal(3) on the log scale with its Jacobian
    expected = (stats.norm(1.0, 2.0).logpdf([0.3, -1.2]).sum() + stats.halfnorm(scale=3.0).logpdf(1.7)
                + np.log(1.7))
    assert float(lp) == pytest.approx(expected, rel=1e-6)
    expected_grad = [-(0.3 - 1.0) / 4, -(-1.2 - 1.0) / 4, 1 - 1.7**2 / 9]
    np.testing.assert_allclose(np.asarray(grad, dtype=float), expected_grad, rtol=1e-6)
    names, _, shapes = shape_info
    values = dict(zip(names, expand_fn(x), strict=True))
    np.testing.assert_allclose(np.reshape(values["mu"], shapes[names.index("mu")]), [0.3, -1.2])
    assert float(np.asarray(values["sigma"])) == pytest.approx(1.7)
    assert np.shape(initial_point_fn(0)) == (n_dim,)


def test_dims_and_coords_name_the_models_dimensions(model, functions):
    shape_info, reparam = functions[5], functions[6]
    dims, coords = nutpie_compile._prepare_dims_and_coords(model, shape_info, reparam)
    assert tuple(dims["mu"]) == ("g",)
    assert list(coords["g"]) == ["a", "b"]
