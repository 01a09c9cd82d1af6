import os

os.environ.setdefault("MPLBACKEND", "Agg")

import copy  # noqa: E402

import pytest  # noqa: E402

GOOD_EPISODE = {
    "schema": "rtlog/1",
    "run_id": "r1",
    "episode_id": "e1",
    "model": "model-a",
    "task": "freeway-3",
    "task_type": "high_frequency",
    "clock": "wall",
    "seed": 3,
    "success": False,
    "score": 0.5,
    "conditions": {"cognitive_load": "M", "time_pressure_s": 2},
    "steps": [
        {"t_obs": 0.0, "t_act": 0.41, "window": [0, 0.8], "action": "U", "correct_at_obs": True},
        {"t_obs": 0.8, "t_act": 1.95, "window": [0, 0.8], "action": "S", "correct_at_obs": True,
         "valid_at_exec": False},
    ],
    "meta": {"harness": "test"},
}


@pytest.fixture
def good_episode():
    return copy.deepcopy(GOOD_EPISODE)


def pytest_collection_modifyitems(config, items):
    """Slow (sampling, compiling) tests first, the rest in their order: with two xdist workers the long
    ones then start at once instead of last, and the short ones fill in around them (longest first)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
