"""fit() contracts: tables' columns, degenerate data, paused-only cells, reproducibility,
diagnostics that flag an under-sampled fit, predictive checks, the frequentist cross-check."""

import json

import numpy as np
import pytest

from rtanalysis.model.result import COUNTERFACTUAL_COLUMNS, DECOMPOSITION_COLUMNS

from .model_fixtures import degenerate_fit, toy_data, toy_fit

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("model")]


def test_decomposition_columns_and_rows():
    res = toy_fit(True)
    dec = res.decomposition()
    assert list(dec.columns[: len(DECOMPOSITION_COLUMNS)]) == DECOMPOSITION_COLUMNS
    # toy: 3 models x 2 types, clocks wall + paused -> only the timed clock gets a row
    assert len(dec) == 6 and set(dec["clock"]) == {"wall"}
    for q in ("p_success", "p_capable", "p_timely", "share_timing"):
        assert ((dec[f"{q}_lo"] <= dec[q]) & (dec[q] <= dec[f"{q}_hi"])).all()
    np.testing.assert_allclose(dec["p_on_time"] + dec["p_early"] + dec["p_late"] + dec["p_silent"], 1.0, atol=1e-9)


def test_counterfactuals_scale_monotone_and_as_models():
    res = toy_fit(False)
    cf = res.counterfactuals(lambdas=(0.25, 1, 4))
    assert list(cf.columns) == COUNTERFACTUAL_COLUMNS
    sc = cf[cf["scenario"] == "scale"].pivot_table(index=["model", "task_type"], columns="lambda", values="p_success")
    assert (sc[0.25] >= sc[1.0] - 1e-9).all() and (sc[1.0] >= sc[4.0] - 1e-9).all()
    # lambda = 1 reproduces the decomposition
    dec = res.decomposition().set_index(["model", "task_type"])["p_success"]
    np.testing.assert_allclose(sc[1.0].to_numpy(), dec.loc[sc.index].to_numpy())
    assert {"as:model-a", "as:model-b", "as:model-c"} <= set(cf["scenario"])
    # borrowing the fastest model's latency cannot hurt a slower model's timing
    fast = cf[(cf["scenario"] == "as:model-a") & (cf["model"] == "model-b")].set_index("task_type")["p_success"]
    assert (fast >= dec.loc["model-b"].loc[fast.index] - 0.01).all()


def test_compare_and_draws():
    res = toy_fit(False)
    c = res.compare("p_timely", a="model-a", b="model-b")
    assert set(c["task_type"]) == {"high_frequency", "long_horizon"}
    hf = c.set_index("task_type").loc["high_frequency"]
    assert hf["p_a_gt_b"] > 0.99 and hf["difference_lo"] > 0  # model-a is much faster
    dr = res.draws("p_success")
    assert len(dr) == 6 * 600 and {"model", "task_type", "clock", "draw", "value"} <= set(dr.columns)
    sc = res.success_curve(lambdas=(0.5, 1, 2))
    assert {"rel_latency", "p_success", "p_success_lo", "p_success_hi"} <= set(sc.columns)


def test_kept_and_wide_draws_are_the_computed_ones():
    """The p_success draws a fit keeps at λ = 0.5 (KEPT_LAMBDAS) after the counterfactuals are the ones
    a fresh computation gives, and the wide frame holds the long frame's values."""
    from rtanalysis.model.result import KEPT_LAMBDAS

    res = toy_fit(False)
    lam = KEPT_LAMBDAS[0]
    res.counterfactuals(lambdas=(lam, 1.0), as_models=False)
    assert ("p_success", lam) in res._cache
    fresh = res._deriver.compute(res._params, lam)["p_success"]
    wide = res.draws("p_success", lam=lam, wide=True)
    np.testing.assert_array_equal(wide.to_numpy(), fresh)
    long = res.draws("p_success", lam=lam)
    pivot = long.pivot_table(index=["model", "task_type", "clock"], columns="draw", values="value")
    np.testing.assert_array_equal(wide.loc[pivot.index].to_numpy(), pivot.to_numpy())
    # another quantity at the kept λ is computed, not taken from what was kept
    np.testing.assert_array_equal(res.draws("p_timely", lam=lam, wide=True).to_numpy(),
                                  res._deriver.compute(res._params, lam)["p_timely"])


def test_thinned_curves_are_within_their_monte_carlo_error():
    """The figures' λ curves come from evenly thinned draws (the same number from each chain); their means
    lie within a few Monte Carlo standard errors (sd / √ESS of the thinned draws, ``curve_ess``) of the
    curves from every draw, and the two curves agree exactly where they share a λ."""
    res = toy_fit(False)
    n = 200
    thin = res._thinned(n)
    assert thin.n == n and res._thinned(None) is res._params and res._thinned(10**6) is res._params
    np.testing.assert_array_equal(thin.fatality, res._params.fatality[np.r_[0:300:3, 300:600:3]])
    ess = res.curve_ess(n)
    assert 20 < ess < 4 * n
    full = res.success_curve(lambdas=(0.5, 1.0, 2.0))
    part = res.success_curve(lambdas=(0.5, 1.0, 2.0), draws=n)
    keys = ["model", "task_type", "clock", "lambda"]
    both = full.merge(part, on=keys, suffixes=("", "_thin"))
    assert len(both) == len(full) > 0
    sd = res.draws("p_success", wide=True).std(axis=1).to_numpy()
    at1 = both[both["lambda"] == 1.0]
    err = np.abs(at1["p_success_thin"] - at1["p_success"]).to_numpy()
    assert (err <= 4 * sd / np.sqrt(ess) + 1e-12).all()
    assert (both["p_success_thin"] - both["p_success"]).abs().max() > 0  # the thinned draws are other draws
    cf = res.counterfactuals(lambdas=(0.5, 2.0), as_models=False, draws=n).merge(part, on=keys, suffixes=("", "_c"))
    np.testing.assert_array_equal(cf["p_success"], cf["p_success_c"])


def test_methods_state_the_curves_draws_and_their_error(monkeypatch):
    from rtanalysis import plots
    from rtanalysis.reporting.document import curve_text

    res = toy_fit(False)
    assert curve_text(res) == ""  # 600 draws: the curves use them all
    monkeypatch.setattr(plots, "CURVE_DRAWS", 200)
    text = curve_text(res)
    ess = res.curve_ess(200)
    assert "from 200 of the 600 draws" in text and f"is {ess:.0f}, so" in text
    assert f"about {100 / np.sqrt(ess):.0f}% of a posterior SD" in text


def test_harmony_from_arrays_is_harmony_of_the_long_draws():
    from rtanalysis.model.harmony import harmony, harmony_table

    res = toy_fit(False)
    cap, tim = res.draws("p_capable"), res.draws("p_timely")
    timed = (tim["clock"] != "paused").to_numpy()
    expected = harmony_table(cap[timed], tim[timed], 0.9)
    got = harmony(res, 0.9)
    assert len(got) == 3
    import pandas as pd

    pd.testing.assert_frame_equal(got, expected)


def test_degenerate_data_no_crash_and_honest_intervals():
    res = degenerate_fit()
    dec = res.decomposition().set_index(["model", "task_type", "clock"])
    assert dec[["p_success", "p_capable", "p_timely"]].notna().all().all()
    never = dec.loc[("never", "common", "wall")]
    always = dec.loc[("always", "common", "wall")]
    assert never["p_success"] < 0.2 and always["p_success"] > 0.8
    one = dec.loc[("half", "lonely", "wall")]  # one episode: wide interval
    assert one["p_capable_hi"] - one["p_capable_lo"] > 0.4
    nolat = dec.loc[("always", "nolat", "wall")]  # no latencies: timing from the prior only, wide
    assert nolat["p_capable_hi"] - nolat["p_capable_lo"] > 0.3


def test_paused_only_cell_row():
    dec = degenerate_fit().decomposition()
    row = dec[(dec["model"] == "never") & (dec["task_type"] == "pausedonly")]
    assert len(row) == 1 and row["clock"].iloc[0] == "paused"
    assert (row[["p_timely", "p_timely_lo", "p_timely_hi"]] == 1.0).all().all()
    assert (row[["share_timing", "share_timing_lo", "share_timing_hi"]] == 0.0).all().all()
    np.testing.assert_allclose(row["p_success"], row["p_capable"])


def test_same_data_and_seed_identical_tables(tmp_path):
    """Refit in a fresh process (new compile-cache lookups, new memory layout): identical tables."""
    import subprocess
    import sys

    code = ("from tests.model_fixtures import toy_fit; r = toy_fit(False); "
            f"r.decomposition().to_csv({str(tmp_path / 'a.csv')!r}, index=False); print(r.data_hash)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(__import__("pathlib").Path(__file__).parents[1]))
    b = toy_fit(False)
    assert out.stdout.strip().splitlines()[-1] == b.data_hash
    b.decomposition().to_csv(tmp_path / "b.csv", index=False)
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()


def test_undersampled_fit_is_flagged():
    from rtanalysis import fit

    res = fit(toy_data(False), draws=20, chains=1, tune=20, seed=0, progress=False)
    assert res.diagnostics["ok"] is False
    assert not res.decomposition()["diagnostics_ok"].any()
    t = res.diagnostics_table()
    assert {"param", "rhat", "ess_bulk", "ess_tail"} <= set(t.columns)


def test_prior_predictive_covers_plausible_success_rates():
    res = toy_fit(False)
    pp = res.prior_predictive(draws=300)
    s = pp[pp["check"] == "success_rate"]
    # weakly informative: every row's prior predictive interval spans most of (0, 1) (the prior
    # expects some timing loss with several windows per episode, so the top sits a little below 1) ...
    assert (s["predicted_lo"] <= 0.05).all() and (s["predicted_hi"] >= 0.85).all()
    # ... and over the rows together it covers (0.05, 0.95)
    assert s["predicted_lo"].min() <= 0.05 and s["predicted_hi"].max() >= 0.95


def test_posterior_predictive_check():
    res = toy_fit(False)
    ppc = res.ppc()
    s = ppc[ppc["check"] == "success_rate"]
    assert s["covered"].mean() >= 0.8
    lat = ppc[ppc["check"].str.startswith("log_latency")]
    assert len(lat) and lat["covered"].mean() >= 0.7
    # success by missed windows (replicated per group of alike episodes): covered, and a miss costs
    given = ppc[ppc["check"].str.startswith("success_given_misses")]
    assert len(given) == 6 and given["covered"].mean() >= 0.8
    for _, g in given.groupby("task_type"):
        pred = g.set_index("check")["predicted"]
        assert pred["success_given_misses_0"] > pred["success_given_misses_2+"]
    _check_item_spread(res, ppc)
    # every check has a registered family, and the well-specified toy flags none
    from rtanalysis.model.checks import CHECK_FAMILIES, check_family, family_flags

    families = {fam for fam, _ in CHECK_FAMILIES.values()}
    assert set(ppc["check"].map(check_family)) <= families
    flags = family_flags(ppc)
    assert set(flags["family"]) == set(ppc["check"].map(check_family)) and not flags["flagged"].any(), flags


def _check_item_spread(res, ppc):
    """success_sd_across_items: observed = the episode-weighted SD of item success rates, computed
    here from the episodes; predicted mean = a per-episode Bernoulli replicate (one draw per episode,
    no grouping) within Monte Carlo error."""
    from rtanalysis.model.checks import _weighted_sd
    from rtanalysis.model.derived import capable_probability

    d, p = res.data, res._params
    spread = ppc[ppc["check"] == "success_sd_across_items"]
    assert len(spread) == len(res.decomposition())
    rng = np.random.default_rng(5)
    for r in spread.itertuples():
        m, k = d.models.index(r.model), d.task_types.index(r.task_type)
        e = d.episodes[(d.episodes["m"] == m) & (d.episodes["k"] == k) & (d.episodes["clock"] == r.clock)]
        items, item_of = np.unique(e["i"].to_numpy(), return_inverse=True)
        n = np.bincount(item_of).astype(float)
        assert r.observed == pytest.approx(float(_weighted_sd(np.bincount(item_of, weights=e["y"]), n)))
        p_s = (capable_probability(p, d, m, k, e["i"].to_numpy(), e["x"].to_numpy())
               * (1 - p.fatality[:, [k]]) ** e["M"].to_numpy()[None, :])
        y = (rng.random(p_s.shape) < p_s).astype(float)
        rep = _weighted_sd(np.stack([np.bincount(item_of, weights=row, minlength=len(items)) for row in y]), n)
        assert r.predicted == pytest.approx(rep.mean(), abs=4 * rep.std() / np.sqrt(200)), r


def test_frequentist_cross_check_agrees():
    fr = toy_fit(False).frequentist()
    assert {"p_capable", "p_success", "median_latency"} <= set(fr["quantity"])
    assert fr["disagree"].mean() <= 0.1, fr[fr["disagree"]]


def test_to_dir_writes_the_files(tmp_path):
    res = toy_fit(True)
    out = res.to_dir(tmp_path / "fit")
    for f in ("decomposition.csv", "counterfactuals.csv", "diagnostics.json", "posterior.nc"):
        assert (out / f).exists()
    info = json.loads((out / "diagnostics.json").read_text())
    assert info["seed"] == 0 and info["data_hash"] == res.data_hash and "rtanalysis_version" in info
