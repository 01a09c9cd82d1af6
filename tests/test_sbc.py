"""Simulation-based calibration (rtanalysis.model.studies.sbc)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rtanalysis.model.studies.sbc import generate, prior_draws, rank_uniformity, run_sbc, template_from_design
from rtanalysis.simulate.presets import MISSPEC_PRESETS


def _tiny(tasks=2, seeds=2):
    base = MISSPEC_PRESETS["timeouts"][0]
    return base.with_(name="sbc-tiny", models=base.models[:2], task_types=tuple(
        t.__class__(**{**t.__dict__, "give_up": None}) for t in base.task_types), tasks=tasks, seeds=seeds)


def test_rank_uniformity_accepts_uniform_and_rejects_biased_ranks():
    rng = np.random.default_rng(0)
    n_post = 99
    uniform = pd.DataFrame({"parameter": np.repeat(["a", "b", "c"], 200), "rank": rng.integers(0, n_post + 1, 600),
                            "n_post": n_post})
    u = rank_uniformity(uniform, bins=10)
    assert (u["p_adjusted"] > 0.01).all() and (u["n"] == 200).all()
    biased = uniform.copy()
    biased.loc[biased["parameter"] == "b", "rank"] = rng.binomial(n_post, 0.65, 200)  # posterior too low
    b = rank_uniformity(biased, bins=10).set_index("parameter")
    assert b.loc["b", "p_adjusted"] < 1e-6 and b.loc["a", "p_adjusted"] > 0.01
    assert (b["p_adjusted"] >= b["p_value"]).all()


@pytest.mark.slow
def test_generator_follows_the_models_rules():
    t = template_from_design(_tiny(tasks=4, seeds=3), seed=1)
    _, p = prior_draws(t, 3, seed=1)
    rng = np.random.default_rng(3)
    for j in range(3):
        recs = generate(t, p.take([j]), rng)
        assert [len(r["steps"]) for r in recs] == [len(r["steps"]) for r in t.records]
        for r in recs:
            for s in r["steps"]:
                if s["t_act"] is not None and r["clock"] == "wall":
                    assert s["latency"] <= s["window"][1]  # later than the close = censored (silent)
                if r["clock"] == "paused":
                    assert s["t_act"] is not None
    from rtanalysis.model.studies.sbc import _load

    lr = _load(recs)
    assert lr.n_quarantined == 0 and lr.n_accepted == len(t.records)


@pytest.mark.slow
def test_sbc_ranks_are_uniform_on_a_tiny_design():
    """6 prior draws × 1 chain × 100 draws: per-parameter χ² (Holm) and the pooled normalised ranks (5 bins)."""
    ranks = run_sbc(_tiny(), n_sims=6, draws=100, chains=1, thin=2, seed=7)
    assert ranks["sim"].nunique() == 6 and ranks["parameter"].nunique() >= 20
    u = rank_uniformity(ranks, bins=2)
    assert u["p_adjusted"].min() > 0.01, u.sort_values("p_value").head()
    pooled = (ranks["rank"] / (ranks["n_post"] + 1)).to_numpy()
    counts = np.bincount(np.minimum((pooled * 5).astype(int), 4), minlength=5)
    assert stats.chisquare(counts).pvalue > 0.001, counts


def test_sbc_rank_breaks_ties_at_random():
    from rtanalysis.model.studies.sbc import sbc_rank

    rng = np.random.default_rng(0)
    sample = np.zeros((99, 1))  # every draw tied with the truth
    ranks = np.array([sbc_rank(sample, 0.0, rng)[0] for _ in range(2000)])
    counts = np.bincount(ranks // 10, minlength=10)  # uniform on 0..99
    assert counts.min() > 140 and counts.max() < 260
    # within the tolerance counts as a tie; outside it, the ordinary count
    assert sbc_rank(np.array([[1e-20], [0.5]]), 0.0, rng, tie=1e-12)[0] in (0, 1)
    assert sbc_rank(np.array([[0.1], [0.2], [0.9]]), 0.5, rng)[0] == 2


def _fixed_draw(t, latency_family: str, **shape):
    """One prior draw with the latency (μ 0, σ 0.5 on log seconds), capability (logit 3 for every
    episode) and timing (no silence mode, misses never fatal) fixed, so what is drawn is known."""
    _, p = prior_draws(t, 1, seed=3, latency_family=latency_family)
    p.mu[:], p.sigma[:], p.eta[:], p.item[:], p.fatality[:] = 0.0, 0.5, 3.0, 0.0, 0.0
    if p.length is not None:
        p.length[:] = 0.0
    if p.silence is not None:
        p.silence[:] = 0.0
    for name, value in shape.items():
        p.shape[name][:] = value
    return p


@pytest.mark.slow
@pytest.mark.parametrize("latency_family, shape", [("t", {"nu": 1.0}),
                                                   ("mixture", {"mode_share": 0.5, "mode_shift": 6.0})])
def test_generator_draws_the_fitted_familys_latencies(latency_family, shape):
    """Paused decisions (never censored) follow the family's CDF, and not the normal one with the same μ, σ."""
    from rtanalysis.model.families import family

    t = template_from_design(_tiny(tasks=10, seeds=8), seed=2)
    p = _fixed_draw(t, latency_family, **shape)
    recs = generate(t, p, np.random.default_rng(4))
    x = np.log([s["latency"] for r in recs if r["clock"] == "paused" and r["time_unit"] == "s" for s in r["steps"]])
    assert len(x) > 400
    fam = family(latency_family)
    assert stats.kstest(x, lambda v: fam.cdf(v, 0.0, 0.5, **shape)).pvalue > 1e-3
    assert stats.kstest(x, lambda v: stats.norm.cdf(v, 0.0, 0.5)).pvalue < 1e-3


@pytest.mark.slow
def test_generator_moves_timed_capability_by_the_clock_effect():
    """With κ_m = −6 a timed episode is capable with P = expit(3 − 6) ≈ 0.05, a paused one with expit(3) ≈
    0.95; without clock effects the two clocks agree."""
    rates = {}
    for clock_effects in (True, False):
        t = template_from_design(_tiny(tasks=6, seeds=6), seed=2, clock_effects=clock_effects)
        p = _fixed_draw(t, "normal")
        if clock_effects:
            p.timed_cap[:] = -6.0
        recs = generate(t, p, np.random.default_rng(5))
        f = pd.DataFrame({"clock": [r["clock"] for r in recs], "success": [r["success"] for r in recs]})
        rates[clock_effects] = f.groupby("clock")["success"].mean()
    assert rates[True]["paused"] > 0.85 and rates[True]["wall"] < 0.15, rates[True]
    assert rates[False]["wall"] > 0.85, rates[False]


@pytest.mark.slow
def test_generator_shifts_an_items_latency_by_its_time_intensity():
    """With τ = +1.5 for one item and 0 for the others, that item's paused log-latencies sit 1.5 above
    the rest (σ 0.5: the means' SE is below 0.1)."""
    t = template_from_design(_tiny(tasks=6, seeds=6), seed=2, item_latency=True)
    p = _fixed_draw(t, "normal")
    p.item_lat[:] = 0.0
    p.item_lat[0, 0] = 1.5
    recs = generate(t, p, np.random.default_rng(6))
    item0 = t.data.items[0]
    f = pd.DataFrame([(r["task"] == item0, np.log(s["latency"])) for r in recs if r["clock"] == "paused"
                      and r["time_unit"] == "s" for s in r["steps"]], columns=["item0", "x"])
    mean = f.groupby("item0")["x"].mean()
    assert f["item0"].sum() >= 20 and abs(mean[True] - mean[False] - 1.5) < 0.3, mean
