"""Latencies capped at the window close (a harness that cuts thinking off at the deadline and acts,
as RealtimeGym's token budget does): a latency at the close is not a miss, so the latency tail must
not turn into P(late); P(miss) comes from the logged fallbacks and the cell is flagged
``latency_informative = False``. A cell of continuous latencies is never flagged."""

import numpy as np
import pytest

from rtanalysis.io import EpisodeSink
from rtanalysis.model.data import CAPPED_SHARE, aggregate, informative_latency
from tests.fits import data_set, shared_fit

CLOSE, N_DEC, N_EP = 4096.0, 5, 60
#: per model: median tokens (log-normal, SD 1 on the log scale) and P(fallback) per decision
MEDIAN = {"short": 900.0, "long": 2500.0}
Q = {"short": 0.02, "long": 0.08}


@data_set("capped_latency")
def capped_data(sim_seed: int = 5, cap: bool = True):
    rng = np.random.default_rng(sim_seed)
    sink = EpisodeSink()
    for line, (model, e) in enumerate(((m, e) for m in MEDIAN for e in range(N_EP)), start=1):
        tokens = MEDIAN[model] * np.exp(rng.normal(0.0, 1.0, N_DEC))
        lat = np.minimum(tokens, CLOSE) if cap else tokens
        fb = rng.random(N_DEC) < Q[model]
        steps = [{"t_obs": float(j), "latency": float(lat[j]), "window": [0.0, CLOSE] if cap else [0.0, 1e9],
                  "fallback": bool(fb[j])} for j in range(N_DEC)]
        rec = {"run_id": "cap", "episode_id": f"{model}-{e}", "model": model, "task": f"t{e % 4}",
               "task_type": "budget_game", "clock": "step", "time_unit": "tokens",
               "success": bool(rng.random() < 0.6 and not fb.any()), "steps": steps}
        assert sink.add(rec, "capped", line), sink._quarantine[-1]
    return sink.finish()


def test_the_rule():
    # 4 of 100 at the close stays informative, 5 of 100 does not; 2 at the close never trips it
    assert informative_latency([100, 100, 20], [90, 90, 18], [4, 5, 2]).tolist() == [True, False, True]
    assert CAPPED_SHARE == 0.05
    # nearly constant = fewer than 3 distinct values, repeated: one tick length logged 50 times, or 2 values
    # among 6, is left out; one or two acted decisions that do not repeat are measured times and stay in
    # (dropping them biased SBC: CHANGELOG.md, sbc_dropped_cells); a cell with no acted decision has nothing to learn from
    assert informative_latency([50, 6, 1, 2, 0], [1, 2, 1, 2, 0], [0, 0, 0, 0, 0]).tolist() == [
        False, False, True, True, False]


def test_capped_cells_are_flagged_uncapped_are_not():
    d = aggregate(*_frames(capped_data()))
    assert (d.latency["n_at_close"] > 0).all() and not d.latency["informative"].any()
    d = aggregate(*_frames(capped_data(cap=False)))
    assert (d.latency["n_at_close"] == 0).all() and d.latency["informative"].all()


def _frames(lr):
    return lr.episodes, lr.steps


@pytest.mark.slow
def test_p_late_is_the_logged_fallback_rate_not_the_latency_tail():
    res = shared_fit("capped_latency")
    dec = res.decomposition().set_index("model")
    assert not dec["latency_informative"].any()
    logged = res.steps.assign(m=res.steps["model"].astype(str)).groupby("m")["fallback"].mean()
    for model in MEDIAN:
        row = dec.loc[model]
        # the log-normal tail beyond the close would say P(late) = 0.04 (short) and 0.28 (long)
        sd = (row["p_late_hi"] - row["p_late_lo"]) / 3.92
        assert abs(row["p_late"] - logged[model]) < 3 * sd + 0.005, (model, row["p_late"], logged[model])
    assert any("piled up at the window close" in n for n in res.diagnostics["notes"])
