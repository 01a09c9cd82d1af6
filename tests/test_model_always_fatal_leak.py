"""The always-fatal branch of the timing fatality (a missed window always kills the episode) leaks:
in unlabelled data one success after a miss (a forgiven or mislogged miss) must not rule the branch
out, while many such successes must."""

import numpy as np
import pytest
from scipy.special import expit

from rtanalysis.io import EpisodeSink
from tests.fits import data_set, shared_fit

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("model")]

N_EP, N_DEC, CLOSE = 150, 4, 2.0


@data_set("always_fatal")
def fatal_data(forgiven: int, sim_seed: int = 2):
    """Two models, one task type, unlabelled; every miss kills, except ``forgiven`` episodes that
    missed and are logged as successes anyway."""
    rng = np.random.default_rng(sim_seed)
    sink = EpisodeSink()
    line, left = 0, forgiven
    for model, med in (("quick", 0.9), ("slow", 1.3)):
        for e in range(N_EP):
            lat = med * np.exp(rng.normal(0, 0.4, N_DEC))
            missed = bool((lat > CLOSE).any())
            success = bool(rng.random() < 0.7 and not missed)
            if missed and left > 0:
                success, left = True, left - 1
            steps = [{"t_obs": float(j), "latency": float(lat[j]), "window": [0.0, CLOSE]} for j in range(N_DEC)]
            line += 1
            rec = {"run_id": "fatal", "episode_id": f"{model}-{e}", "model": model, "task": f"t{e % 6}",
                   "task_type": "dodge", "clock": "wall", "success": success, "steps": steps}
            assert sink.add(rec, "fatal", line), sink._quarantine[-1]
    return sink.finish()


def p_always_fatal(forgiven: int) -> float:
    res = shared_fit("always_fatal", forgiven=forgiven)
    log_odds = np.asarray(res.idata["posterior"]["always_fatal_log_odds"]).reshape(-1)
    return float(expit(log_odds).mean())


def test_one_success_after_a_miss_does_not_erase_the_always_fatal_branch():
    lr = fatal_data(1)
    assert lr.steps["too_late"].sum() > 20  # enough misses to learn from
    assert p_always_fatal(1) > 0.5
    # twenty forgiven misses are a forgiving benchmark, not a leak
    assert p_always_fatal(20) < 0.1
