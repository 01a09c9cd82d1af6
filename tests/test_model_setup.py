"""Set-up without shape recompiles: the log-density compiled for one dataset (kept on disk, re-bound by
name) gives another dataset's exact log-density and gradient; diagnostics advice; data notes."""

import numpy as np
import pandas as pd
import pytest

from rtanalysis.model.build import build_model
from rtanalysis.model.data import aggregate
from rtanalysis.model.diagnostics import THRESHOLDS, advice
from rtanalysis.model.fit import SMALL_DATA_EPISODES
from rtanalysis.model.studies.toy import ToyDesign, toy_load


def _data(n_models: int, n_items: int, seed: int):
    models = dict(list(ToyDesign().models.items())[:n_models])
    lr = toy_load(ToyDesign(models=models, n_items=n_items), n_per_cell=20, seed=seed, labelled=True)
    return aggregate(lr.episodes, lr.steps)


@pytest.mark.slow
def test_cached_function_rebinds_data_of_another_shape():
    from pymc.initial_point import make_initial_point_fn

    from rtanalysis.model.sampler import flat_functions

    for n_models, n_items, seed in ((3, 6, 1), (2, 4, 2)):  # the second reuses the first's functions
        d = _data(n_models, n_items, seed)
        model = build_model(d)
        point_fn = make_initial_point_fn(model=model, default_strategy="support_point",
                                         jitter_rvs=set(model.free_RVs), return_transformed=True)
        n_dim, logp_fn, expand_fn, names, shapes = flat_functions(model, point_fn)
        point = point_fn(7)
        x = np.concatenate([np.ravel(point[n]) for n in names[:len(shapes)]])
        assert len(x) == n_dim
        lp, grad = logp_fn(x)
        exact = model.compile_logp(mode="FAST_COMPILE")(point)
        np.testing.assert_allclose(lp, exact, rtol=1e-10)
        dlogp = model.compile_dlogp(mode="FAST_COMPILE")(point)
        np.testing.assert_allclose(grad, dlogp, rtol=1e-8, atol=1e-10)
        expanded = dict(zip(names, expand_fn(x), strict=True))
        assert expanded["model_cap"].shape == (n_models,)
        assert expanded["z_item_cap"].shape == (len(d.items),)


def test_advice_names_failing_parameters_and_what_to_try():
    table = pd.DataFrame({"param": ["a0", "model_cap[m1]", "model_cap[m2]", "sd_item_cap[t]"],
                          "rhat": [1.001, 1.03, 1.02, 1.0], "ess_bulk": [900, 150, 300, 800],
                          "ess_tail": [900, 400, 500, 350]})
    diag = {"ok": False, "n_divergent": 3, "bfmi": [0.9, 0.2], "n_chains": 4, "thresholds": THRESHOLDS}
    text = advice(diag, table)
    assert "model_cap (2 values: max R-hat 1.030, min bulk ESS 150" in text
    assert "sd_item_cap" in text and "a0" not in text
    assert "tune='auto'" in text and "3 divergent" in text and "E-BFMI (0.20)" in text
    assert advice({**diag, "ok": True}, table) == ""


def test_paused_only_data_is_noted_not_refused():
    from rtanalysis.model.fit import _data_notes

    lr = toy_load(ToyDesign(clocks=("paused",)), n_per_cell=10, seed=0, labelled=True)
    notes = _data_notes(aggregate(lr.episodes, lr.steps))
    assert notes["timing_separable"] is False
    assert notes["notes"][0].startswith("no timed clock: timing cannot be separated")


@pytest.mark.parametrize("labelled", [True, False])
def test_wall_only_data_say_what_capability_rests_on(labelled):
    from rtanalysis.model.fit import _data_notes
    from rtanalysis.simulate import simulate

    lr = simulate("wall_only", seed=0, tasks=3, seeds=2, labelled=labelled).load()
    notes = _data_notes(aggregate(lr.episodes, lr.steps))["notes"]
    paused = [n for n in notes if n.startswith("no paused runs")]
    assert len(paused) == 1
    assert ("every episode carries content labels" in paused[0]) is labelled
    assert ("assuming that an agent's content does not depend on whether it was late" in paused[0]) is not labelled
    mixed = simulate("timeouts", seed=0, tasks=3, seeds=2).load()  # paused and wall: nothing to say
    assert not [n for n in _data_notes(aggregate(mixed.episodes, mixed.steps))["notes"] if "paused runs" in n]


def testtune_argument_of_the_cli():
    import argparse

    from rtanalysis.model.cli import tune_arg

    assert tune_arg("auto") == "auto" and tune_arg("1500") == 1500
    for bad in ("-1", "lots"):
        with pytest.raises(argparse.ArgumentTypeError, match="--tune"):
            tune_arg(bad)


@pytest.mark.slow
def test_tune_auto_retries_a_failed_fit_once_and_records_it(monkeypatch):
    """Ten draws cannot pass the gate: tune='auto' refits once with 3x tuning and 2x draws, records the
    first attempt, and the result holds the retry's draws; a fixed tune never retries. The retry samples
    the model set up for the first attempt (set up once), with the draws a fit asked for the retry's
    sampling at once gives."""
    import xarray as xr

    from rtanalysis import fit
    from rtanalysis.model import sampler

    set_up = []
    real = sampler.compile_model_c
    monkeypatch.setattr(sampler, "compile_model_c", lambda model, *a, **k: set_up.append(model) or real(model, *a, **k))
    models = dict(list(ToyDesign().models.items())[:2])
    lr = toy_load(ToyDesign(models=models, n_items=4), n_per_cell=20, seed=3, labelled=True)
    res = fit(lr, draws=10, chains=2, tune="auto", seed=1, progress=False)
    assert len(set_up) == 1
    retried = res.diagnostics["retried"]
    assert retried["tune"] == 30 and retried["draws"] == 20 and res.n_draws == 20
    assert (retried["first"]["max_rhat"] > THRESHOLDS["max_rhat"]
            or retried["first"]["min_ess_bulk"] < THRESHOLDS["min_ess_bulk"] or retried["first"]["n_divergent"] > 0)
    # smaller steps after divergences, or from the start on small data; the request is kept (the fit
    # cache finds it by it)
    small = len(lr.episodes) < SMALL_DATA_EPISODES
    assert small and res.diagnostics["adaptation"] == "low_rank"
    assert retried["target_accept"] == (0.95 if retried["first"]["n_divergent"] or small else None)
    assert retried["asked"] == {"draws": 10, "tune": 10}
    fixed = fit(lr, draws=10, chains=2, tune=10, seed=1, progress=False)
    assert not fixed.diagnostics.get("retried") and fixed.n_draws == 10
    at_once = fit(lr, draws=20, chains=2, tune=30, seed=1, progress=False)
    assert at_once.diagnostics["target_accept"] == retried["target_accept"]
    xr.testing.assert_equal(res.idata["posterior"].to_dataset(), at_once.idata["posterior"].to_dataset())


def _alive_numba_dispatchers() -> int:
    import gc

    from numba.core.registry import CPUDispatcher

    gc.collect()
    return sum(type(o) is CPUDispatcher for o in gc.get_objects())


@pytest.mark.slow
def test_refitting_in_one_process_reuses_the_compiled_functions_and_gives_the_same_draws():
    """A notebook or a simulation study fits many times in one process. Each load of a compiled function
    used to leave ~1,500 numba dispatchers (PyTensor registers fused kernels as global numba overloads),
    ~17 MB a fit; the functions are now loaded once and re-bound. Re-binding must not change results:
    data A, then data B of another shape, then A again gives A's draws exactly."""
    import xarray as xr

    from rtanalysis.model.fit import fit

    def data(n_models, n_items, seed):
        models = dict(list(ToyDesign().models.items())[:n_models])
        return toy_load(ToyDesign(models=models, n_items=n_items), n_per_cell=15, seed=seed, labelled=True)

    a, b = data(3, 6, 1), data(2, 4, 2)
    kw = dict(draws=60, chains=2, seed=5, tune=60, progress=False)
    first = fit(a, **kw)
    fit(b, **kw)
    before = _alive_numba_dispatchers()
    again = fit(a, **kw)
    assert _alive_numba_dispatchers() == before
    xr.testing.assert_equal(first.idata["posterior"].to_dataset(), again.idata["posterior"].to_dataset())
