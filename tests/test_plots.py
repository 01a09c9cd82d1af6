"""Figures: every figure for the example-sized and the 60-model sets, as valid PDF (Type 42 fonts)
and PNG; the palette contract; the failed-diagnostics warning."""

from __future__ import annotations

import matplotlib
import pytest

from rtanalysis import plots
from rtanalysis.plots import style
from rtanalysis.plots.decomposition import decomposition_shares
from tests.report_fixtures import check_figure_files, fit_frames, simulated


# the example-sized set (≤ 12 models: line figures) is drawn by test_report's demo (observed
# figures) and real-fit tests (model figures), which check their files the same way
@pytest.mark.parametrize("preset", ["leaderboard60"])
def test_every_figure_is_written_as_pdf_and_png(preset, tmp_path):
    sim, load = simulated(preset)
    frames = fit_frames(sim)
    figs = plots.build_figures(load.episodes, load.steps, fit_frames=frames)
    assert list(figs) == list(plots.FIGURES)
    models = set(load.episodes["model"])
    for name, fig in figs.items():
        check_figure_files(plots.save_figure(fig, tmp_path / name))
        if preset == "leaderboard60" and name not in ("ppc", "rank_trace"):
            # ranked plots: every model labelled on the first panel, ~0.1 in or more per model row
            assert models <= {t.get_text() for t in fig.axes[0].get_yticklabels()}, name
            assert fig.get_size_inches()[1] >= 0.1 * 60, name
        matplotlib.pyplot.close(fig)


def test_single_column_width_and_unknown_width():
    sim, load = simulated("mixed")
    fig = plots.plot_latency_ecdf(load.steps, width="single")
    assert fig.get_size_inches()[0] == pytest.approx(3.5)
    with pytest.raises(ValueError, match="width"):
        plots.plot_latency_ecdf(load.steps, width="triple")


def test_metric_figures_need_no_fit():
    _, load = simulated("mixed")
    figs = plots.build_figures(load.episodes, load.steps)
    assert set(figs) == {n for n, (needs_fit, _) in plots.FIGURES.items() if not needs_fit}


def test_palette_is_okabe_ito_for_few_models_and_deterministic():
    pal = style.model_palette(["b", "a", "c", "a"])
    assert list(pal) == ["a", "b", "c"]
    assert list(pal.values()) == list(style.OKABE_ITO[:3])
    assert style.model_palette(["c", "a", "b"]) == pal


def test_palette_stays_distinct_at_60_models():
    names = [f"m{i:02d}" for i in range(60)]
    pal = style.model_palette(reversed(names))
    assert list(pal) == names
    assert len(set(pal.values())) == 60


def test_failed_diagnostics_are_stamped_on_model_figures():
    sim, load = simulated("mixed")
    frames = fit_frames(sim, failed=True)
    fig = plots.plot_forest(frames["decomposition"], diagnostics=frames["diagnostics"])
    texts = [t.get_text() for t in fig.texts] + [fig._suptitle.get_text()]
    assert any("DIAGNOSTICS FAILED" in t for t in texts)
    assert any("R-hat 1.120" in t and "divergences 7" in t for t in texts)
    ok = plots.plot_forest(fit_frames(sim)["decomposition"], diagnostics=fit_frames(sim)["diagnostics"])
    assert not any("DIAGNOSTICS" in t.get_text() for t in ok.texts)


def test_decomposition_shares_sum_to_one_and_match_the_posterior():
    sim, load = simulated("mixed")
    dec = fit_frames(sim)["decomposition"]
    shares = decomposition_shares(dec, load.episodes, load.steps)
    segs = ["success", "capability", "late", "early", "silent", "timing", "unknown"]
    assert shares[segs].sum(axis=1).to_numpy() == pytest.approx(1.0)
    timed = dec[dec["clock"] != "paused"].set_index(["model", "task_type", "clock"])
    got = shares.set_index(["model", "task_type", "clock"]).loc[timed.index]
    assert got["success"].to_numpy() == pytest.approx(timed["p_success"].to_numpy())
    timing = got[["late", "early", "silent", "timing"]].sum(axis=1)
    assert timing.to_numpy() == pytest.approx(((1 - timed["p_success"]) * timed["share_timing"]).to_numpy())


def test_observed_decomposition_counts_failure_types():
    _, load = simulated("mixed")
    shares = decomposition_shares(None, load.episodes, load.steps)
    ep = load.episodes[load.episodes["clock"] == "wall"]
    one = shares[(shares["model"] == ep["model"].iloc[0]) & (shares["task_type"] == ep["task_type"].iloc[0])
                 & (shares["clock"] == "wall")].iloc[0]
    cell = ep[(ep["model"] == one["model"]) & (ep["task_type"] == one["task_type"])]
    assert one["success"] == pytest.approx(cell["success"].mean())
    cap = (~cell["success"] & cell["failure_type"].isin(["capability", "both"])).mean()
    assert one["capability"] == pytest.approx(cap)
