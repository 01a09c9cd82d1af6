"""Clock effects (``fit(data, "clock_effects")``): the tables split capability by timed clock and hold
timed latencies only, models without paused runs are named, and (slow) the ``clock_adaptive`` preset
— an agent that thinks less, faster and worse, under the wall clock — is recovered, where the
default model reads the capability drop as timing (share_timing coverage 0.00)."""

import numpy as np
import pytest

from rtanalysis.model.data import aggregate
from rtanalysis.schema import TIMED_CLOCKS
from rtanalysis.simulate import simulate
from tests.fits import shared_fit, simulated
from tests.recovery import assert_recovered


@pytest.fixture(scope="module")
def frames():
    lr = simulate("clock_adaptive", seed=2, tasks=3, seeds=2, labelled=True).load()
    return lr.episodes, lr.steps


def test_clock_effect_tables_split_success_by_clock_and_keep_timed_latencies(frames):
    episodes, steps = frames
    d = aggregate(episodes, steps, clock_effects=True)
    plain = aggregate(episodes, steps)
    assert d.clock_effects and not plain.clock_effects and "t" not in plain.unlabelled
    # the latency cells: acted decisions under a timed clock only, counted from the frames
    acted = steps[steps["latency"].notna()]
    timed = acted["clock"].isin(TIMED_CLOCKS)
    assert d.latency["n"].sum() == int(timed.sum()) < plain.latency["n"].sum() == len(acted)
    # every episode in exactly one group, by timed or paused as its clock is
    e = d.episodes
    for table in (d.unlabelled, d.cap_labelled):
        assert set(table["t"]) <= {0, 1}
    n_by_t = d.unlabelled.groupby("t")["n"].sum().add(d.cap_labelled.groupby("t")["n"].sum(), fill_value=0)
    assert n_by_t.to_dict() == e.groupby(e["timed"].astype(int)).size().to_dict()


def test_models_without_paused_runs_are_named(frames):
    from rtanalysis.model.fit import _clock_effect_notes

    episodes, steps = frames
    model = sorted(episodes["model"].unique())[0]
    keep = ~((episodes["model"] == model) & (episodes["clock"] == "paused"))
    kept = episodes[keep]
    runs = set(zip(kept["run_id"], kept["episode_id"]))
    st = steps[[k in runs for k in zip(steps["run_id"], steps["episode_id"])]]
    notes = _clock_effect_notes(aggregate(kept, st, clock_effects=True))
    assert len(notes) == 1 and f"({model})" in notes[0] and "prior" in notes[0]
    assert _clock_effect_notes(aggregate(episodes, steps, clock_effects=True)) == []


@pytest.mark.slow
def test_clock_effects_recover_an_agent_that_thinks_less_under_the_wall_clock(tmp_path):
    """``clock_adaptive`` (under the wall clock log-latency −0.5 and capability logit −0.8 against
    paused): errors of the size of the posterior spread (mean |error| ≤ 0.05, RMS standardised error
    ≤ 2) for p_capable, p_timely and share_timing, κ_m near −0.8, no check family flagged; the fit
    saved and read back gives the same decomposition."""
    from rtanalysis.model import FitResult

    sim = simulated("clock_adaptive", 100, labelled=False)
    lr = sim.load()
    res = shared_fit("preset", "clock_effects", preset="clock_adaptive", sim_seed=100, labelled=False, draws=400,
                     seed=100, ci_prob=0.9)
    assert res.diagnostics["n_divergent"] == 0
    kappa = res.idata["posterior"]["timed_cap"].mean(("chain", "draw")).values
    assert np.abs(kappa + 0.8).max() < 0.35, kappa
    assert_recovered(res, sim.truth)
    flags = res.ppc_flags()
    assert not flags.loc[flags["kind"] == "posterior", "flagged"].any(), flags
    back = FitResult.from_dir(res.to_dir(tmp_path / "fit"), lr)
    assert back.spec.clock_effects
    np.testing.assert_allclose(back.decomposition()["p_timely"], res.decomposition()["p_timely"])
