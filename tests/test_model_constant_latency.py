"""Constant-latency cells (every acted latency is the tick length, as RealtimeGym's seconds mode logs
it): no P(late) from a zero-spread latency distribution; P(miss) comes from the logged fallbacks and
the cell is flagged ``latency_informative = False``."""

import numpy as np
import pytest

from rtanalysis.io import EpisodeSink
from rtanalysis.model.data import aggregate
from tests.fits import data_set, shared_fit

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("model")]

TICK, N_DEC, N_EP = 1.0, 4, 80
#: per decision: P(fallback) (the agent was late, a default action played; every miss is fatal)
Q = {"fast": 0.1, "mid": 0.25, "slow": 0.45}
CAP = {"fast": 0.7, "mid": 0.8, "slow": 0.6}  # P(all decisions content-correct)


@data_set("constant_latency")
def constant_latency_data(sim_seed: int = 11):
    rng = np.random.default_rng(sim_seed)
    sink = EpisodeSink()
    line = 0
    for model, q in Q.items():
        for e in range(N_EP):
            capable = rng.random() < CAP[model]
            fb = rng.random(N_DEC) < q
            steps = [{"t_obs": float(j), "latency": TICK, "window": [0.0, TICK], "fallback": bool(fb[j]),
                      "correct_at_obs": bool(capable)} for j in range(N_DEC)]
            rec = {"run_id": "const", "episode_id": f"{model}-{e}", "model": model, "task": f"t{e % 5}",
                   "task_type": "tick_game", "clock": "wall", "success": bool(capable and not fb.any()),
                   "steps": steps}
            line += 1
            assert sink.add(rec, "constant", line), sink._quarantine[-1]
    return sink.finish()


def test_constant_cells_are_flagged_and_left_out_of_the_latency_likelihood():
    lr = constant_latency_data()
    d = aggregate(lr.episodes, lr.steps)
    assert (d.latency["n_distinct"] == 1).all() and not d.latency["informative"].any()
    tm = d.timed_misses.set_index("m")
    assert (tm["n"] == N_EP * N_DEC).all()
    # the fallbacks are counted as misses per episode too (the success likelihood's M)
    assert d.episodes["M"].sum() == tm["miss"].sum() > 0


def test_p_timely_recovered_from_logged_fallbacks():
    res = shared_fit("constant_latency")
    dec = res.decomposition().set_index("model")
    assert not dec["latency_informative"].any()
    for model, q in Q.items():
        row = dec.loc[model]
        truth = (1 - q) ** N_DEC  # every fallback is fatal (the fit learns f ≈ 1 from the labels)
        sd = (row["p_timely_hi"] - row["p_timely_lo"]) / 3.92
        assert abs(row["p_timely"] - truth) < 3 * sd + 0.02, (model, row["p_timely"], truth, sd)
        # decision level: P(late) is the logged rate, not ~0.5 from a zero-spread distribution
        assert abs(row["p_late"] - q) < 0.08, (model, row["p_late"], q)
        assert row["p_early"] == 0 and row["p_silent"] == 0
    # as:<model> with a constant-latency model: its logged miss rate, not its (prior-only) μ and σ
    cf = res.counterfactuals(lambdas=(1.0, 2.0), as_models=True).set_index(["model", "scenario"])
    for model, other in (("fast", "slow"), ("slow", "fast")):
        row, base = cf.loc[(model, f"as:{other}")], dec.loc[model]
        truth = base["p_capable"] * (1 - Q[other]) ** N_DEC
        sd = (row["p_success_hi"] - row["p_success_lo"]) / 3.92
        assert abs(row["p_success"] - truth) < 3 * sd + 0.03, (model, other, row["p_success"], truth)
        # λ does not move a constant-latency row (nothing to scale)
        assert cf.loc[(model, "scale")].query("`lambda` == 2.0")["p_success"].item() == pytest.approx(
            cf.loc[(model, "scale")].query("`lambda` == 1.0")["p_success"].item())
