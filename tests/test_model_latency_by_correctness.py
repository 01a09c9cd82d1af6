"""Latency by correctness (``fit(data, "latency_by_correctness")``): content-wrong decisions get their own
log-latency shift δ_mk, so timing uses the correct decisions' latency. Options are checked; (slow) a
known shift is recovered within its posterior spread and the check that flags the default model stops
flagging; the ``speed_accuracy`` preset (thinking longer helps) is recovered."""

import re
from functools import cache

import numpy as np
import pandas as pd
import pytest

from rtanalysis.model import ModelSpec
from rtanalysis.model.build import build_model
from rtanalysis.model.data import aggregate
from rtanalysis.simulate import simulate
from tests.fits import data_set, shared_fit, simulated
from tests.recovery import assert_recovered


def test_latency_by_correctness_needs_the_normal_family_without_item_latency(tmp_path, capsys):
    from rtanalysis.cli import main
    from rtanalysis.model import fit

    sim = simulate("speed_accuracy", seed=3, tasks=3, seeds=2, labelled=True)
    lr = sim.load()
    d = aggregate(lr.episodes, lr.steps, latency_by_correctness=True)
    refused = "latency_by_correctness needs latency_family='normal'|cannot be combined"
    for kw in ({"latency_family": "t"}, {"item_latency": True}):
        with pytest.raises(ValueError, match=refused):
            build_model(d, **kw)
    with pytest.raises(ValueError, match=refused):
        fit(lr, ModelSpec("t", "latency_by_correctness"), progress=False)
    sim.write(tmp_path / "logs")
    for extra in (["--item-latency"], ["--latency-family", "t"]):
        assert main(["fit", str(tmp_path / "logs"), "--out", str(tmp_path / "o"), "--latency-by-correctness",
                     *extra]) == 2
        assert re.search(refused, capsys.readouterr().err)
    assert main(["fit", str(tmp_path / "logs"), "--out", str(tmp_path / "o"), "--latency-by-correctness",
                 "--structure", "base"]) == 2
    assert "not both" in capsys.readouterr().err


#: log-latency shift of wrong decisions per model of the ``mixed`` preset (models in sorted order)
SHIFT = np.array([0.5, 0.0, -0.4, 0.3, -0.2, 0.0])


@cache
def _shifted(seed: int):
    """The well-specified ``mixed`` preset, labelled, with every content-wrong action's latency
    multiplied by exp(SHIFT[model]): latency now depends on correctness by a known δ per model (the
    logged early/late flags stay as simulated; the latency likelihood sees the shifted latencies)."""
    sim = simulate("mixed", seed=seed, labelled=True)
    lr = sim.load()
    steps = lr.steps.copy()
    models = sorted(steps["model"].astype(str).unique())
    assert len(models) == len(SHIFT)
    m = steps["model"].astype(str).map({name: j for j, name in enumerate(models)}).to_numpy()
    wrong = steps["correct_at_obs"].eq(False).fillna(False).to_numpy(bool) & steps["latency"].notna().to_numpy()
    steps.loc[wrong, "latency"] = steps.loc[wrong, "latency"] * np.exp(SHIFT[m[wrong]])
    return lr.episodes, steps, wrong


@data_set("shifted_mixed")
def _shifted_frames(sim_seed: int):
    episodes, steps, _ = _shifted(sim_seed)
    return episodes, steps


def _small_fit():
    """The one fit the derived-quantity and read-back tests share: labelled ``speed_accuracy``, small."""
    return shared_fit("preset", "latency_by_correctness", preset="speed_accuracy", sim_seed=3, tasks=3, seeds=2,
                      labelled=True, draws=60, chains=1, seed=3, tune=60)


@pytest.mark.slow
def test_a_known_shift_of_wrong_decisions_is_recovered_and_stops_the_check():
    """δ_mk recovered in every model × task type cell (24): |posterior mean − δ| ≤ 3.5 posterior SDs in
    all and 1.5 in root mean square, the 90 % interval covering δ in 19 or more; the latency-by-correctness check flags the default
    model on these data and not the model with the shift; the latency body and tail checks (on
    latencies less their class's shift) do not flag it either."""
    from rtanalysis.model import checks

    episodes, steps, wrong = _shifted(seed=21)
    assert wrong.sum() > 300
    res = shared_fit("shifted_mixed", "latency_by_correctness", sim_seed=21, seed=21, draws=400, ci_prob=0.9)
    assert res.spec.latency_by_correctness and res.diagnostics["n_divergent"] == 0
    draws = res.idata["posterior"]["wrong_lat"].stack(s=("chain", "draw")).transpose("s", ...).values
    truth = np.broadcast_to(SHIFT[:, None], draws.shape[1:])
    mean, sd = draws.mean(axis=0), draws.std(axis=0)
    lo, hi = np.quantile(draws, [0.05, 0.95], axis=0)
    z = (mean - truth) / sd
    assert np.abs(z).max() <= 3.5 and np.sqrt((z**2).mean()) <= 1.5, z.round(2)
    # 19 of 24 or more: P(fewer) ≈ 0.02 for 24 independent 90 % intervals
    assert ((lo <= truth) & (truth <= hi)).sum() >= 19, (lo.round(2), hi.round(2))
    assert sd.max() < 0.2  # the data pin it down (the prior's SD is 1)
    flags = res.ppc_flags()
    posterior = flags[flags["kind"] == "posterior"].set_index("family")
    assert not posterior.loc[["latency_by_correctness", "latency_body", "latency_tail"], "flagged"].any(), posterior
    # the default model's check on the same data: conditional on the data alone (its replicate needs no
    # posterior), so no second fit
    base_rows = checks._latency_by_correctness_rows(res, 400, np.random.default_rng(21), 0.025)
    base = pd.DataFrame(base_rows, columns=checks.CHECK_COLUMNS + ["p_value"])
    base["extreme"], base["kind"] = checks.is_extreme(base["p_value"]), "posterior"
    assert checks.family_flags(base).set_index("family").loc["latency_by_correctness", "flagged"], base


@pytest.mark.slow
def test_latency_by_correctness_recovers_the_speed_accuracy_preset():
    """``speed_accuracy`` (logit P(correct) +1 per SD of the decision's own log-latency deviation: the
    correct decisions are the slow ones): errors of the size of the posterior spread, and the shift is
    negative (wrong decisions faster) in every cell. (One replicate cannot tell the default model's
    +0.012 bias in p_timely from noise; the 24-replicate study does: docs/validation.md.)"""
    sim = simulated("speed_accuracy", 100, labelled=True)
    res = shared_fit("preset", "latency_by_correctness", preset="speed_accuracy", sim_seed=100, labelled=True,
                     draws=400, seed=100, ci_prob=0.9)
    assert res.diagnostics["n_divergent"] == 0
    assert_recovered(res, sim.truth)
    assert float(res.idata["posterior"]["wrong_lat"].mean(("chain", "draw")).max()) < 0


@pytest.mark.slow
@pytest.mark.xdist_group("latency_by_correctness_small")  # one shared fit (_small_fit)
def test_a_fit_with_it_is_written_and_read_back(tmp_path):
    """``to_dir`` records the option and ``from_dir`` aggregates the wrong decisions' sums again: the
    same decomposition and checks from the saved fit as from the fitted one."""
    from rtanalysis.model import FitResult

    lr = simulated("speed_accuracy", 3, tasks=3, seeds=2, labelled=True).load()
    res = _small_fit()
    assert res.data.latency_by_correctness and {"w_n", "w_s1", "w_n2", "q_wrong"} <= set(res.data.latency)
    back = FitResult.from_dir(res.to_dir(tmp_path / "fit"), lr)
    assert back.spec.latency_by_correctness and back._params.wrong_lat is not None
    dec = ["p_capable", "p_timely", "share_timing", "p_early", "p_silent"]
    np.testing.assert_allclose(back.decomposition()[dec].to_numpy(float), res.decomposition()[dec].to_numpy(float))
    checks = res.ppc()
    assert "latency_correct_minus_wrong" in set(checks["check"])
    np.testing.assert_allclose(back.ppc()["p_value"].to_numpy(), checks["p_value"].to_numpy())


@pytest.mark.slow
@pytest.mark.xdist_group("latency_by_correctness_small")  # one shared fit (_small_fit)
def test_timing_uses_the_correct_decisions_and_shares_mix_in_the_wrong_ones():
    """The derived quantities at given draws: a capable episode's timing (p_timely, share_timing, the
    λ counterfactual) does not depend on the wrong decisions' shift δ; the decision-level shares do, and
    with δ = 0 they are those of one latency for all (no shift at all)."""
    from dataclasses import replace

    res = _small_fit()
    p, der = res._params, res._deriver
    assert max(der._q_wrong.values()) > 0.1
    zero, slow = (replace(p, wrong_lat=np.full_like(p.wrong_lat, v)) for v in (0.0, 2.0))
    at = {name: der.compute(q) for name, q in (("none", replace(p, wrong_lat=None)), ("zero", zero), ("slow", slow))}
    at2 = {name: der.compute(q, lam=2.0) for name, q in (("zero", zero), ("slow", slow))}
    for q in ("p_success", "p_capable", "p_timely", "share_timing"):
        np.testing.assert_allclose(at["slow"][q], at["zero"][q])
        np.testing.assert_allclose(at2["slow"][q], at2["zero"][q])
    for q in ("p_early", "p_late", "p_silent"):
        np.testing.assert_allclose(at["zero"][q], at["none"][q], equal_nan=True)
    timed = np.isfinite(at["zero"]["p_late"][:, 0])
    # wrong decisions e² ≈ 7× slower: more of them late or silent, fewer early
    assert (at["slow"]["p_late"][timed] + at["slow"]["p_silent"][timed]
            > at["zero"]["p_late"][timed] + at["zero"]["p_silent"][timed]).all()
    assert (at["slow"]["p_early"][timed] <= at["zero"]["p_early"][timed]).all()
