"""Simulation-based calibration (rtanalysis.model.sbc)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rtanalysis.model.sbc import generate, prior_draws, rank_uniformity, run_sbc, template_from_design
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
    from rtanalysis.model.sbc import _load

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
    from rtanalysis.model.sbc import sbc_rank

    rng = np.random.default_rng(0)
    sample = np.zeros((99, 1))  # every draw tied with the truth
    ranks = np.array([sbc_rank(sample, 0.0, rng)[0] for _ in range(2000)])
    counts = np.bincount(ranks // 10, minlength=10)  # uniform on 0..99
    assert counts.min() > 140 and counts.max() < 260
    # within the tolerance counts as a tie; outside it, the ordinary count
    assert sbc_rank(np.array([[1e-20], [0.5]]), 0.0, rng, tie=1e-12)[0] in (0, 1)
    assert sbc_rank(np.array([[0.1], [0.2], [0.9]]), 0.5, rng)[0] == 2
