"""One p_silent: the share of windowed decisions logged with no action (the no-answer mode or a
latency past the harness's give-up). The simulator's truth, the logs and the fitted model agree."""

from functools import cache

import numpy as np
import pytest

from rtanalysis.simulate import AgentSpec, Design, TaskTypeSpec, simulate
from tests.fits import data_set, shared_fit

#: both ways to fall silent: a no-answer mode (``prone``) and a give-up at 3 s on ``tight``, which
#: the slow model's long latencies reach; ``loose`` has no give-up (its silences are the mode's)
DESIGN = Design(
    "silence",
    models=(AgentSpec("prone", skill=0.5, log_latency=-0.2, silence=0.05), AgentSpec("slow", skill=0.8, log_latency=0.5)),
    task_types=(
        TaskTypeSpec("tight", difficulty=-1.0, latency_median=1.0, latency_sd=0.5, windows=((0.0, 1.5, 1.0),),
                     n_steps=4, fatality=0.6, give_up=3.0),
        TaskTypeSpec("loose", difficulty=-1.0, latency_median=1.0, latency_sd=0.5, windows=((0.0, 4.0, 1.0),),
                     n_steps=3, fatality=0.5),
    ),
    clocks=("paused", "wall"), n_tasks=10, seeds_per_task=6,
)
KEYS = ["model", "task_type", "clock"]


def _observed_silent_share(steps):
    """Share of windowed decisions under a timed clock logged with no action, per row."""
    w = steps[steps["window_close"].notna() & (steps["clock"].astype(str) != "paused")]
    w = w.assign(**{k: w[k].astype(str) for k in KEYS}, silent=w["no_action"].astype(bool))
    return w.groupby(KEYS)["silent"].agg(["mean", "size"])


def test_truth_p_silent_is_the_logged_no_action_share():
    sim = simulate(DESIGN, seed=4, tasks=100, seeds=10)
    obs = _observed_silent_share(sim.load().steps)
    t = sim.truth.set_index(KEYS).join(obs, how="inner")
    assert len(t) == 4
    # both sources contribute: the slow model's give-up silences on `tight`, the mode elsewhere
    assert t.loc[("slow", "tight", "wall"), "p_silent"] > 0.02 and t.loc[("slow", "loose", "wall"), "p_silent"] == 0
    se = np.sqrt(np.clip(t["p_silent"] * (1 - t["p_silent"]), 1e-4, None) / t["size"])
    z = (t["mean"] - t["p_silent"]).abs() / se
    assert (z < 4).all(), t.assign(z=z)


@cache
def _simulated():
    return simulate(DESIGN, seed=4)


@data_set("silence_design")
def _silence_design():
    return _simulated().load()


def _fitted():
    return _simulated(), shared_fit("silence_design", tune=300)


@pytest.mark.slow
def test_fitted_p_silent_covers_truth_and_observed_share():
    sim, res = _fitted()
    dec = res.decomposition(ci_prob=0.99).set_index(KEYS)
    obs = _observed_silent_share(res.steps)
    fitted = dec[["p_silent", "p_silent_lo", "p_silent_hi"]].rename(columns={"p_silent": "p_silent_fit"})
    t = sim.truth.set_index(KEYS)[["p_silent"]].join(fitted).join(obs, how="inner")
    assert len(t) == 4
    for col in ("p_silent", "mean"):  # the truth and the observed share
        inside = (t["p_silent_lo"] <= t[col]) & (t[col] <= t["p_silent_hi"])
        assert inside.all(), t
    # the give-up silences are silent, not late: the slow model's p_silent on `tight` is well above 0
    assert t.loc[("slow", "tight", "wall"), "p_silent_fit"] > 0.01, t
    # and the posterior predictive check of the silent share agrees with the logs in every timed row
    ppc = res.ppc()
    silent = ppc[ppc["check"] == "share_silent"]
    assert len(silent) == 4 and not silent["extreme"].any(), silent


def test_misspecified_truth_p_silent_is_the_logged_no_action_share():
    """The Monte Carlo truth of the misspecification presets counts silence the same way (``timeouts``:
    the harness gives up past the close and logs no action)."""
    from rtanalysis.simulate.core import simulate_misspec
    from rtanalysis.simulate.presets import MISSPEC_PRESETS

    design, spec = MISSPEC_PRESETS["timeouts"]
    sim = simulate_misspec(design.with_(tasks=30, seeds=10), spec, seed=5, reps=100)
    obs = _observed_silent_share(sim.load().steps)
    t = sim.truth.set_index(KEYS).join(obs, how="inner")
    assert len(t) == len(sim.truth) and t["p_silent"].max() > 0.01
    se = np.sqrt(t["p_silent"] * (1 - t["p_silent"]) / t["size"]) + 0.005
    assert ((t["mean"] - t["p_silent"]).abs() < 4 * se).all(), t[["p_silent", "mean", "size"]]
