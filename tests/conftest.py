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


#: the test now running, set before its fixtures (so a module- or session-scoped fixture that samples
#: is charged to the first test that needs it)
_RUNNING: dict = {"slow": True, "nodeid": None}


def pytest_runtest_setup(item):
    _RUNNING["slow"] = item.get_closest_marker("slow") is not None
    _RUNNING["nodeid"] = item.nodeid


def pytest_runtest_teardown(item):
    _RUNNING["slow"] = True  # between tests (session teardown, collection) nothing is charged


def _sampling_needs_the_slow_marker() -> None:
    """Every test that samples a posterior carries the ``slow`` marker, so that ``make test-fast``
    (``-m "not slow"``) samples nothing: the package's two ways into a sampler, ``sample_chains``
    (nutpie) and ``sample_model`` (any sampler), are wrapped to fail a test without the marker
    (the real function runs for every other test)."""
    import functools
    import importlib

    def guard(fn):
        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            if not _RUNNING["slow"]:
                raise AssertionError(f"{_RUNNING['nodeid']} samples ({fn.__name__}) without the `slow` marker: "
                                     "mark it @pytest.mark.slow, or use a shared fit (tests/fits.py)")
            return fn(*args, **kwargs)

        return guarded

    sampler = importlib.import_module("rtanalysis.model.sampler")
    sampler.sample_chains = guard(sampler.sample_chains)
    for name in ("rtanalysis.model.sampler", "rtanalysis.model.fit", "rtanalysis.model.compare"):
        module = importlib.import_module(name)
        module.sample_model = guard(sampler.sample_model if name.endswith("sampler") else module.sample_model)


_sampling_needs_the_slow_marker()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Slow (sampling, compiling) tests first, the rest in their order: with two xdist workers the long
    ones then start at once instead of last, and the short ones fill in around them (longest first).
    Then each ``xdist_group`` made to take effect under ``--dist loadgroup`` (:func:`_honour_xdist_groups`)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    if getattr(config.option, "loadgroup", False):  # set by xdist for --dist loadgroup, as its own hook reads it
        _honour_xdist_groups(items)


def _honour_xdist_groups(items) -> None:
    """pytest-xdist (3.8) sends the tests whose node id ends in ``@<group>`` to one worker, and its
    own hook appends the ``xdist_group`` name to ``item._nodeid``, which pytest 9 no longer reads
    (node ids live in ``item._id``): no group took effect, and the tests that share a compiled model
    or a cached fit compiled or fitted it on both workers. Appended here where pytest reads it (a
    private attribute: tests/test_xdist_groups.py fails if a release changes it). Runs last, so an
    xdist release that appends the group itself is left alone."""
    from _pytest.nodeid import NodeId

    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        if names and "@" not in item.nodeid:
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")
