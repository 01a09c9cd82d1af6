"""Sufficient statistics: the aggregated tables reproduce the raw data exactly."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from rtanalysis.model.data import aggregate

from .model_fixtures import degenerate_data, toy_data


@pytest.fixture(scope="module")
def agg():
    lr = toy_data(True)
    return lr, aggregate(lr.episodes, lr.steps)


def test_latency_sufficient_statistics_match_raw_sums(agg):
    lr, d = agg
    st = lr.steps[lr.steps["latency"].notna()]
    for c in d.latency.itertuples():
        sel = (st["model"] == d.models[c.m]) & (st["task_type"] == d.task_types[c.k])
        x = np.log(st.loc[sel, "latency"].to_numpy())
        assert c.n == len(x)
        assert c.s1 == pytest.approx(x.sum(), rel=1e-12)
        assert c.s2 == pytest.approx((x**2).sum(), rel=1e-12)


def test_silent_timed_decisions_are_censored_at_their_close(agg):
    lr, d = agg
    st = lr.steps
    silent = st["no_action"] & (st["clock"] != "paused")
    assert d.censored["count"].sum() == silent.sum()
    paused_silent = (st["no_action"] & (st["clock"] == "paused")).sum()
    assert paused_silent > 0  # present in the toy data, and not censored
    # censor point = max(close, the cell's longest timed latency): never below the window close
    cens = d.censored
    timed = st[(st["clock"] != "paused") & st["latency"].notna()]
    for c in cens.itertuples():
        m, k = d.models[c.m], d.task_types[c.k]
        longest = timed.loc[(timed["model"] == m) & (timed["task_type"] == k), "latency"].max()
        closes = st.loc[silent & (st["model"] == m) & (st["task_type"] == k), "window_close"]
        assert np.exp(c.log_close) == pytest.approx(max(closes.max(), longest))


def test_misses_counted_per_episode_and_zero_under_paused(agg):
    lr, d = agg
    st = lr.steps
    miss = (st["too_early"].fillna(False) | st["too_late"].fillna(False) | st["no_action"]) & (st["clock"] != "paused")
    per_ep = miss.groupby([st["run_id"], st["episode_id"]]).sum()
    key = pd.MultiIndex.from_frame(lr.episodes[["run_id", "episode_id"]])
    expected = per_ep.reindex(key, fill_value=0).to_numpy()
    np.testing.assert_array_equal(d.episodes["M"].to_numpy(), expected)
    assert (d.episodes.loc[d.episodes["clock"] == "paused", "M"] == 0).all()


def test_grouped_counts_cover_every_episode(agg):
    lr, d = agg
    assert d.unlabelled["n"].sum() + d.cap_labelled["n"].sum() == len(lr.episodes)
    assert d.timing_labelled["n"].sum() + d.not_capable_labelled[0] == d.cap_labelled["n"].sum()
    assert d.cap_labelled["capable"].sum() == d.timing_labelled["n"].sum()
    # labelled capable = every acted decision content-correct
    wrong = lr.steps["correct_at_obs"].eq(False).groupby([lr.steps["run_id"], lr.steps["episode_id"]]).any()
    assert d.not_capable_labelled[0] == int(wrong.sum())


def test_unlabelled_data_goes_to_the_marginal_likelihood():
    lr = toy_data(False)
    d = aggregate(lr.episodes, lr.steps)
    assert len(d.cap_labelled) == 0 and d.unlabelled["n"].sum() == len(lr.episodes)
    assert d.unlabelled["y"].sum() == lr.episodes["success"].sum()


def test_degenerate_data_aggregates():
    lr = degenerate_data()
    d = aggregate(lr.episodes, lr.steps)
    assert "nolat" in d.task_types
    k = d.task_types.index("nolat")
    assert not (d.latency["k"] == k).any()  # no latency cell, the prior carries it
    assert (d.episodes["i"] == -1).sum() == 5  # no task id: no item effect


def test_empty_input_is_a_clear_error():
    lr = toy_data(True)
    with pytest.raises(ValueError, match="0 accepted episodes"):
        aggregate(lr.episodes.iloc[:0], lr.steps.iloc[:0])


def test_order_statistic_layout_keeps_every_decision_of_a_small_cell_and_counts_the_rest():
    from rtanalysis.model.data import BIN_QUANTILES, bin_edges, order_statistic_layout

    index, count, weight = order_statistic_layout([0, 1, 5, 8, 60, 1000])
    assert (weight[0] == 0).all() and (count[0] == 0).all()  # no decisions: nothing enters
    np.testing.assert_array_equal(sorted(set(index[2])), range(5))  # ≤ 5 decisions: all kept
    for n, c, w in zip([0, 1, 5, 8, 60, 1000], count, weight, strict=True):
        assert c.sum() + w.sum() == n  # each decision once: as an edge or between two
    np.testing.assert_array_equal(index[5], np.rint(BIN_QUANTILES * 999))
    x = np.random.default_rng(1).normal(size=60)
    np.testing.assert_array_equal(bin_edges(x), np.sort(x)[index[4]])


def _cell_log_likelihood(x, family_name, mu, sigma, **shape):
    """The package's latency log-likelihood (:func:`.build.binned_latency`) of one cell holding ``x``."""
    import pymc as pm
    import pytensor.tensor as pt

    from rtanalysis.model.build import binned_latency
    from rtanalysis.model.data import bin_edges, order_statistic_layout
    from rtanalysis.model.families import family

    _, count, weight = order_statistic_layout([len(x)])
    d = SimpleNamespace(latency=pd.DataFrame({"m": [0]}), bin_edges=bin_edges(x)[None, :],
                        binned=pd.DataFrame(count), edge_weight=weight)
    with pm.Model():
        terms, weights = binned_latency(d, pt.as_tensor([mu]), pt.as_tensor([sigma]), family(family_name),
                                        {k: pt.as_tensor(v) for k, v in shape.items()}, pt.as_tensor([0]))
        return float(pt.sum(terms * weights).eval(mode="FAST_COMPILE"))  # evaluated once: no numba compile


@pytest.mark.slow
def test_latency_likelihood_is_that_of_the_kept_order_statistics():
    """Student-t log-latency: with ≤ 5 decisions every one is kept and the likelihood is Σ log f(x_i);
    with 60 it is the joint density of the kept order statistics, written out here (up to its
    constant), and a tied pair (a coarse clock) enters as the density at the tie."""
    from scipy import stats

    from rtanalysis.model.data import BIN_QUANTILES

    rng = np.random.default_rng(2)
    mu, sigma, nu = 0.3, 0.7, 4.0
    x = rng.normal(size=5)
    exact = stats.t.logpdf(x, nu, mu, sigma).sum()
    assert _cell_log_likelihood(x, "t", mu, sigma, nu=nu) == pytest.approx(exact, rel=1e-8)
    for x in (rng.normal(size=60), np.round(rng.normal(size=60), 1)):  # the second has ties
        k = np.unique(np.rint(BIN_QUANTILES * 59).astype(int))
        y = np.sort(x)[k]
        between = np.diff(np.concatenate([[-1], k, [60]])) - 1
        F = np.concatenate([[0.0], stats.t.cdf(y, nu, mu, sigma), [1.0]])
        lo = np.concatenate([[-np.inf], y])
        hi = np.concatenate([y, [np.inf]])
        log_between = np.where(lo == hi, stats.t.logpdf(hi, nu, mu, sigma), np.log(np.diff(F)))
        expected = stats.t.logpdf(y, nu, mu, sigma).sum() + (between * log_between).sum()
        assert _cell_log_likelihood(x, "t", mu, sigma, nu=nu) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("n", [8, 100])
def test_order_statistic_likelihood_estimates_the_scale_as_the_full_likelihood_does(n):
    """The maximum of the kept order statistics' likelihood estimates σ of standard-normal samples as the
    full data's maximum-likelihood σ does, on average over 150 samples (within 0.03; both are biased
    low at n = 8, by the same amount). Bin counts between each cell's own quantiles, the earlier
    pseudo-likelihood, gave 1.13 at n = 8 with NumPy's linear edges (the changelog, 0.3.0: binned_scale_bias)."""
    from scipy import optimize, stats

    from rtanalysis.model.data import bin_edges, order_statistic_layout

    rng = np.random.default_rng(0)
    _, count, weight = (a[0] for a in order_statistic_layout([n]))
    est, full = [], []
    for _ in range(150):
        x = rng.standard_normal(n)
        e = bin_edges(x)

        def nll(theta):
            loc, scale = theta[0], np.exp(theta[1])
            p = np.diff(np.concatenate([[0.0], stats.norm.cdf(e, loc, scale), [1.0]]))
            return -(count * np.log(np.maximum(p, 1e-300))).sum() - (weight * stats.norm.logpdf(e, loc, scale)).sum()

        est.append(np.exp(optimize.minimize(nll, [0.0, 0.0], method="Nelder-Mead").x[1]))
        full.append(x.std())
    assert abs(np.mean(est) - np.mean(full)) < 0.03, (np.mean(est), np.mean(full))


@pytest.mark.slow
def test_student_t_tails_are_finite_with_finite_gradients_far_out():
    """The t family's log-CDF and log-survival (censored silences, the outer intervals) against scipy
    from z = −1e7 to 1e7, with finite gradients in x and ν everywhere. PyMC's own log-survival is
    −inf with a NaN gradient from z ≈ 30 at ν = 60: every NUTS trajectory that went there stopped
    ("NaN energy error": 399 of 400 draws of one SBC fit divergent, ν's posterior mean 9 for a true 18.5)."""
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt
    from scipy import stats

    from rtanalysis.model.families import FAMILIES

    fam = FAMILIES["t"]
    x, nu = pt.dvector("x"), pt.dscalar("nu")
    lc, ls = fam.pt_logcdf(x, 0.3, 0.7, nu=nu), fam.pt_logsf(x, 0.3, 0.7, nu=nu)
    f = pytensor.function([x, nu], [lc, ls, *pt.grad(lc.sum() + ls.sum(), [x, nu])])
    z = np.array([-1e7, -1e4, -300, -30, -2, 0, 2, 30, 300, 1e4, 1e7])
    for n in (1.5, 9.0, 60.0, 200.0):
        log_cdf, log_sf, gx, gnu = f(0.3 + 0.7 * z, n)
        assert np.isfinite(log_cdf).all() and np.isfinite(log_sf).all() and np.isfinite(gx).all() and np.isfinite(gnu)
        ref_cdf, ref_sf = stats.t.logcdf(z, n), stats.t.logsf(z, n)
        ok = np.isfinite(ref_cdf) & np.isfinite(ref_sf)
        np.testing.assert_allclose(log_cdf[ok], ref_cdf[ok], rtol=1e-3, atol=1e-9)
        np.testing.assert_allclose(log_sf[ok], ref_sf[ok], rtol=1e-3, atol=1e-9)
    pymc_sf = pm.logccdf(pm.StudentT.dist(nu=60.0, mu=0.0, sigma=1.0), 30.0).eval()
    assert np.isneginf(pymc_sf)  # what the family works around (if PyMC fixes it, this test says so)


def test_cell_max_is_the_group_maximum():
    """The censor point's cell maximum (integer codes, one pass) equals a group-by's transform("max"),
    NaN for a cell with no value."""
    from rtanalysis.model.data import _cell_max

    rng = np.random.default_rng(0)
    n = 2000
    cell = tuple(rng.integers(0, r, n) for r in (3, 4, 2))
    values = np.where(rng.random(n) < 0.3, np.nan, rng.exponential(size=n))
    values[(cell[0] == 0) & (cell[1] == 0)] = np.nan  # cells with nothing to take the maximum of
    ref = (pd.DataFrame({"m": cell[0], "k": cell[1], "u": cell[2], "v": values})
           .groupby(["m", "k", "u"])["v"].transform("max").to_numpy())
    assert np.isnan(ref).any()
    np.testing.assert_array_equal(_cell_max(cell, values), ref)
