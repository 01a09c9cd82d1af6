"""The nutpie chain runner: chains in forked processes give the same draws as one after another, and a
chain's draws depend on (seed, chain) only."""

import numpy as np
import pymc as pm
import pytest

from rtanalysis.model.sampler import compile_model_c, sample_chains, towards_mode


@pytest.fixture(scope="module")
def compiled():
    y = np.random.default_rng(0).normal(1.0, 2.0, size=50)
    with pm.Model(coords={"g": ["a", "b"]}) as model:
        mu = pm.Normal("mu", 0, 5, dims="g")
        sigma = pm.HalfNormal("sigma", 5)
        pm.Normal("y", mu[np.arange(50) % 2], sigma, observed=y)
    return compile_model_c(model)


@pytest.mark.slow
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
    # the warm-up's draws are not kept (nothing reads them; they doubled the posterior's memory), its
    # sample stats are (how the tuning went)
    assert "warmup_posterior" not in par.children and "warmup_posterior" not in seq.children
    assert par["warmup_sample_stats"]["step_size"].shape == (3, 50)
    other = sample_chains(compiled, draws=50, tune=50, chains=1, seed=8, cores=1)
    assert not np.array_equal(other["posterior"]["mu"].values[0], mu.values[0])


def _quadratic(mode):
    """log-density −½|x − mode|² and its gradient."""
    def logp_grad(x):
        return -0.5 * float(np.sum((x - mode) ** 2)), -(x - mode)
    return logp_grad


def test_towards_mode_moves_free_coordinates_uphill_and_keeps_the_others():
    mode = np.array([3.0, -2.0, 1.0, 5.0])
    x0 = np.zeros(4)
    free = np.array([True, True, False, True])
    x = towards_mode(_quadratic(mode), x0, free, steps=20)
    np.testing.assert_allclose(x[free], mode[free], atol=1e-6)  # a quadratic: L-BFGS reaches its mode
    assert x[2] == 0.0 and x0[2] == 0.0  # fixed coordinate untouched, x0 not modified
    np.testing.assert_array_equal(x, towards_mode(_quadratic(mode), x0, free, steps=20))  # deterministic
    one = towards_mode(_quadratic(mode), x0, free, steps=1)  # a bounded walk stops short of the mode
    assert 0 < _quadratic(mode)(one)[0] - _quadratic(mode)(x0)[0] and not np.allclose(one[free], mode[free])
    np.testing.assert_array_equal(towards_mode(_quadratic(mode), x0, free, steps=0), x0)


def test_towards_mode_keeps_a_start_it_cannot_improve():
    def nowhere(x):
        return -np.inf, np.full_like(x, np.nan)
    x0 = np.array([1.0, 2.0])
    np.testing.assert_array_equal(towards_mode(nowhere, x0, np.ones(2, bool)), x0)


def test_chains_start_uphill_from_their_jittered_points_and_apart():
    """Informative data put the jittered start far out in the tail; each chain starts from it moved
    uphill, the group scale (``sd_*``) where the jitter put it, and two chains still apart."""
    rng = np.random.default_rng(1)
    g = np.repeat(np.arange(20), 200)
    y = rng.normal(3.0 + rng.normal(0, 1, 20)[g], 0.5)
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 10)
        sd = pm.HalfNormal("sd_group", 2)
        eff = pm.Normal("eff", mu, sd, shape=20)
        pm.Normal("y", eff[g], 0.5, observed=y)
    jittered = compile_model_c(model, init_steps=0)
    moved = compile_model_c(model, init_steps=100)
    logp = jittered._make_logp_func()
    names = [model.rvs_to_values[v].name for v in model.free_RVs]
    sd_at = names.index("sd_group_log__")  # mu (1), sd (1), eff (20): the flat order of the free variables
    starts = []
    for seed in (3, 4):
        x0, x = jittered._make_initial_points(seed), moved._make_initial_points(seed)
        assert logp(x)[0] > logp(x0)[0] + 1000  # far out in the tail before
        assert x[sd_at] == x0[sd_at]
        starts.append(x)
    assert not np.allclose(starts[0], starts[1])
