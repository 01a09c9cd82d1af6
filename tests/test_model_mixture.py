"""The two-mode latency family (``latency_family="mixture"``): its numpy functions agree with each
other, its binned likelihood equals the mixture's bin probabilities written out, and (slow) it
recovers the decomposition on the ``bimodal`` preset, where the default family's p_timely misses."""

import numpy as np
import pytest
from scipy.stats import norm

from rtanalysis.model import ModelSpec
from rtanalysis.model.build import build_model
from rtanalysis.model.data import aggregate
from rtanalysis.model.families import FAMILIES
from rtanalysis.simulate import simulate
from tests.fits import shared_fit, simulated
from tests.recovery import assert_recovered


def test_mixture_quantile_inverts_its_cdf_and_log_sf_is_its_sf():
    fam = FAMILIES["mixture"]
    rng = np.random.default_rng(0)
    mu, sigma = rng.normal(0, 1, 500), rng.uniform(0.2, 1.5, 500)
    shape = {"mode_share": rng.uniform(0.01, 0.5, 500), "mode_shift": rng.uniform(-4, 4, 500)}
    u = rng.uniform(1e-6, 1 - 1e-6, 500)
    x = fam.ppf(u, mu, sigma, **shape)
    np.testing.assert_allclose(fam.cdf(x, mu, sigma, **shape), u, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fam.cdf(x, mu, sigma, **shape) + fam.sf(x, mu, sigma, **shape), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.exp(fam.logsf(x, mu, sigma, **shape)), fam.sf(x, mu, sigma, **shape), rtol=1e-9)
    # far in the tail the log survival stays finite where the survival underflows
    assert np.isfinite(fam.logsf(np.array([60.0]), 0.0, 1.0, mode_share=0.2, mode_shift=1.0)).all()


@pytest.fixture(scope="module")
def sim():
    return simulate("bimodal", seed=4, tasks=3, seeds=2, labelled=False)


@pytest.mark.slow
def test_mixture_binned_likelihood_equals_the_bin_probabilities(sim):
    """At a random parameter point: the latency potential equals Σ count · log P(between edges) + Σ weight ·
    log f(edge), the likelihood of each cell's kept order statistics, with F = (1 − w)·Φ((e − μ + wδs)/s)
    + w·Φ((e − μ − (1 − w)δs)/s) and f its derivative, w = w_m, s = σ / √(1 + w(1 − w)δ²) (mean μ,
    total SD σ)."""
    from pymc.initial_point import make_initial_point_fn

    lr = sim.load()
    d = aggregate(lr.episodes, lr.steps)
    model = build_model(d, "mixture")
    point = make_initial_point_fn(model=model, jitter_rvs=set(model.free_RVs), return_transformed=True)(3)
    names = ["c0", "model_lat", "type_lat", "model_type_lat", "s0", "model_sigma", "type_sigma", "mode_share",
             "mode_shift"]
    outs = model.replace_rvs_by_values([model[n] for n in names] + [model["latency_obs"]])
    fn = model.compile_fn(outs, inputs=model.value_vars, on_unused_input="ignore", mode="FAST_COMPILE")  # evaluated once
    v = dict(zip(names + ["lat"], fn(point)))
    L = d.latency
    m, k, u = (L[c].to_numpy() for c in ("m", "k", "u"))
    mu = v["c0"][u] + v["model_lat"][m] + v["type_lat"][k] + v["model_type_lat"][m, k]
    sigma = np.exp(v["s0"][u] + v["model_sigma"][m] + v["type_sigma"][k])
    w, shift = v["mode_share"][m][:, None], v["mode_shift"][m][:, None]
    edges = d.bin_edges
    s = sigma[:, None] / np.sqrt(1 + w * (1 - w) * shift**2)
    z_major, z_minor = (edges - mu[:, None] + w * shift * s) / s, (edges - mu[:, None] - (1 - w) * shift * s) / s
    cdf = (1 - w) * norm.cdf(z_major) + w * norm.cdf(z_minor)
    sf = (1 - w) * norm.sf(z_major) + w * norm.sf(z_minor)
    zeros, ones = np.zeros((len(L), 1)), np.ones((len(L), 1))
    cdf, sf = np.concatenate([zeros, cdf, ones], axis=1), np.concatenate([ones, sf, zeros], axis=1)
    # a bin in the upper half from the survival function (a CDF difference loses its digits there)
    prob = np.where(cdf[:, 1:] < 0.5, np.diff(cdf, axis=1), -np.diff(sf, axis=1))
    keep = L["informative"].to_numpy(float)[:, None]
    # two quantiles of a small cell at one order statistic: equal edges, nothing between them (adds 0)
    counts = d.binned.to_numpy()
    assert (counts[:, 1:-1][np.diff(edges, axis=1) == 0] == 0).all()
    log_pdf = np.log(((1 - w) * norm.pdf(z_major) + w * norm.pdf(z_minor)) / s)
    with np.errstate(divide="ignore", invalid="ignore"):
        between = np.where(counts > 0, counts * np.log(np.where(counts > 0, prob, 1.0)), 0.0)
    direct = (keep * between).sum() + (keep * d.edge_weight * log_pdf).sum()
    assert d.edge_weight.sum() > 0 and (d.edge_weight.sum(axis=1) <= len(d.bin_edges[0])).all()
    assert 0.05 < v["mode_share"].min() and np.abs(v["mode_shift"]).min() > 0.1  # both modes matter
    np.testing.assert_allclose(v["lat"], direct, rtol=1e-9)


def test_chains_start_on_the_side_each_model_is_skewed_to(sim):
    """The mixture's starting values: a slower second mode (δ > 0) for right-skewed log-latencies, a
    faster one for their mirror image (the cells' quantile edges negated), never jittered."""
    from dataclasses import replace

    from rtanalysis.model.families import skew_sign

    lr = sim.load()
    d = aggregate(lr.episodes, lr.steps)
    assert (skew_sign(d) == 1).all()  # bimodal: 30 % of decisions in a slow mode
    mirrored = replace(d, bin_edges=-d.bin_edges[:, ::-1])
    assert (skew_sign(mirrored) == -1).all()
    start = FAMILIES["mixture"].initial(mirrored)
    np.testing.assert_array_equal(start["mode_shift"], -2.0)
    model = build_model(d, "mixture")
    assert model.rvs_to_initial_values[model["mode_shift"]] is not None


@pytest.mark.slow
def test_mixture_recovers_the_decomposition_where_latency_has_two_modes():
    """``bimodal`` (30 % of decisions in a reasoning mode, log-latency +1.4, within-mode SD 0.5): the default family's
    90 % intervals of p_timely cover 0.28 of cells (docs/validation.md, misspecification table). With
    the mixture family the errors are of the size of the posterior spread (mean |error| ≤ 0.05,
    RMS standardised error ≤ 2), the modes are recovered, and the latency checks do not flag it."""
    sim = simulated("bimodal", 100, labelled=False)
    res = shared_fit("preset", ModelSpec("mixture"), preset="bimodal", sim_seed=100, labelled=False, draws=400, seed=100,
                     ci_prob=0.9)
    assert res.diagnostics["n_divergent"] == 0
    post = res.idata["posterior"]
    # per model, label-free: a slow mode with 30 % of decisions, 1.4 / 0.5 within-mode SDs above the other
    assert np.abs(post["mode_gap"].mean(("chain", "draw")).values - 1.4 / 0.5).max() < 0.3
    assert np.abs(post["slow_mode_share"].mean(("chain", "draw")).values - 0.3).max() < 0.08
    assert_recovered(res, sim.truth)
    flags = res.ppc_flags()
    posterior = flags[flags["kind"] == "posterior"].set_index("family")
    assert not posterior.loc[["latency_body", "latency_tail"], "flagged"].any(), posterior
