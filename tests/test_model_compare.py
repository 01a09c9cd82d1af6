"""Latency family choice by PSIS-LOO: heavy-tailed latencies pick Student-t, two-mode ones the
mixture, log-normal ones Normal."""

import numpy as np
import pytest

from rtanalysis.model.compare import loo_pointwise, family_choice_summary, choose_family, latency_loo
from rtanalysis.model.data import aggregate


def test_psis_loo_matches_exact_leave_one_out_for_a_normal_mean():
    """Conjugate normal mean with known σ: exact LOO predictive densities in closed form."""
    from scipy.stats import norm

    rng = np.random.default_rng(0)
    y = rng.normal(1.0, 1.0, 30)
    n, S = len(y), 40000
    post = rng.normal(y.mean(), 1 / np.sqrt(n), S)  # flat prior
    ll = norm.logpdf(y[None, :], post[:, None], 1.0)
    elpd, _, khat = loo_pointwise(ll)
    loo_mean = (y.sum() - y) / (n - 1)
    exact = norm.logpdf(y, loo_mean, np.sqrt(1 + 1 / (n - 1)))
    np.testing.assert_allclose(elpd, exact, atol=0.01)
    assert khat.max() < 0.5


def test_a_chain_that_stopped_moving_is_reported_unreliable_not_an_error():
    """A column whose largest log-likelihoods are all equal (one chain stuck at one point) cannot be
    Pareto-smoothed: arviz_stats raises; here it gets k = inf (unreliable) and the others are smoothed."""
    rng = np.random.default_rng(1)
    ll = rng.normal(-1.0, 0.1, (1000, 3))
    ll[:, 1] = -2.0  # every draw the same
    ll[:500, 2] = -1.5  # half the draws stuck at the smallest value (the largest importance weights)
    elpd, _, khat = loo_pointwise(ll)
    assert np.isinf(khat[1]) and np.isinf(khat[2]) and khat[0] < 0.7
    assert elpd[1] == pytest.approx(-2.0) and np.isfinite(elpd).all()


def test_auto_keeps_normal_where_no_latency_cell_has_spread():
    """The RealtimeGym fixture logs tick lengths and caps only: no latency cell enters the likelihood,
    so LOO has nothing to compare (its fits on the tied values ran away to σ → 0 and crashed the
    report); the table is empty and the normal family is kept."""
    import rtanalysis

    lr = rtanalysis.load("rtanalysis/data/realtimegym")
    d = aggregate(lr.episodes, lr.steps)
    assert not d.latency["informative"].any()
    table = latency_loo(d)
    assert table.empty and choose_family(table) == "normal"


def _table(elpd, se_diff, k):
    import pandas as pd

    t = pd.DataFrame({"family": ["normal", "t", "mixture"], "elpd_loo": elpd, "se_diff": se_diff, "max_pareto_k": k})
    t["elpd_diff"] = t["elpd_loo"].max() - t["elpd_loo"]
    t["chosen"] = t["family"] == choose_family(t)
    return t


def test_the_simplest_family_within_the_margin_of_the_best_is_chosen():
    # the mixture is best, but t is within max(4, 2 SE) of it: t; the normal is not: not normal
    assert choose_family(_table([-130.0, -103.0, -100.0], [10.0, 2.0, 0.0], [0.1] * 3)) == "t"
    # a clear win over both simpler families
    assert choose_family(_table([-130.0, -120.0, -100.0], [5.0, 4.0, 0.0], [0.1] * 3)) == "mixture"
    # a gain smaller than 4 never counts, however small its SE
    assert choose_family(_table([-103.5, -100.0, -101.0], [0.1, 0.0, 0.1], [0.1] * 3)) == "normal"


def test_family_choice_summary_warns_when_the_chosen_familys_loo_is_unreliable():
    reliable = family_choice_summary(_table([-130.0, -120.0, -100.0], [5.0, 4.0, 0.0], [0.2, 0.3, 0.5]))
    assert reliable.startswith("The latency family (mixture)") and "normal 30.0 (SE 5.0)" in reliable
    assert "unreliable" not in reliable
    shaky = family_choice_summary(_table([-130.0, -120.0, -100.0], [5.0, 4.0, 0.0], [0.2, 0.3, 2.7]))
    assert "largest Pareto k is 2.70" in shaky and "unreliable" in shaky


@pytest.mark.slow
@pytest.mark.xdist_group("latency_families")  # each compiles every family: the first pays, the others reuse
@pytest.mark.parametrize("preset, size, expected", [("timing_dominated", {}, "normal"),
                                                  ("timing_dominated", {"latency_df": 2.0}, "t"),
                                                  # two modes need more decisions to tell from one: the
                                                  # preset's own size (60 episodes per cell; at 12, Δelpd 8.8, SE 5.1)
                                                  ("bimodal", None, "mixture")])
def test_auto_chooses_the_generating_family(preset, size, expected):
    from rtanalysis.simulate import simulate

    sim = simulate(preset, seed=3, **({} if size is None else {"tasks": 4, "seeds": 3, **size}))
    lr = sim.load()
    table = latency_loo(aggregate(lr.episodes, lr.steps), draws=300, chains=2, seed=1)
    assert set(table["family"]) == {"normal", "t", "mixture"}
    assert choose_family(table) == expected, table
    assert table.loc[table["chosen"], "family"].item() == expected
    # the chosen family's PSIS estimate is reliable (a misfitting family may have influential bins)
    assert (table.loc[table["chosen"], "max_pareto_k"] < 0.7).all(), table
    if expected != "normal":  # a clear win over the log-normal, not a coin toss
        t = table.set_index("family")
        assert t.loc[expected, "elpd_loo"] - t.loc["normal", "elpd_loo"] > 2 * t.loc["normal", "se_diff"], table
