"""Derived quantities: the grouped, vectorised computation equals a per-episode brute force, and the
silence hurdle's mode probability equals its likelihood ratio."""

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import norm

from rtanalysis.model.data import aggregate
from rtanalysis.model.derived import Deriver, silence_mode_probability
from rtanalysis.model.studies.toy import random_param_draws

S = 7


@pytest.fixture(scope="module")
def sim_data():
    from rtanalysis.simulate import simulate

    sim = simulate("mixed", seed=5, tasks=2, seeds=2, labelled=False)
    lr = sim.load()
    return lr, aggregate(lr.episodes, lr.steps)


def _random_params(d, rng, item_latency=False, mixture=False):
    p = random_param_draws(d, S, rng)
    if item_latency:  # item time intensities, the last (no task id) 0 as param_draws has it
        p.item_lat = np.concatenate([rng.normal(0, 0.6, (S, len(d.items))), np.zeros((S, 1))], axis=1)
    if mixture:  # a second mode per model, slower or faster
        p.latency_family = "mixture"
        M = len(d.models)
        p.shape = {"mode_share": rng.uniform(0.05, 0.5, (S, M)), "mode_shift": rng.uniform(-3, 3, (S, M))}
    return p


def _cdf(x, mu, sd, p, m, dist=norm.cdf):
    """P(log latency <= x) (``dist=norm.sf``: > x), written out per family (log-normal, or the two
    log-normal modes)."""
    if p.latency_family == "normal":
        return dist((x - mu) / sd)
    # modes at μ − wδs and μ + (1 − w)δs, within-mode SD s = σ / √(1 + w(1 − w)δ²): mean μ, total SD σ
    w, shift = p.shape["mode_share"][:, m], p.shape["mode_shift"][:, m]
    s = sd / np.sqrt(1 + w * (1 - w) * shift**2)
    return (1 - w) * dist((x - mu + w * shift * s) / s) + w * dist((x - mu - (1 - w) * shift * s) / s)


def _brute_force(d, steps, p, row, lam=1.0):
    """Mean over the row's episodes of p_cap_e and p_cap_e · Π_d (1 − f q_d), one episode at a time."""
    e = d.episodes.loc[row.episodes]
    cap, suc = [], []
    for idx, ep in e.iterrows():
        # P(decision right)^(g_k · exp(β_k x_e)), written out per episode
        p_dec = expit(p.eta[:, row.m, row.k] + p.item[:, ep["i"]] + d.type_offset[row.k])
        pc = p_dec ** (np.exp(d.type_log_g[row.k]) * np.exp(p.length[:, row.k] * ep["x"]))
        keep = np.ones(S)
        if row.clock != "paused":
            ew = d.episode_windows[d.episode_windows["ep"] == idx]
            for w in ew.itertuples():
                wd = d.windows.loc[w.wid]
                u = int(wd["u"])
                shift = 0.0 if p.item_lat is None else p.item_lat[:, ep["i"]]  # the item's time intensity
                mu, sd = p.mu[:, u, row.m, row.k] + shift + np.log(lam), p.sigma[:, u, row.m, row.k]
                pi = p.silence[:, row.m]
                early = _cdf(np.log(wd["open"]), mu, sd, p, row.m) if wd["open"] > 0 else 0.0
                late = 1 - _cdf(np.log(wd["close"]), mu, sd, p, row.m)
                q = pi + (1 - pi) * (early + late)
                keep = keep * (1 - p.fatality[:, row.k] * q) ** w.count
        cap.append(pc)
        suc.append(pc * keep)
    return np.mean(cap, axis=0), np.mean(suc, axis=0)


@pytest.mark.parametrize("lam,item_latency,mixture", [(1.0, False, False), (2.0, False, False), (1.0, True, False),
                                                     (2.0, True, False), (2.0, False, True)])
def test_grouped_derivation_equals_per_episode_brute_force(sim_data, lam, item_latency, mixture):
    lr, d = sim_data
    p = _random_params(d, np.random.default_rng(0), item_latency, mixture)
    der = Deriver(d, item_latency=item_latency)
    out = der.compute(p, lam=lam)
    rows = list(der.rows.itertuples())
    assert {r.clock for r in rows} >= {"wall", "step"}
    for j, r in enumerate(rows[:: max(1, len(rows) // 12)]):
        j = rows.index(r)
        cap, suc = _brute_force(d, lr.steps, p, r, lam)
        np.testing.assert_allclose(out["p_capable"][j], cap, rtol=1e-10)
        np.testing.assert_allclose(out["p_success"][j], suc, rtol=1e-10)
        np.testing.assert_allclose(out["p_timely"][j], suc / cap, rtol=1e-10)
        np.testing.assert_allclose(out["share_timing"][j], (cap - suc) / (1 - suc), rtol=1e-10)


def test_length_covariate_centred_within_type(sim_data):
    lr, d = sim_data
    n = lr.steps.groupby(["run_id", "episode_id"]).size()
    e = d.episodes
    for k in range(len(d.task_types)):
        x = e.loc[e["k"] == k, "x"].to_numpy()
        assert abs(x.mean()) < 1e-9
    # two episodes of one type differ in x by the log-ratio of their numbers of decisions
    key = list(zip(lr.episodes["run_id"], lr.episodes["episode_id"]))
    nd = np.array([n.get(kk, 0) for kk in key])
    same = np.flatnonzero(e["k"].to_numpy() == 0)[:2]
    assert e["x"].iloc[same[0]] - e["x"].iloc[same[1]] == pytest.approx(np.log(nd[same[0]] / nd[same[1]]))
    # g_k is the geometric mean length; logit 0 is P(capable) = 0.5 for an episode of that length
    k0 = e["k"].to_numpy() == 0
    assert np.exp(d.type_log_g[0]) == pytest.approx(np.exp(np.log(nd[k0]).mean()))
    assert expit(d.type_offset) ** np.exp(d.type_log_g) == pytest.approx(np.full(len(d.task_types), 0.5))


@pytest.mark.parametrize("item_latency,mixture", [(False, False), (True, False), (False, True)])
def test_silence_mode_probability_is_the_likelihood_ratio(sim_data, item_latency, mixture):
    _, d = sim_data
    rng = np.random.default_rng(1)
    p = _random_params(d, rng, item_latency, mixture)
    prev = rng.uniform(0.1, 0.9, S)
    got = silence_mode_probability(p.mu, p.sigma, p.family, p.shape, p.silence, prev, d, p.item_lat)
    for m in range(len(d.models)):
        with_mode, without = np.zeros(S), np.zeros(S)
        for c in d.censored[d.censored["m"] == m].itertuples():
            shift = 0.0 if p.item_lat is None else p.item_lat[:, c.i]
            ls = np.log(_cdf(c.log_close, p.mu[:, c.u, c.m, c.k] + shift, p.sigma[:, c.u, c.m, c.k], p, m, norm.sf))
            pi = p.silence[:, m]
            with_mode += c.count * np.log(pi + (1 - pi) * np.exp(ls))
            without += c.count * ls
        n_acted = d.exposure.loc[d.exposure["m"] == m, "n_acted"].sum()
        with_mode += n_acted * np.log1p(-p.silence[:, m])
        a, b = prev * np.exp(with_mode), (1 - prev) * np.exp(without)
        np.testing.assert_allclose(got[:, m], a / (a + b), rtol=1e-8, atol=1e-300)


def test_capability_kept_or_recomputed_gives_the_same_draws(sim_data, monkeypatch):
    # the capability of every episode group is kept per set of draws only when it fits the memory
    # budget; computed row by row otherwise, with identical results
    from rtanalysis.model import derived

    _, d = sim_data
    p = _random_params(d, np.random.default_rng(3))
    kept = Deriver(d)._compute_by_row(p, lam=2.0)  # the budget leaves it the row-by-row path below
    monkeypatch.setattr(derived, "CAPABILITY_CACHE_BYTES", 0)
    der = Deriver(d)
    again = der.compute(p, lam=2.0)
    assert der._caps[-1][1] is None  # nothing kept under a zero budget
    for q in derived.QUANTITIES:
        np.testing.assert_array_equal(kept[q], again[q])


@pytest.mark.parametrize("mixture", [False, True])
def test_near_close_share_equals_per_decision_brute_force(sim_data, mixture):
    """The predicted share of windowed decisions acting in the last 10 % before the close, grouped
    and vectorised, equals (1 − π)·P(0.9·close < L ≤ close) summed one episode's windows at a time."""
    _, d = sim_data
    p = _random_params(d, np.random.default_rng(4), mixture=mixture)
    der = Deriver(d)
    got = der.near_close_share(p, 0.1)
    checked = 0
    for j, r in enumerate(der.rows.itertuples()):
        if r.clock == "paused":
            assert np.isnan(got[j]).all()
            continue
        ew = d.episode_windows[d.episode_windows["ep"].isin(r.episodes)].merge(d.windows, left_on="wid",
                                                                               right_index=True)
        num, n = np.zeros(S), 0.0
        for w in ew.itertuples():
            mu, sd = p.mu[:, int(w.u), r.m, r.k], p.sigma[:, int(w.u), r.m, r.k]
            inside = _cdf(np.log(w.close), mu, sd, p, r.m) - _cdf(np.log(0.9 * w.close), mu, sd, p, r.m)
            num += w.count * (1 - p.silence[:, r.m]) * inside
            n += w.count
        np.testing.assert_allclose(got[j], num / n, rtol=1e-10, atol=1e-14)
        checked += 1
    assert checked >= 4


def test_distinct_rows_are_a_factorisation_in_order_of_first_appearance():
    # the rows' bytes hashed in a dict, against pandas' MultiIndex factorisation: the same distinct rows in
    # the same order, each row's code; -0.0 is 0.0 and NaNs are one value
    import pandas as pd

    from rtanalysis.model.derived import _distinct_rows

    rng = np.random.default_rng(7)
    for n, c in ((1, 2), (40, 3), (500, 1), (3000, 25)):
        cols = [rng.integers(0, 3, n).astype(float) for _ in range(c)]
        if n > 3:
            cols[0][:3] = [0.0, -0.0, np.nan]
            cols[-1][3:5] = np.nan
        codes, uniques = pd.MultiIndex.from_arrays(cols).factorize()
        expected = np.column_stack([uniques.get_level_values(j).to_numpy(float) for j in range(c)])
        got, got_codes = _distinct_rows(cols)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(got_codes, codes)


def test_row_quantiles_are_nanquantile():
    import warnings

    from rtanalysis.model.derived import _row_quantiles

    x = np.random.default_rng(8).random((30, 401))
    x[2] = np.nan  # undefined for the row
    x[5, :9] = np.nan
    x[6, 100] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = np.nanquantile(x, [0.05, 0.5, 0.95], axis=1)
    np.testing.assert_array_equal(_row_quantiles(x, [0.05, 0.5, 0.95]), expected)


@pytest.mark.parametrize("item_latency, mixture, slowness", [(False, False, False), (True, False, False),
                                                             (False, True, False), (False, False, True)])
def test_all_rows_at_once_equal_row_by_row(sim_data, item_latency, mixture, slowness):
    # compute() takes every row's windows as columns of one array where it can; the row-by-row loop (which
    # also covers the latency of wrong decisions) is the reference, at λ and under a lent latency, with
    # episode slowness (its Gauss–Hermite average over every column at once) too
    from rtanalysis.model import derived

    _, d = sim_data
    p = _random_params(d, np.random.default_rng(11), item_latency, mixture)
    if slowness:
        p.latency_icc = np.random.default_rng(12).uniform(0.05, 0.9, (p.n, len(d.task_types)))
    der = Deriver(d, item_latency=item_latency)
    assert der._batchable(p)
    for lam, swap in ((1.0, None), (0.3, None), (1.0, {m: 0 for m in range(1, len(d.models))})):
        a, b = der._compute_batched(p, lam, swap), der._compute_by_row(p, lam, swap)
        for q in derived.QUANTITIES:
            np.testing.assert_array_equal(np.isnan(a[q]), np.isnan(b[q]))
            np.testing.assert_allclose(a[q], b[q], rtol=1e-12, atol=1e-14, err_msg=q)
