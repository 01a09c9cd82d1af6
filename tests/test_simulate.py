"""The simulator: empirical rates converge to its exact truth; logs are valid and reproducible."""

from __future__ import annotations

import argparse
import gzip

import numpy as np
import orjson
import pandas as pd
import pytest

from rtanalysis.io import load_rtlog
from rtanalysis.simulate import PRESETS, Design, AgentSpec, TaskTypeSpec, simulate
from rtanalysis.simulate.cli import add_cli

#: one xdist worker runs the whole file, so the module-scoped large simulation is built once
pytestmark = pytest.mark.xdist_group("simulate")

Z = 4.0  # tolerance in binomial standard errors

#: a small design exercising every mechanism: late-opening and mixed windows, token units under the
#: step clock with fallback and give-up, silence, partial fatality, heavy tails, slow hard items
SMALL = Design(
    "small",
    models=(AgentSpec("fast", skill=0.2, log_latency=-0.4, silence=0.03), AgentSpec("slow", skill=1.0, log_latency=0.4)),
    task_types=(
        TaskTypeSpec("ambush", difficulty=-1.5, latency_median=1.5, latency_sd=0.5,
                     windows=((0.8, 4.0, 0.8), (0.0, 1.5, 0.2)), n_steps=(2, 4), fatality=0.7),
        TaskTypeSpec("arcade", difficulty=-2.5, latency_median=400, latency_sd=0.4, windows=((0, 700, 1.0),),
                     n_steps=(3, 5), fatality=0.5, time_unit="tokens", tick=600, give_up=1500),
    ),
    clocks=("paused", "wall", "step"),
    n_tasks=250, seeds_per_task=12, latency_item_coef=0.3, latency_df=5.0,
)


@pytest.fixture(scope="module")
def big():
    sim = simulate(SMALL, seed=7)
    assert len(sim.episodes) >= 20_000
    return sim


@pytest.fixture(scope="module")
def big_loaded(big, tmp_path_factory):
    out = tmp_path_factory.mktemp("big")
    big.write(out)
    return load_rtlog(out)


def _within(observed: np.ndarray, truth: np.ndarray, n: np.ndarray, what: str) -> None:
    se = np.sqrt(np.clip(truth * (1 - truth), 1e-4, None) / n)
    z = np.abs(observed - truth) / se
    assert (z < Z).all(), f"{what}: observed {observed.round(4)} vs truth {truth.round(4)} (z={z.round(2)})"


def test_episode_rates_converge_to_truth(big):
    ep = big.episodes
    obs = ep.groupby(["model", "task_type", "clock"], sort=False).agg(
        n=("success", "size"), success=("success", "mean"), capable=("capable", "mean"),
        n_capable=("capable", "sum"), timely_given_capable=("fatal_miss", lambda s: 1 - s[ep.loc[s.index, "capable"]].mean()))
    t = big.truth.set_index(["model", "task_type", "clock"]).join(obs, how="left")
    assert (t["n"] == t["n_episodes"]).all()
    _within(t["success"].to_numpy(), t["p_success"].to_numpy(), t["n"].to_numpy(), "success")
    _within(t["capable"].to_numpy(), t["p_capable"].to_numpy(), t["n"].to_numpy(), "capable")
    _within(t["timely_given_capable"].to_numpy(), t["p_timely"].to_numpy(), t["n_capable"].to_numpy(), "timely | capable")
    # paused: nothing can miss, so its success rate estimates the same p_capable
    paused = obs.xs("paused", level="clock")
    wall = t.xs("wall", level="clock").loc[paused.index]
    _within(paused["success"].to_numpy(), wall["p_capable"].to_numpy(), paused["n"].to_numpy(), "paused success")


def test_decision_rates_converge_to_truth(big, big_loaded):
    steps = big_loaded.steps
    steps = steps[steps["clock"] != "paused"]
    obs = steps.groupby(["model", "task_type", "clock"], sort=False).agg(
        n=("step", "size"), on_time=("on_time", "mean"), early=("too_early", "mean"),
        late=("too_late", "mean"), silent=("no_action", "mean"))
    t = big.truth.set_index(["model", "task_type", "clock"]).join(obs, how="left")
    assert (t["n"] == t["n_decisions"]).all()
    for col in ("on_time", "early", "late", "silent"):
        _within(t[col].astype(float).to_numpy(), t[f"p_{col}"].to_numpy(), t["n"].to_numpy(), col)


def test_truth_identities(big):
    t = big.truth
    assert np.allclose(t["p_success"], t["p_capable"] * t["p_timely"])
    assert np.allclose(t["share_timing"], (t["p_capable"] - t["p_success"]) / (1 - t["p_success"]))
    assert np.allclose(t["p_on_time"] + t["p_early"] + t["p_late"] + t["p_silent"], 1)
    assert set(t["clock"]) == {"wall", "step"}
    assert set(t.loc[t["clock"] == "step", "task_type"]) == {"arcade"}
    # latency rises with item difficulty, so capability and timing are dependent across episodes
    assert not np.allclose(t["p_timely"], t["p_timely_marginal"])


def test_median_latency_matches_the_lognormal_median():
    d = SMALL.with_(latency_item_coef=0.0, latency_df=None, n_tasks=20, seeds_per_task=5)
    t = simulate(d, seed=3).truth
    expect = {(m.name, k.name): k.latency_median * np.exp(m.log_latency) for m in d.models for k in d.task_types}
    got = t.apply(lambda r: expect[(r["model"], r["task_type"])], axis=1)
    assert np.allclose(t["median_latency"], got, rtol=1e-6)


def test_logs_follow_the_design(big, big_loaded):
    steps = big_loaded.steps
    assert big_loaded.n_quarantined == 0 and big_loaded.n_accepted == len(big.episodes)
    paused = steps[steps["clock"] == "paused"]
    assert paused["on_time"].all() and not paused["no_action"].any()
    step = steps[steps["clock"] == "step"]
    assert (step["window_open"] == 0).all() and (step["window_close"] == 600).all()
    late = step["too_late"].astype(bool)
    assert (step.loc[late, "fallback"] == True).all() and (step.loc[late, "valid_at_exec"] == False).all()  # noqa: E712
    wall_late = steps[(steps["clock"] == "wall") & steps["too_late"].astype(bool)]
    # the run logs fallback (step clock), so by the fallback rule a wall decision without it did not fall back
    assert (wall_late["fallback"] == False).all()  # noqa: E712
    tokens = steps[(steps["time_unit"] == "tokens") & (steps["clock"] != "paused")].dropna(subset=["latency"])
    assert (tokens["latency"] == tokens["latency"].round()).all() and (tokens["latency"] <= 1500).all()
    assert (tokens["tokens"].astype(float) == tokens["latency"]).all()
    # the same (task, seed) has the same number of decisions for every model and clock (paired)
    n = big_loaded.episodes.groupby(["task", "seed"])["n_steps"].nunique()
    assert (n == 1).all()


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    paths = [simulate("mixed", seed=s, tasks=3, seeds=2).write(tmp_path / f"run{i}") for i, s in enumerate((5, 5, 6))]
    for name in ("episodes", "truth", "design"):
        a, b, c = (p[name].read_bytes() for p in paths)
        assert a == b, name
        if name != "design":
            assert a != c, name
    meta = orjson.loads(paths[0]["design"].read_bytes())
    assert simulate(Design.from_dict(meta["design"]), seed=meta["seed"]).records == simulate(
        "mixed", seed=5, tasks=3, seeds=2).records
    with gzip.open(paths[0]["episodes"]) as fh:
        first = orjson.loads(fh.readline())
    assert list(first)[:4] == ["schema", "run_id", "episode_id", "model"]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_generates_and_loads(name, tmp_path):
    sim = simulate(name, seed=2)
    assert Design.from_dict(sim.design.to_dict()) == sim.design
    loaded = load_rtlog(sim.write(tmp_path)["episodes"])
    assert loaded.n_quarantined == 0
    assert loaded.n_accepted == len(sim.records) == sim.truth.groupby("clock")["n_episodes"].sum().sum() + (
        sim.episodes["clock"] == "paused").sum()
    assert loaded.episodes["success"].mean() == pytest.approx(sim.episodes["success"].mean())
    overall = np.average(sim.truth["p_success"], weights=sim.truth["n_episodes"])
    assert 0.2 < overall < 0.65, f"{name}: overall success {overall:.2f} outside the calibrated range"


def test_leaderboard_is_unbalanced_but_paired():
    sim = simulate("leaderboard60", seed=1)
    counts = sim.episodes.groupby("model").size()
    assert len(counts) == 60 and counts.max() >= 5 * counts.min()
    units = sim.episodes.groupby("model").apply(lambda e: set(zip(e["task"], e["seed"])))
    small = units[counts.idxmin()]
    assert small <= units[counts.idxmax()]


def test_unlabelled_logs_drop_the_labels():
    sim = simulate("mixed", seed=1, tasks=2, seeds=2, labelled=False)
    loaded = sim.load()
    assert loaded.n_quarantined == 0
    assert loaded.steps["correct_at_obs"].isna().all() and loaded.steps["valid_at_exec"].isna().all()
    assert loaded.steps["latency"].notna().any() and loaded.steps["window_close"].notna().all()


def test_bad_design_names_the_field():
    tt = TaskTypeSpec("x", windows=((2.0, 1.0, 1.0),))
    with pytest.raises(ValueError, match=r"task_types\[x\]\.windows"):
        Design("bad", (AgentSpec("m"),), (tt,))
    with pytest.raises(ValueError, match="unknown preset"):
        simulate("nope")


def test_cli_writes_logs_and_truth(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    add_cli(parser.add_subparsers())
    args = parser.parse_args(["simulate", "--preset", "long_horizon", "--out", str(tmp_path), "--seed", "3",
                              "--tasks", "2", "--seeds", "2", "--unlabelled"])
    assert args.func(args) == 0
    assert "simulated 'long_horizon' seed 3" in capsys.readouterr().out
    truth = pd.read_csv(tmp_path / "truth.csv")
    assert len(truth) == 4 * 2 and load_rtlog(tmp_path).n_quarantined == 0


def test_million_decisions_in_seconds():
    import time

    t0 = time.perf_counter()
    sim = simulate("high_frequency", seed=1, tasks=50, seeds=70)
    elapsed = time.perf_counter() - t0
    assert len(sim.arrays["decisions"]["step"]) > 500_000
    assert elapsed < 10, f"{elapsed:.1f}s"
