"""Figures: every figure for the example-sized and the 60-model sets, as valid PDF (Type 42 fonts)
and PNG; what each figure draws is the rows of the metrics table it comes from; the palette
contract; the failed-diagnostics warning."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

from rtanalysis import metrics, plots
from rtanalysis.plots import style
from rtanalysis.plots.decomposition import decomposition_shares
from tests.report_fixtures import check_figure_files, fit_frames, paused_leaderboard, simulated


# the example-sized set (≤ 12 models: line figures) is drawn by test_report's demo (observed
# figures) and real-fit tests (model figures), which check their files the same way
@pytest.mark.slow
@pytest.mark.parametrize("preset", ["leaderboard60"])
def test_every_figure_is_written_as_pdf_and_png(preset, tmp_path):
    sim, load = simulated(preset)
    frames = fit_frames(sim)
    steps = load.steps.copy()  # some calls failed: the reliability figure is drawn too
    failed = steps.index[steps["no_action"]][::2]
    steps.loc[failed, ["outcome", "no_action_cause"]] = "error"
    figs = plots.build_figures(load.episodes, steps, fit_frames=frames)
    assert list(figs) == list(plots.FIGURES)
    models = set(load.episodes["model"])
    for name, fig in figs.items():
        check_figure_files(plots.write_figure(fig, tmp_path / name))
        if preset == "leaderboard60" and name not in ("ppc", "rank_trace"):
            # ranked plots: every model labelled on the first panel, ~0.1 in or more per model row
            assert models <= {t.get_text() for t in fig.axes[0].get_yticklabels()}, name
            assert fig.get_size_inches()[1] >= 0.1 * 60, name
        matplotlib.pyplot.close(fig)


#: every figure that needs no fit, but the reliability figure (drawn only where some call failed)
OBSERVED_WITHOUT_FAILED_CALLS = {n for n, (needs_fit, _) in plots.FIGURES.items() if not needs_fit} - {"reliability"}


def test_sixty_paused_models_without_windows_get_every_observed_figure():
    # issue 11: 58 models, paused clock only, one task type, latencies but no windows crashed
    # the latency figure's many-model branch (KeyError 'median')
    load = paused_leaderboard()
    figs = plots.build_figures(load.episodes, load.steps, fit=None)
    assert set(figs) == OBSERVED_WITHOUT_FAILED_CALLS
    models = set(load.episodes["model"])
    for name, fig in figs.items():
        if name != "success_vs_latency":  # no window: no relative latency to bin, says so
            assert models <= {t.get_text() for t in fig.axes[0].get_yticklabels()}, name
        matplotlib.pyplot.close(fig)
    texts = [t.get_text() for t in figs["success_vs_latency"].axes[0].texts]
    assert any("no decision has a window" in t for t in texts)


def test_single_column_width_and_unknown_width():
    sim, load = simulated("mixed")
    t = plots.figure_tables(load.episodes, load.steps)
    fig = plots.plot_latency_ecdf(t["latency_ecdf"], t["latency"], width="single")
    assert fig.get_size_inches()[0] == pytest.approx(3.5)
    with pytest.raises(ValueError, match="width"):
        plots.plot_latency_ecdf(t["latency_ecdf"], t["latency"], width="triple")


def test_metric_figures_need_no_fit():
    _, load = simulated("mixed")
    figs = plots.build_figures(load.episodes, load.steps)
    assert set(figs) == OBSERVED_WITHOUT_FAILED_CALLS


def test_reliability_figure_only_where_calls_failed():
    """Logs whose decisions include failed calls get the reliability figure, one row per model,
    ranked by failed-call rate; logs without get none (the previous test)."""
    _, load = simulated("mixed")
    steps = load.steps.copy()
    no_action = steps.index[steps["no_action"]]
    model_a = steps.loc[no_action, "model"].iloc[0]
    hit = [i for i in no_action if steps.at[i, "model"] == model_a][:5]
    assert len(hit) == 5
    steps.loc[hit, "outcome"] = "error"
    steps.loc[hit, "no_action_cause"] = "error"
    figs = plots.build_figures(load.episodes, steps)
    assert "reliability" in figs
    labels = [t.get_text() for t in figs["reliability"].axes[0].get_yticklabels()]
    assert labels[0] == model_a and set(labels) == set(load.episodes["model"])


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
    fig = plots.plot_forest(frames["decomposition"], diagnostics=frames["diagnostics"], ci_prob=0.9)
    assert fig.axes[0].get_xlabel() == "posterior mean and 90% interval"
    texts = [t.get_text() for t in fig.texts] + [fig._suptitle.get_text()]
    assert any("DIAGNOSTICS FAILED" in t for t in texts)
    assert any("R-hat 1.120" in t and "divergences 7" in t for t in texts)
    ok = plots.plot_forest(fit_frames(sim)["decomposition"], diagnostics=fit_frames(sim)["diagnostics"])
    assert not any("DIAGNOSTICS" in t.get_text() for t in ok.texts)


def test_decomposition_shares_sum_to_one_and_match_the_posterior():
    sim, load = simulated("mixed")
    dec = fit_frames(sim)["decomposition"]
    t = plots.figure_tables(load.episodes, load.steps)
    shares = decomposition_shares(dec, validity=t["validity"])
    segs = ["success", "capability", "late", "early", "silent", "timing", "unknown"]
    assert shares[segs].sum(axis=1).to_numpy() == pytest.approx(1.0)
    timed = dec[dec["clock"] != "paused"].set_index(["model", "task_type", "clock"])
    got = shares.set_index(["model", "task_type", "clock"]).loc[timed.index]
    assert got["success"].to_numpy() == pytest.approx(timed["p_success"].to_numpy())
    timing = got[["late", "early", "silent", "timing"]].sum(axis=1)
    assert timing.to_numpy() == pytest.approx(((1 - timed["p_success"]) * timed["share_timing"]).to_numpy())


def test_observed_decomposition_counts_failure_types():
    _, load = simulated("mixed")
    t = plots.figure_tables(load.episodes, load.steps)
    shares = decomposition_shares(None, t["success"], t["observed_decomposition"], t["validity"])
    ep = load.episodes[load.episodes["clock"] == "wall"]
    one = shares[(shares["model"] == ep["model"].iloc[0]) & (shares["task_type"] == ep["task_type"].iloc[0])
                 & (shares["clock"] == "wall")].iloc[0]
    cell = ep[(ep["model"] == one["model"]) & (ep["task_type"] == one["task_type"])]
    assert one["success"] == pytest.approx(cell["success"].mean())
    cap = (~cell["success"] & cell["failure_type"].isin(["capability", "both"])).mean()
    assert one["capability"] == pytest.approx(cap)


# ------------------------------------------------------------------------------------------
# what each figure draws is the rows of its table (read back from the artists)


@pytest.fixture(scope="module")
def mixed_tables():
    _, load = simulated("mixed")
    return load, plots.figure_tables(load.episodes, load.steps, ci_prob=0.9)


def _cell(frame, **keys):
    mask = np.ones(len(frame), dtype=bool)
    for k, v in keys.items():
        mask &= (frame[k] == v).to_numpy()
    return frame[mask]


def test_success_vs_latency_draws_the_success_by_latency_rows(mixed_tables):
    load, t = mixed_tables
    fig = plots.plot_success_vs_latency(t["success_by_latency"], ci_prob=0.9)
    table = t["success_by_latency"]
    checked = 0
    for ax in fig.axes:
        for bars in ax.containers:  # one errorbar per model and panel, labelled with the model
            rows = _cell(table, model=bars.get_label(), task_type=ax.get_title())
            rows = rows[(rows["clock"] != "paused") & (rows["relative_latency"] > 0)].sort_values("relative_latency")
            np.testing.assert_allclose(np.asarray(bars.lines[0].get_ydata(), float), rows["success_rate"].to_numpy(float))
            checked += 1
    assert checked >= 4
    assert "90% interval" in fig.axes[0].get_ylabel()
    matplotlib.pyplot.close(fig)


def test_latency_ecdf_draws_the_latency_ecdf_rows(mixed_tables):
    _, t = mixed_tables
    fig = plots.plot_latency_ecdf(t["latency_ecdf"], t["latency"])
    checked = 0
    for ax in fig.axes:
        for line in ax.get_lines():
            rows = _cell(t["latency_ecdf"], model=line.get_label(), task_type=ax.get_title())
            rows = rows[rows["clock"] != "paused"]
            if len(rows):
                np.testing.assert_allclose(line.get_xdata(), rows["latency"])
                np.testing.assert_allclose(line.get_ydata(), rows["ecdf"])
                checked += 1
    assert checked >= 4
    matplotlib.pyplot.close(fig)


def test_paused_vs_wall_draws_the_success_rows(mixed_tables):
    _, t = mixed_tables
    fig = plots.plot_paused_vs_wall(plots.clock_contrast(t["success"]), ci_prob=0.9)
    checked = 0
    for ax in fig.axes:
        for line in ax.get_lines():
            rows = _cell(t["success"], model=line.get_label(), task_type=ax.get_title())
            if len(rows):
                order = {"paused": 0, "step": 1, "wall": 2}
                rows = rows.sort_values("clock", key=lambda c: c.map(order))
                np.testing.assert_allclose(line.get_ydata(), rows["success_rate"])
                checked += 1
    assert checked >= 4
    matplotlib.pyplot.close(fig)


def test_trajectory_stability_draws_the_hazard_and_fallback_rows(mixed_tables):
    load, t = mixed_tables
    fig = plots.plot_trajectory_stability(t["hazard_by_model"], t["fallback_by_model"], ci_prob=0.9)
    hz = plots.hazard_points(t["hazard_by_model"])
    # the figure's hazard is metrics.failure_hazard: episodes censored at an unknown outcome
    timed = load.episodes[load.episodes["clock"] != "paused"]
    expected = metrics.failure_hazard(timed, load.steps, by="model", ci_prob=0.9)
    np.testing.assert_allclose(plots.hazard_points(expected)["hazard"], hz["hazard"])
    checked = 0
    for line in fig.axes[0].get_lines():
        rows = hz[hz["model"] == line.get_label()].sort_values("step")
        np.testing.assert_allclose(line.get_xdata(), rows["step"])
        np.testing.assert_allclose(line.get_ydata(), rows["hazard"])
        checked += 1
    assert checked == load.episodes["model"].nunique()
    offsets = fig.axes[1].collections[-1].get_offsets()
    fb = t["fallback_by_model"].dropna(subset=["fallback_rate"])
    np.testing.assert_allclose(np.sort(offsets[:, 0]), np.sort(fb["fallback_rate"]))
    matplotlib.pyplot.close(fig)


def test_failure_decomposition_draws_the_success_rows(mixed_tables):
    _, t = mixed_tables
    shares = decomposition_shares(None, t["success"], t["observed_decomposition"], t["validity"])
    fig = plots.plot_failure_decomposition(shares, ci_prob=0.9)
    timed = t["success"][t["success"]["clock"] != "paused"]
    for ax in fig.axes[: timed["task_type"].nunique()]:
        rows = timed[timed["task_type"] == ax.get_title()]
        whiskers = ax.containers[0].lines[2][0].get_segments()  # the success interval of every row
        ends = np.sort([[seg[0, 0], seg[1, 0]] for seg in whiskers], axis=0)
        lo = np.minimum(rows["success_rate_lo"], rows["success_rate"])
        hi = np.maximum(rows["success_rate_hi"], rows["success_rate"])
        np.testing.assert_allclose(ends, np.sort(np.c_[lo, hi], axis=0))
    assert "90% interval" in fig.legends[0].get_title().get_text()
    matplotlib.pyplot.close(fig)


def _renamed(frame, names):
    return frame.assign(model=frame["model"].map(names)) if frame is not None and "model" in frame else frame


@pytest.mark.parametrize("preset, n_models", [("mixed", None), ("leaderboard60", 13)])
def test_every_figure_keeps_its_text_inside_with_forty_character_names(preset, n_models):
    """A leaderboard's real names (up to 40 characters), a few models or 13 (the many-model forms): no
    label, tick or title is cut at the figure's edge, in any figure (the counterfactual figure's y-label
    and four-column legends were)."""
    sim, load = simulated(preset)
    models = sorted(load.episodes["model"].unique())[:n_models]
    names = {m: f"provider-{i:02d}/a-very-long-model-name-preview-2026"[:40] for i, m in enumerate(models)}
    assert all(len(n) == 40 for n in names.values())
    keep = lambda f: f[f["model"].isin(models)] if hasattr(f, "columns") and "model" in f else f  # noqa: E731
    episodes, steps = _renamed(keep(load.episodes), names), _renamed(keep(load.steps), names)
    frames = {k: _renamed(keep(v), names) if hasattr(v, "columns") else v for k, v in fit_frames(sim).items()}
    figs = plots.build_figures(episodes, steps, fit_frames=frames)
    assert {"counterfactuals", "forest", "failure_decomposition"} <= set(figs)
    for name, fig in figs.items():
        fig.canvas.draw()
        drawn = fig.get_tightbbox(fig.canvas.get_renderer())  # every drawn artist, in inches
        width, height = fig.get_size_inches()
        tol = 1 / 72  # a point
        assert drawn.x0 >= -tol and drawn.y0 >= -tol and drawn.x1 <= width + tol and drawn.y1 <= height + tol, \
            (name, drawn, (width, height))
        # neighbouring panels' axis labels do not run into each other (the latency panels' did)
        renderer = fig.canvas.get_renderer()
        labels = [a.xaxis.label for a in fig.axes if a.get_visible() and a.xaxis.label.get_text()]
        boxes = [t.get_window_extent(renderer) for t in labels]
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                assert not boxes[i].overlaps(boxes[j]), (name, labels[i].get_text(), labels[j].get_text())
        matplotlib.pyplot.close(fig)
