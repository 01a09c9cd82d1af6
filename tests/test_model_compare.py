"""Latency family choice by PSIS-LOO: heavy-tailed latencies pick Student-t, two-mode ones the
mixture, log-normal ones Normal."""

import numpy as np
import pytest

from rtanalysis.model.compare import _loo_pointwise, choose_family, latency_loo
from rtanalysis.model.data import aggregate


def test_psis_loo_matches_exact_leave_one_out_for_a_normal_mean():
    """Conjugate normal mean with known σ: exact LOO predictive densities in closed form."""
    from scipy.stats import norm

    rng = np.random.default_rng(0)
    y = rng.normal(1.0, 1.0, 30)
    n, S = len(y), 40000
    post = rng.normal(y.mean(), 1 / np.sqrt(n), S)  # flat prior
    ll = norm.logpdf(y[None, :], post[:, None], 1.0)
    elpd, _, khat = _loo_pointwise(ll)
    loo_mean = (y.sum() - y) / (n - 1)
    exact = norm.logpdf(y, loo_mean, np.sqrt(1 + 1 / (n - 1)))
    np.testing.assert_allclose(elpd, exact, atol=0.01)
    assert khat.max() < 0.5


@pytest.mark.slow
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
