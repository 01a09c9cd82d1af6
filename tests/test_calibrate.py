"""Calibration scoring (decomposition and counterfactuals) and predictive-check helpers, without fits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rtanalysis.model.studies.calibrate import score_counterfactuals
from rtanalysis.model.checks import family_flags, is_extreme, predictive_p_value, replicate_quantiles
from rtanalysis.model.families import FAMILIES
from tests.fits import shared_fit


def test_score_counterfactuals_labels_and_coverage():
    keys = dict(model=["a", "a", "a", "a"], task_type="t", clock="wall")
    cf = pd.DataFrame({**keys, "scenario": ["scale", "scale", "scale", "as:b"], "lambda": [1.0, 0.5, 2.0, 1.0],
                       "p_success": [0.5, 0.7, 0.2, 0.6], "p_success_lo": [0.4, 0.6, 0.15, 0.5],
                       "p_success_hi": [0.6, 0.8, 0.25, 0.65]})
    truth = cf[["model", "task_type", "clock", "scenario", "lambda"]].assign(p_success=[0.5, 0.75, 0.3, 0.61])
    s = score_counterfactuals(cf, truth).set_index("quantity")
    assert list(s.index) == ["p_success@x0.5", "p_success@x2", "p_success@as"]  # λ = 1 is not a counterfactual
    assert s.loc["p_success@x0.5", "covered"] and not s.loc["p_success@x2", "covered"]
    assert s.loc["p_success@x2", "abs_error"] == pytest.approx(0.1)
    assert s.loc["p_success@as", "scenario"] == "as:b"


def test_predictive_p_value_is_a_mid_p():
    rep = np.arange(100.0)
    assert predictive_p_value(rep, 49.5) == pytest.approx(0.5)
    assert predictive_p_value(rep, -1) == 1.0 and predictive_p_value(rep, 100) == 0.0
    assert predictive_p_value(np.zeros(10), 0.0) == 0.5


def _brute_force_quantiles(mu, sd, family, shape, pi, n, n_cens, qs, rng):
    """The replicate drawn in full: n draws, the mode's silences removed, the largest cut for the
    other censored silences, the quantile of what is left (the definition the exact draw must match)."""
    out = {q: np.empty(len(mu)) for q in qs}
    for j in range(len(mu)):
        k_mode = rng.binomial(n, pi[j]) if pi is not None else 0
        m = n - k_mode
        z = rng.standard_t(shape["nu"][j], m) if family == "t" else rng.standard_normal(m)
        if family == "mixture":  # the mode, drawn per decision: at μ − wδs or μ + (1 − w)δs, SD s
            w, shift = shape["mode_share"][j], shape["mode_shift"][j]
            z = (z + ((rng.random(m) < w) - w) * shift) / np.sqrt(1 + w * (1 - w) * shift**2)
        x = np.sort(mu[j] + sd[j] * z)[: max(n - max(k_mode, n_cens), 1)]
        for q in qs:
            out[q][j] = np.quantile(x, q)
    return out


@pytest.mark.parametrize("case", ["normal", "censored", "silence_mode", "student_t", "mixture", "mixture_faster_second_mode",
                                  "tiny"])
def test_latency_replicates_match_the_full_replicate(case):
    """The order-statistic draw has the distribution of the quantile of a full replicate (two-sample
    KS per quantile, 3000 replicates each: a rank off by one at n = 40 shifts p90 by ~0.1 SD of
    its spread and fails), for every part of the replicate's definition."""
    from scipy.stats import ks_2samp

    D = 3000
    n, n_cens, family, shape, pi = {
        "normal": (40, 0, "normal", {}, None), "censored": (40, 6, "normal", {}, None),
        "silence_mode": (40, 6, "normal", {}, 0.1), "student_t": (40, 2, "t", {"nu": 2.5}, None),
        "mixture": (40, 2, "mixture", {"mode_share": 0.3, "mode_shift": 2.5}, None),
        "mixture_faster_second_mode": (40, 2, "mixture", {"mode_share": 0.2, "mode_shift": -3.0}, None),
        "tiny": (3, 1, "normal", {}, None)}[case]
    mu, sd = np.full(D, 0.3), np.full(D, 1.7)
    shape = {k: np.full(D, v) for k, v in shape.items()}
    pi = None if pi is None else np.full(D, pi)
    qs = (0.1, 0.5, 0.9, 0.99)
    exact = replicate_quantiles(mu, sd, (FAMILIES[family], shape), pi, n, n_cens, qs, np.random.default_rng(1))
    full = _brute_force_quantiles(mu, sd, family, shape, pi, n, n_cens, qs, np.random.default_rng(2))
    for q in qs:
        assert ks_2samp(exact[q], full[q]).pvalue > 0.001, (case, q)


def test_latency_replicates_cost_nothing_per_decision():
    """A million decisions in a cell: the replicated p99 is the family's p99 (2.326 for a standard
    normal) within its sampling spread, drawn without a million draws per replicate."""
    D = 400
    rep = replicate_quantiles(np.zeros(D), np.ones(D), (FAMILIES["normal"], {}), None, 1_000_000, 0, (0.99,), np.random.default_rng(0))
    assert abs(rep[0.99].mean() - 2.3263) < 0.002 and 0.001 < rep[0.99].std() < 0.01


def _flag_share(rng, n_fits, rows, rate):
    """Share of ``n_fits`` flagged, each one family of ``rows`` cells extreme with ``rate`` (the fits
    told apart by ``kind``, which family_flags groups by, so one call scores them all)."""
    f = pd.DataFrame({"check": "log_latency_p99", "kind": np.repeat(np.arange(n_fits), rows).astype(str),
                      "extreme": rng.random(n_fits * rows) < rate})
    flags = family_flags(f)
    assert len(flags) == n_fits and (flags["family"] == "latency_tail").all()
    assert np.allclose(flags["expected"], rows * 0.05)
    return flags["flagged"].mean()


@pytest.mark.parametrize("rows", [6, 24, 144])
def test_family_flag_holds_its_false_flag_rate_and_catches_real_excess(rows):
    """Under the nominal 5 % of extreme cells a family is flagged in at most ~5 % of fits (any-row
    would flag 26 %, 71 %, 99.9 % of them at 6, 24, 144 cells); at 30 % extreme cells (what a
    heavy tail gives, studies/ppc_detection.py) in nearly all."""
    rng = np.random.default_rng(rows)
    null = _flag_share(rng, 4000, rows, 0.05)
    assert null <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 4000), null
    power = _flag_share(rng, 1000, rows, 0.30)
    assert power >= {6: 0.5, 24: 0.95, 144: 0.99}[rows], power


def _conditional_rows(preset, seed, check="_latency_by_correctness_rows", labelled=True):
    """The rows of a data-only (conditional) check of rtanalysis.model.checks on a simulated preset."""
    from types import SimpleNamespace

    from rtanalysis.model import checks
    from rtanalysis.model.data import aggregate
    from rtanalysis.simulate import simulate

    load = simulate(preset, seed=seed, labelled=labelled).load()
    res = SimpleNamespace(data=aggregate(load.episodes, load.steps), steps=load.steps, episodes=load.episodes)
    rows = getattr(checks, check)(res, 400, np.random.default_rng(seed), 0.025)
    cols = ["model", "task_type", "clock", "time_unit", "check", "observed", "predicted", "predicted_lo",
            "predicted_hi", "p_value"]
    f = pd.DataFrame(rows, columns=cols)
    f["extreme"] = is_extreme(f["p_value"])
    return f


def _correctness_rows(preset, seed):
    return _conditional_rows(preset, seed)


@pytest.mark.slow
def test_latency_by_correctness_flags_entangled_latency_and_not_independent():
    """Labelled decisions: where hard items also slow the agent, correct decisions are faster than
    wrong ones and the check's family is flagged; where latency is independent of correctness (the
    well-specified preset) the cells' p-values behave as chance: at most one extreme in 3 seeds'
    cells and the family is not flagged."""
    entangled = pd.concat([_correctness_rows("difficulty_latency", s) for s in (0, 1)])
    assert len(entangled) >= 6 and (entangled["observed"] < 0).mean() >= 0.8
    flags = family_flags(entangled.assign(kind="posterior"))
    assert flags.loc[0, "family"] == "latency_by_correctness" and flags.loc[0, "flagged"], flags
    null = pd.concat([_correctness_rows("mixed", s) for s in (0, 1, 2)])
    assert len(null) >= 6 and null["extreme"].sum() <= max(1, round(0.05 * len(null) * 2))
    assert not family_flags(null.assign(kind="posterior")).loc[0, "flagged"]


@pytest.mark.slow
def test_item_latency_check_flags_slow_hard_items_without_labels():
    """Unlabelled logs: where hard items also slow the agent, slower items succeed less often (among
    episodes that missed nothing) and the latency-by-item family is flagged; on the well-specified
    preset the family is not flagged and the extreme rows stay near chance."""
    entangled = pd.concat([_conditional_rows("difficulty_latency", s, "_item_latency_rows", False) for s in (0, 1)])
    paused = entangled[entangled["clock"] == "paused"]
    assert len(paused) >= 6 and (paused["observed"] < 0).mean() >= 0.8
    flags = family_flags(entangled.assign(kind="posterior"))
    assert flags.loc[0, "family"] == "latency_by_item" and flags.loc[0, "flagged"], flags
    null = pd.concat([_conditional_rows("mixed", s, "_item_latency_rows", False) for s in (0, 1)])
    assert len(null) >= 40 and null["extreme"].mean() <= 0.1
    assert abs(null["observed"].mean()) < 0.1  # centred on 0, as the permutation distribution is
    assert not family_flags(null.assign(kind="posterior")).loc[0, "flagged"]


def _within_item_rows(preset, seed):
    """A default fit's ``latency_success_within_items`` rows on an unlabelled preset, and the fit."""
    res = shared_fit("preset", preset=preset, sim_seed=seed, labelled=False, draws=200, seed=seed)
    checks = res.ppc()
    return checks[checks["check"] == "latency_success_within_items"], res


@pytest.mark.slow
@pytest.mark.xdist_group("within_item_fits")  # shared fits (_within_item_rows)
def test_within_item_latency_success_check_flags_speed_accuracy_without_labels():
    """Unlabelled logs: where thinking longer helps (``speed_accuracy``), the episodes of an item that
    took longer succeed more often among those that missed nothing, so the covariance is positive in
    most cells and the family is flagged; on the well-specified preset (whose episode lengths vary within
    items) it is not, and the extreme rows stay near chance."""
    entangled = pd.concat([_within_item_rows("speed_accuracy", s)[0] for s in (0, 1)])
    assert len(entangled) >= 12 and (entangled["observed"] > 0).mean() >= 0.8, entangled
    flags = family_flags(entangled.assign(kind="posterior"))
    assert flags.loc[0, "family"] == "latency_by_outcome" and flags.loc[0, "flagged"], flags
    null = pd.concat([_within_item_rows("mixed", s)[0] for s in (0, 1)])
    assert len(null) >= 40 and null["extreme"].mean() <= 0.1
    assert not family_flags(null.assign(kind="posterior")).loc[0, "flagged"]


@pytest.mark.slow
@pytest.mark.xdist_group("within_item_fits")  # shared fits (_within_item_rows)
def test_within_item_latency_success_check_matches_a_per_episode_replicate():
    """One cell's row against the statistic computed from the frames with pandas and against per-episode
    Bernoulli replicates: the same observed covariance (each episode's P(capable) from the fit), and the
    class-summed normal limit's mean and SD within 5 % of the per-episode replicates' (200 draws × 50
    replicates each)."""
    from rtanalysis.model import checks as checks_mod
    from rtanalysis.model.derived import capable_probability

    _, res = _within_item_rows("speed_accuracy", 0)
    p = res._params.take(np.arange(200))
    rows = checks_mod._latency_success_within_items_rows(res, p, np.random.default_rng(0), 0.025)
    r = dict(zip(["model", "task_type", "clock", "time_unit", "check", "observed", "predicted", "predicted_lo",
                  "predicted_hi", "p_value"], rows[0]))
    d = res.data
    st = res.steps[(res.steps["model"] == r["model"]) & (res.steps["task_type"] == r["task_type"])
                   & (res.steps["clock"] == r["clock"])].copy()
    st["x"] = np.log(st["latency"])
    per_ep = st.groupby(["run_id", "episode_id"], observed=True).agg(lat=("x", "mean"), n=("x", "count"))
    missed = st.assign(miss=st["too_early"].fillna(False).astype(bool) | st["too_late"].fillna(False).astype(bool)
                       | st["no_action"].astype(bool)).groupby(["run_id", "episode_id"], observed=True)["miss"].any()
    codes = d.episodes.set_index(pd.MultiIndex.from_frame(res.episodes[["run_id", "episode_id"]]))
    e = per_ep.join(missed).join(codes[["m", "k", "i", "x", "y", "timed"]])
    e = e[(e["n"] > 0) & ~e["miss"]]
    dl = (e["lat"] - e.groupby("i")["lat"].transform("mean")).to_numpy()
    m, k = int(e["m"].iloc[0]), int(e["k"].iloc[0])
    p_cap = capable_probability(p, d, m, k, e["i"].to_numpy(), e["x"].to_numpy(), bool(e["timed"].iloc[0]))
    p_bar = p_cap.mean(axis=0)
    assert float((dl * (e["y"].to_numpy() - p_bar)).sum() / len(e)) == pytest.approx(r["observed"], rel=1e-9)
    rng = np.random.default_rng(1)
    y_rep = rng.random((50,) + p_cap.shape) < p_cap  # (replicates, draws, episodes)
    t_rep = ((y_rep - p_bar) @ dl / len(e)).ravel()
    # the row's replicate, one normal draw per posterior draw: its mean and SD from 200 000 of them
    big = checks_mod._latency_success_within_items_rows(res, p.take(np.repeat(np.arange(200), 1000)),
                                                        np.random.default_rng(2), 0.025)[0]
    lo, hi = big[7], big[8]
    assert big[6] == pytest.approx(t_rep.mean(), abs=0.05 * t_rep.std())
    assert (hi - lo) / (2 * 1.96) == pytest.approx(t_rep.std(), rel=0.05)
