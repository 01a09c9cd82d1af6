"""The nutpie chain runner: chains in forked processes give the same draws as one after another, and a
chain's draws depend on (seed, chain) only."""

import numpy as np
import pymc as pm
import pytest

from rtanalysis.model.sampler import compile_model_c, sample_chains


@pytest.fixture(scope="module")
def compiled():
    y = np.random.default_rng(0).normal(1.0, 2.0, size=50)
    with pm.Model(coords={"g": ["a", "b"]}) as model:
        mu = pm.Normal("mu", 0, 5, dims="g")
        sigma = pm.HalfNormal("sigma", 5)
        pm.Normal("y", mu[np.arange(50) % 2], sigma, observed=y)
    return compile_model_c(model)


def test_parallel_equals_sequential_and_chains_depend_on_seed_and_index_only(compiled):
    par = sample_chains(compiled, draws=50, tune=50, chains=3, seed=7, cores=2)
    seq = sample_chains(compiled, draws=50, tune=50, chains=3, seed=7, cores=1)
    one = sample_chains(compiled, draws=50, tune=50, chains=1, seed=7, cores=1)
    mu = par["posterior"]["mu"]
    assert mu.shape == (3, 50, 2) and list(mu["chain"].values) == [0, 1, 2]
    assert list(mu["g"].values) == ["a", "b"]
    np.testing.assert_array_equal(mu.values, seq["posterior"]["mu"].values)
    np.testing.assert_array_equal(mu.values[0], one["posterior"]["mu"].values[0])
    assert not np.array_equal(mu.values[0], mu.values[1])
    assert par["sample_stats"]["diverging"].shape == (3, 50)
    other = sample_chains(compiled, draws=50, tune=50, chains=1, seed=8, cores=1)
    assert not np.array_equal(other["posterior"]["mu"].values[0], mu.values[0])
