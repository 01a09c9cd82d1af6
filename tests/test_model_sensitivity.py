"""Prior sensitivity by power-scaling (arviz_stats): a task type with almost no data is flagged, a
data-rich one is not; the log prior is PyMC's own prior log-density."""

import numpy as np
import pytest

from rtanalysis.io import EpisodeSink
from rtanalysis.model.studies.toy import ToyDesign, toy_records
from tests.fits import data_set, shared_fit

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("model")]


@data_set("rich_and_sparse")
def rich_and_sparse():
    """Three models on a data-rich task type (300 episodes per model) and on a sparse one (2)."""
    rich = ToyDesign(task_types={"rich": (0.0, 0.0, 0.8, 0.6)}, clocks=("wall",))
    sparse = ToyDesign(task_types={"sparse": (-0.3, 0.3, 2.0, 0.3)}, clocks=("wall",))
    sink, line = EpisodeSink(), 0
    for tag, design, n in (("r", rich, 300), ("s", sparse, 2)):
        for rec in toy_records(design, n, seed=5, labelled=False):
            rec["episode_id"] = tag + rec["episode_id"]
            line += 1
            assert sink.add(rec, "toy", line)
    return sink.finish()


def rich_and_sparse_fit():
    # 2000 draws: the diagnostic's noise floor (independent noise draws) is then ≈ 0.018 per row, a
    # third of the threshold (at 1000 draws, ≈ 0.025, the rich rows' mean reached 0.046 in one run
    # after a change that only reordered a sum in the likelihood)
    return shared_fit("rich_and_sparse", draws=1000, tune=500)


def test_sparse_task_type_is_prior_sensitive_and_rich_one_is_not():
    """Per task type, since one row's value carries Monte Carlo noise (≈ 0.018 at 2000 draws, a third of
    the threshold; across seeds and sampler changes a sparse row ranged 0.035–0.17, a rich one 0.013–0.058)."""
    from rtanalysis.model.sensitivity import THRESHOLD

    ps = rich_and_sparse_fit().prior_sensitivity()
    share = ps[ps["quantity"] == "share_timing"].set_index(["model", "task_type"])
    assert len(share) == 6 and share["prior_sensitivity"].notna().all()
    sparse, rich = share.xs("sparse", level="task_type"), share.xs("rich", level="task_type")
    # the sparse type is flagged, the rich one is not, and the prior moves the sparse one far more
    assert sparse["flag"].any() and sparse["prior_sensitivity"].mean() > THRESHOLD, sparse
    assert rich["prior_sensitivity"].mean() < THRESHOLD, rich
    assert sparse["prior_sensitivity"].mean() > 2 * rich["prior_sensitivity"].mean(), share
    assert set(ps["diagnosis"]) <= {"", "potential prior-data conflict", "potential strong prior / weak likelihood"}


def test_log_prior_is_pymc_prior_density():
    """The per-draw log prior equals the sum of PyMC's own prior log-densities (compute_log_prior),
    item level excepted; the log likelihood is the sum of the potentials at the draw."""
    import xarray as xr
    from pymc.stats import compute_log_prior

    from rtanalysis.model.build import build_model
    from rtanalysis.model.sensitivity import HIERARCHY_LEVEL, log_prior_likelihood, sampler_logp

    res = rich_and_sparse_fit()
    post = res.idata["posterior"].to_dataset().isel(chain=[0], draw=slice(0, 5))
    model = build_model(res.data, res.spec.latency_family, item_latency=res.spec.item_latency,
                        episode_latency=res.spec.episode_latency)  # the fit's own model
    lp, ll = log_prior_likelihood(model, post)
    with model:
        ref = compute_log_prior(xr.DataTree.from_dict({"posterior": post}), extend_inferencedata=False,
                                progressbar=False)
    total = sum(ref[v].sum([d for d in ref[v].dims if d not in ("chain", "draw")]) for v in ref.data_vars
                if v not in HIERARCHY_LEVEL)
    np.testing.assert_allclose(lp, total.values, rtol=1e-8)
    assert np.isfinite(ll).all() and (ll < 0).all()
    # the sampler's own log-density minus the prior part (with the transforms' Jacobians) is the same log
    # likelihood, to rounding: what prior_sensitivity uses instead of evaluating every potential again
    logp = sampler_logp(res)[[0], :5]
    lp2, ll2 = log_prior_likelihood(model, post, logp)
    np.testing.assert_array_equal(lp2, lp)
    np.testing.assert_allclose(ll2, ll, rtol=0, atol=1e-8)
    assert np.ptp(ll) > 1e-3  # draws that differ, so equal values are not one number

