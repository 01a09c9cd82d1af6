"""Episode slowness (``ModelSpec(episode_effects=True)``, the default): an episode's log-latencies share a random
intercept. The likelihood on grouped sufficient statistics equals the multivariate normal of each episode's
decisions; the derived P(timely) integrates the slowness out; (slow) on the ``episode_effects`` preset, where
decisions treated as independent (the default before episode slowness) put 12 % of 90 % intervals of p_timely around the truth
(studies/results/misspec_defaults.csv), episode slowness recovers it."""

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from rtanalysis import ModelSpec
from rtanalysis.metrics.latency import floored_log_latency
from rtanalysis.model.build import build_model
from rtanalysis.model.data import aggregate
from rtanalysis.model.derived import param_draws
from rtanalysis.simulate import simulate
from tests.fits import shared_fit, simulated
from tests.recovery import assert_recovered
from tests.test_model_structures import _point_draws


def test_latency_term_is_each_episodes_multivariate_normal():
    """At random points of the default model, its ``latency_obs`` potential equals Σ over episodes of the
    multivariate normal log-density of the episode's acted log-latencies with covariance σ_w² I + τ² 11ᵀ
    (τ² = r σ², σ_w² = (1 − r) σ²), computed from the frames one episode at a time."""
    lr = simulate("episode_effects", seed=2, tasks=2, seeds=2).load()
    d = aggregate(lr.episodes, lr.steps)
    model = build_model(d, episode_latency=True)
    assert "latency_icc" in model.named_vars
    st = lr.steps.copy()
    st["x"] = floored_log_latency(st["latency"].to_numpy(float), st["time_unit"].astype(str).to_numpy())
    st = st[st["x"].notna()]
    ep_key = ["run_id", "episode_id"]
    for seed in (1, 2):
        ds = _point_draws(model, seed)
        p = param_draws(ds, d, seed=seed)
        icc = p.latency_icc[0]
        total = 0.0
        for _, g in st.groupby(ep_key, sort=False):
            m, k, u = (getattr(d, a).index(str(g[c].iloc[0])) for a, c in
                       (("models", "model"), ("task_types", "task_type"), ("units", "time_unit")))
            mu, sd = p.mu[0, u, m, k], p.sigma[0, u, m, k]
            n = len(g)
            cov = sd**2 * ((1 - icc[k]) * np.eye(n) + icc[k] * np.ones((n, n)))
            total += multivariate_normal(np.full(n, mu), cov).logpdf(g["x"].to_numpy())
        np.testing.assert_allclose(float(ds["latency_obs"].values.ravel()[0]), total, rtol=1e-9)
    # decisions independent when asked: no intraclass correlation in the model
    assert "latency_icc" not in build_model(d).named_vars
    assert "latency_icc" not in build_model(d, item_latency=True, episode_latency=True).named_vars


@pytest.mark.slow
@pytest.mark.xdist_group("episode-effects")
def test_episode_slowness_recovers_timing_where_misses_cluster_within_episodes():
    """``episode_effects`` (per-episode slowness SD 0.5 beside a decision SD of 0.5: an intraclass
    correlation of 0.5; per-episode ability SD 1, correlated −0.7 / −0.4 / 0 with it), fitted at the
    defaults but for episode slowness: the intraclass correlation recovered within its 90 % interval's reach, and p_timely,
    share_timing and p_capable recovered to the posterior's spread (mean |error| ≤ 0.05, RMS standardised
    error ≤ 2 over the 6 timed rows)."""
    sim = simulated("episode_effects", 100)
    res = shared_fit("preset", ModelSpec(episode_effects=True), preset="episode_effects", sim_seed=100, draws=400,
                     seed=100, ci_prob=0.9)
    assert res.diagnostics["n_divergent"] == 0
    icc = res.idata["posterior"]["latency_icc"]
    lo, hi = icc.quantile([0.05, 0.95], dim=("chain", "draw")).values
    assert ((lo - 0.05 <= 0.5) & (0.5 <= hi + 0.05)).all(), (lo, hi)
    assert_recovered(res, sim.truth)


def test_silences_share_their_episodes_slowness():
    """The LLM Colosseum season (Gemini's timeouts cluster: 10–15 of an episode's decisions): under episode
    slowness the ``silence_hurdle`` potential equals, per group of alike episodes, the integral over the
    episode's slowness s ~ N(0, rσ²) of N(x̄ | μ + s, σ_w²/n) · Π_j [π + (1 − π) S(g_j | μ + s, σ_w)]
    (and π = 0 for a model without the no-answer mode), divided by the acted latencies' own integral — by
    adaptive quadrature (scipy), independent of the model's Gauss–Hermite nodes (32; error ≤ 1.4e-5 a
    group at these points, 16 nodes gave 3.1). The derived quantities' mode probability uses the same
    two likelihoods (NumPy)."""
    from scipy import integrate, stats

    import rtanalysis
    from rtanalysis.model.derived import silence_mode_probability

    lr = rtanalysis.load(rtanalysis.example_data("llm-colosseum"))
    d = aggregate(lr.episodes, lr.steps)
    T, L = d.silent_episodes, d.latency
    assert (T["count"] * T["c"]).sum() == d.censored["count"].sum() and T["count"].max() >= 10
    model = build_model(d, episode_latency=True)
    for seed in (1, 2):
        ds = _point_draws(model, seed)
        p = param_draws(ds, d, seed=seed)
        pi, prev = ds["silence"].values.reshape(1, -1), ds["silence_prevalence"].values.reshape(1)
        with_mode, without = np.zeros(len(d.models)), np.zeros(len(d.models))
        for _, rows in T.groupby("g"):
            cell = rows["cell"].iloc[0]
            m, k, u = L.loc[cell, ["m", "k", "u"]]
            mu, sd, r = p.mu[0, u, m, k], p.sigma[0, u, m, k], p.latency_icc[0, k]
            tau, sw, n, xb = sd * np.sqrt(r), sd * np.sqrt(1 - r), rows["n"].iloc[0], rows["xbar"].iloc[0]
            acted = (lambda s: stats.norm.pdf(s, 0, tau) * stats.norm.pdf(xb, mu + s, sw / np.sqrt(n))) if n else (
                lambda s: stats.norm.pdf(s, 0, tau))
            # the integrand's mass: where the acted latencies put the slowness (the range only)
            centre, spread = n * tau**2 * (xb - mu) / (sw**2 + n * tau**2), tau * sw / np.sqrt(sw**2 + n * tau**2)
            span = dict(a=centre - 14 * spread, b=centre + 14 * spread, limit=400, epsabs=0, epsrel=1e-11)

            def silent(s, p_no_answer):
                return np.prod([(p_no_answer + (1 - p_no_answer) * stats.norm.sf(g, mu + s, sw)) ** c
                                for g, c in zip(rows["log_close"], rows["count"])])

            norm = integrate.quad(acted, **span)[0]
            for total, p_no in ((with_mode, pi[0, m]), (without, 0.0)):
                total[m] += rows["c"].iloc[0] * np.log(integrate.quad(lambda s: acted(s) * silent(s, p_no), **span)[0]
                                                       / norm)
        np.add.at(with_mode, d.exposure["m"].to_numpy(), d.exposure["n_acted"].to_numpy() * np.log1p(-pi[0])[
            d.exposure["m"].to_numpy()])
        want = np.logaddexp(np.log(prev) + with_mode, np.log1p(-prev) + without)
        np.testing.assert_allclose(float(ds["silence_hurdle"].values.ravel()[0]), want.sum(), rtol=0, atol=1e-4)
        mode = silence_mode_probability(p.mu, p.sigma, p.family, p.shape, pi, prev, d, latency_icc=p.latency_icc)
        np.testing.assert_allclose(mode[0], np.exp(np.log(prev) + with_mode - want), atol=1e-5)


def test_one_silence_in_closed_form_equals_its_integral():
    """An episode with one silence enters in closed form, E_s S(g | μ + s, σ_w) = S(g | centre, √(v + σ_w²)):
    equal, with the no-answer mode and without, to the integral over the slowness by adaptive quadrature
    (scipy), at points from a wide range of spreads, shares and acted counts (n = 0: the prior alone)."""
    from scipy import integrate, stats

    from rtanalysis.model.families import family, single_silence_loglik, slowness_given_acted

    rng = np.random.default_rng(5)
    G = 12
    mu, sigma, icc = rng.normal(1.0, 1.0, G), rng.uniform(0.2, 2.0, G), rng.uniform(0.01, 0.95, G)
    n, xbar = rng.integers(0, 30, G).astype(float), rng.normal(1.5, 1.0, G)
    log_close, pi = rng.normal(1.5, 1.5, G), rng.uniform(0.01, 0.6, G)
    with_mode, without = single_silence_loglik(family("normal").logsf, log_close, mu, sigma, icc, n, xbar, np.log(pi),
                                               np.log1p(-pi), np.logaddexp, np.sqrt)
    centre, v, sd_w = slowness_given_acted(mu, sigma, icc, n, xbar, np.sqrt)
    for j in range(G):
        def mean_sf(p_no, j=j):
            return integrate.quad(lambda x: stats.norm.pdf(x, centre[j], np.sqrt(v[j]))
                                  * (p_no + (1 - p_no) * stats.norm.sf(log_close[j], x, sd_w[j])),
                                  centre[j] - 14 * np.sqrt(v[j]), centre[j] + 14 * np.sqrt(v[j]), epsabs=0,
                                  epsrel=1e-12, limit=400)[0]
        np.testing.assert_allclose([with_mode[j], without[j]], np.log([mean_sf(pi[j]), mean_sf(0.0)]), rtol=0,
                                   atol=1e-8)
    assert np.ptp(without) > 3  # the points reach from near-certain silences to rare ones
