"""The written report and the ``report``/``demo`` commands: every model named, no ``nan``, text
from logs escaped, failed diagnostics visible, the outputs where the brief puts them."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from rtanalysis import cli, metrics, plots
from rtanalysis.reporting import report_blocks, report_tables
from rtanalysis.reporting.template import to_html, to_markdown
from tests.report_fixtures import check_figure_files, fit_frames, simulated

NAN = re.compile(r"\bnan\b", re.IGNORECASE)
EVIL = "<script>alert('x')</script>&co"


def _renamed(load, old: str, new: str):
    ep = load.episodes.assign(model=load.episodes["model"].replace({old: new}))
    st = load.steps.assign(model=load.steps["model"].replace({old: new}))
    return dataclasses.replace(load, episodes=ep, steps=st)


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory):
    """``rtanalysis demo`` (observed metrics only) run from an unrelated directory."""
    home = tmp_path_factory.mktemp("elsewhere")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(home)
        code = cli.main(["demo", "--out", "demo", "--no-fit", "--quiet", "--figures", "copied"])
    return code, home


@pytest.mark.xdist_group("report_demo")  # one `demo` run (the module fixture) for both
def test_demo_runs_from_any_directory_and_names_every_model(demo_report):
    code, home = demo_report
    assert code == 0
    out = home / "demo"
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    models = pd.read_parquet(out / "episodes.parquet", columns=["model"])["model"].unique()
    assert len(models) == 6
    for model in models:
        assert model in md and model in html
    assert not NAN.search(md) and not NAN.search(html)
    assert "No model was fitted" in md
    assert "Power for the next run" in md and "episodes per cell" in md


@pytest.mark.xdist_group("report_demo")  # one `demo` run (the module fixture) for both
def test_outputs_are_where_the_brief_puts_them(demo_report):
    _, home = demo_report
    out = home / "demo"
    figures = sorted((out / "figures").iterdir())
    assert len(figures) >= 10
    for pdf in (p for p in figures if p.suffix == ".pdf"):
        check_figure_files([pdf, pdf.with_suffix(".png")])
    for p in figures:
        assert (home / "copied" / p.name).read_bytes() == p.read_bytes()
    assert {p.name for p in (out / "tables").iterdir()} == {f"{t}.{ext}" for t in ("success", "latency",
                                                                                   "observed_failure_types")
                                                           for ext in ("csv", "md", "tex")}
    html = (out / "report.html").read_text()
    n_imgs = len(re.findall(r'<img alt="[^"]*" src="data:image/png;base64,', html))
    assert n_imgs == len(list((out / "figures").glob("*.png")))


def test_html_and_markdown_escape_log_text():
    sim, load = simulated("mixed")
    load = _renamed(load, "balanced", EVIL)
    tabs = metrics.compute_all(load.episodes, load.steps)
    blocks = report_blocks(load, tabs, {}, None, {}, report_tables(tabs, {}), 0.95, 3, "abc123")
    html = to_html(blocks, "t", Path("."))
    assert "<script>" not in html
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;co" in html
    assert EVIL in to_markdown(blocks)


def _blocks(preset: str, failed: bool, ci_prob: float = 0.95):
    sim, load = simulated(preset)
    frames = fit_frames(sim, failed=failed)
    tabs = metrics.compute_all(load.episodes, load.steps, ci_prob=ci_prob)
    figure_paths = {name: f"figures/{name}.png" for name in plots.FIGURES}
    return load, report_blocks(load, tabs, frames, None, figure_paths, report_tables(tabs, frames, ci_prob=ci_prob),
                               ci_prob, 3, "abc123")


def test_failed_diagnostics_are_warned_in_text_and_captions():
    _, blocks = _blocks("mixed", failed=True)
    md = to_markdown(blocks)
    assert md.count("⚠ Warning:") >= 1
    assert "R-hat 1.120" in md and "divergences 7" in md
    model_titles = {title for needs_fit, title in plots.FIGURES.values() if needs_fit}
    figure_caps = [b["caption"] for b in blocks if b["kind"] == "figure" and b["title"] in model_titles]
    assert figure_caps and all("Warning" in c for c in figure_caps)
    html = to_html([b for b in blocks if b["kind"] != "figure"], "t", Path("."))
    assert 'class="warning"' in html
    _, ok_blocks = _blocks("mixed", failed=False)
    assert "⚠ Warning" not in to_markdown(ok_blocks)


def test_sixty_model_report_names_every_model_without_nan():
    load, blocks = _blocks("leaderboard60", failed=False)
    md = to_markdown(blocks)
    for model in load.episodes["model"].unique():
        assert model in md
    assert not NAN.search(md)
    assert "Task type: high_frequency" in md


def test_ci_prob_reaches_every_caption_and_table():
    _, blocks = _blocks("mixed", failed=False, ci_prob=0.9)
    captions = [b["caption"] for b in blocks if b["kind"] in ("figure", "table")]
    with_interval = [c for c in captions if "interval" in c or "band" in c]
    assert len(with_interval) >= 8
    assert all("90%" in c for c in with_interval) and not any("95%" in c for c in captions)


def test_headline_sentences_carry_observed_numbers():
    _, load = simulated("mixed")
    from rtanalysis.reporting.content import headline_sentence, observed_headline

    by = ("model", "clock")
    head = observed_headline(metrics.success_rates(load.episodes, by), metrics.observed_decomposition(load.episodes, by),
                             "wall")
    row = head.iloc[0]
    wall = load.episodes[(load.episodes["clock"] == "wall") & (load.episodes["model"] == row["model"])]
    sentence = headline_sentence(row, "wall", posterior=False)
    assert f"succeeds in {100 * wall['success'].mean():.0f}% [" in sentence
    assert "of wall-clock episodes" in sentence


def test_report_cli_rejects_bad_options(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path), "--out", str(tmp_path / "o"), "--draws", "0"]) == 2
    assert "--draws" in capsys.readouterr().err
    assert cli.main(["report", str(tmp_path / "missing"), "--out", str(tmp_path / "o"), "--no-fit", "--quiet"]) == 2
    assert "missing" in capsys.readouterr().err


@pytest.fixture(scope="module")
def fitted_report(tmp_path_factory):
    """One real (small) fit of the example data, reported."""
    import rtanalysis
    from rtanalysis.reporting import write_report

    load = rtanalysis.load(rtanalysis.example_data())
    fit = rtanalysis.fit(load, draws=60, chains=2, seed=5, progress=False, tune=None)
    out = tmp_path_factory.mktemp("fitted")
    return load, fit, write_report(load, out, fit=fit, seed=5)


@pytest.mark.slow
@pytest.mark.xdist_group("report_fit")  # one fit (the module fixture) for all four
def test_report_from_a_real_fit(fitted_report):
    from rtanalysis.reporting import tables

    load, fit, paths = fitted_report
    md = paths["markdown"].read_text()
    for model in load.episodes["model"].unique():
        assert model in md
    # the page embeds its figures as base64, where "/nAN+" is a chance run of the alphabet, not a NaN
    html = re.sub(r"data:[^\"')]+", "", paths["html"].read_text())
    assert not NAN.search(md) and not NAN.search(html)
    assert "halving its latency would" in md and "of wall-clock episodes" in md
    assert fit.data_hash in md and "Seed 5" in md
    # the reporting guidelines' parts: the priors of every sampled parameter, the ranking's decision rule
    appendix = md[md.index("## Appendix: priors"):]
    for name in ("a0", "fatality", "length_cap", "c0", "s0"):
        assert f"| {name} |" in appendix
    assert "**Decision rule.**" in md
    keys = ["model", "task_type", "clock"]
    timed = fit.decomposition().merge(fit.highest_probability(), on=keys).query("clock != 'paused'")
    leaders = timed.sort_values("p_success", ascending=False).groupby("task_type").head(1)
    assert ("posterior probability it is the highest" in md) == bool((leaders["p_highest"] >= 0.9).any())
    assert ("No model's success is the highest" in md) == bool((leaders["p_highest"] < 0.9).any())
    if not fit.diagnostics["ok"]:  # 60 draws rarely pass the thresholds: the warning must show
        assert "⚠ Warning" in md
    names = {p.stem for p in paths["figures"]}
    assert {"counterfactuals", "forest", "rank_trace", "failure_decomposition", "ppc"} <= names
    for pdf in (p for p in paths["figures"] if p.suffix == ".pdf"):
        check_figure_files([pdf, pdf.with_suffix(".png")])
    dec = fit.decomposition()
    table = tables.expand_intervals(tables.read_markdown((paths["markdown"].parent / "tables" / "decomposition.md").read_text()))
    assert len(table) == len(dec)
    merged = table.merge(dec, on=["model", "task_type", "clock"], suffixes=("_t", ""))
    assert (merged["p_success_t"] - merged["p_success"]).abs().max() <= 0.005 + 1e-9


@pytest.mark.slow
@pytest.mark.xdist_group("report_fit")  # one fit (the module fixture) for all four
def test_report_reads_no_record_only_column(fitted_report, tmp_path):
    """``rtanalysis report`` drops the step fields only the record needs once the fit has hashed the
    data: the same fit reported from the tables without them gives the same text, tables and figures
    (a stage that read one would fail here, or differ)."""
    from rtanalysis.reporting import write_report
    from rtanalysis.schema import RECORD_ONLY_STEP_COLUMNS

    load, fit, paths = fitted_report
    lean = dataclasses.replace(load, steps=load.steps.copy())
    lean.drop_record_only_columns()
    assert not set(RECORD_ONLY_STEP_COLUMNS) & set(lean.steps.columns)
    assert list(lean.steps.columns) == [c for c in load.steps.columns if c not in RECORD_ONLY_STEP_COLUMNS]
    # as in `rtanalysis report`, where the fit holds the same (dropped from) frame
    lean_fit = dataclasses.replace(fit, steps=lean.steps)
    assert "t_obs" in fit.steps.columns and "t_obs" not in lean_fit.steps.columns
    again = write_report(lean, tmp_path, fit=lean_fit, seed=5)
    assert again["markdown"].read_text() == paths["markdown"].read_text()
    full_dir, lean_dir = paths["markdown"].parent, tmp_path
    produced = sorted(p.relative_to(full_dir) for p in full_dir.rglob("*") if p.suffix in (".md", ".csv", ".tex", ".png"))
    assert len(produced) > 20
    for rel in produced:
        assert (lean_dir / rel).read_bytes() == (full_dir / rel).read_bytes(), rel


@pytest.mark.slow
@pytest.mark.xdist_group("report_fit")  # one fit (the module fixture) for all
def test_figures_drawn_in_workers_are_the_ones_drawn_here(fitted_report, tmp_path, monkeypatch):
    """The report draws its figures in forked workers while it writes the tables; on one core it draws
    them itself, one at a time. Both write the same bytes, in the same order."""
    from rtanalysis.model import sampler
    from rtanalysis.reporting import write_report

    load, fit, paths = fitted_report
    monkeypatch.setattr(sampler, "usable_cores", lambda: 1)
    here = write_report(load, tmp_path, fit=fit, seed=5)
    assert [p.name for p in here["figures"]] == [p.name for p in paths["figures"]]
    assert len(here["figures"]) >= 14
    for a, b in zip(here["figures"], paths["figures"]):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert here["markdown"].read_text() == paths["markdown"].read_text()


@pytest.mark.parametrize("half, verb", [(0.60, "raise success to 60%"), (0.30, "lower success to 30%"),
                                        (0.452, "leave success at 45%")])
def test_counterfactual_sentence_says_which_way(half, verb):
    from rtanalysis.reporting.content import headline_sentence

    row = {"model": "m", "p_success": 0.449, "p_success_lo": 0.42, "p_success_hi": 0.49, "share_timing": float("nan"),
           "p_success_half_latency": half, "p_success_half_latency_lo": half - 0.03,
           "p_success_half_latency_hi": half + 0.03}
    sentence = headline_sentence(row, "wall", posterior=True)
    assert verb in sentence and "timing failures" not in sentence and not NAN.search(sentence)


def _posterior_row(**extra) -> dict:
    return {"model": "m", "p_success": 0.31, "p_success_lo": 0.28, "p_success_hi": 0.34, "share_timing": float("nan"),
            "p_success_half_latency": 0.40, "p_success_half_latency_lo": 0.35, "p_success_half_latency_hi": 0.45,
            **extra}


@pytest.mark.parametrize("share, words, absent", [
    (0.0, "what halving its latency would do the data cannot tell", "raise success"),
    (0.5, "raise success to 40% [35, 45] (λ acts on the 50% of its episodes whose latencies are measured)", "cannot tell"),
    (1.0, "raise success to 40% [35, 45].", "λ acts on")])
def test_lambda_sentence_says_when_the_data_cannot_tell(share, words, absent):
    from rtanalysis.reporting.content import headline_sentence

    sentence = headline_sentence(_posterior_row(latency_informative_share=share), "step", posterior=True)
    assert words in sentence and absent not in sentence


def test_headline_sets_the_logs_rate_beside_the_models_and_marks_a_miss():
    from rtanalysis.reporting.content import headline_sentence
    from rtanalysis.reporting.document import success_misses

    ppc = pd.DataFrame({"model": ["m", "m", "n"], "task_type": ["a", "b", "a"], "clock": ["wall"] * 3,
                        "check": ["success_rate"] * 3, "observed": [0.405, 0.2, 0.5],
                        "predicted_lo": [0.28, 0.1, 0.4], "predicted_hi": [0.34, 0.3, 0.6],
                        "covered": [False, True, True]})
    misses = success_misses(ppc, "wall")
    assert misses == {"m": "a: observed 40% vs 28–34%"}
    row = _posterior_row(success_rate=0.405, success_rate_lo=0.37, success_rate_hi=0.44, ppc_misses=misses["m"])
    sentence = headline_sentence(row, "wall", posterior=True)
    assert sentence.startswith("⚠ **m** succeeds in 31% [28, 34] (observed 40% [37, 44]) of wall-clock episodes")
    assert "the model misses its logs in a: observed 40% vs 28–34%" in sentence
    assert not headline_sentence(_posterior_row(), "wall", posterior=True).startswith("⚠")


def test_decomposition_figure_has_no_blank_rows():
    """A task type without some model × clock rows lists only its own rows."""
    from rtanalysis.plots.decomposition import plot_failure_decomposition

    rows = [("m1", "a"), ("m2", "a"), ("m1", "b")]
    shares = pd.DataFrame({"model": [r[0] for r in rows], "task_type": [r[1] for r in rows], "clock": "wall",
                           "success": [0.5, 0.4, 0.3], "success_lo": 0.2, "success_hi": 0.6, "capability": 0.3,
                           "timing": 0.2, "late": 0.0, "early": 0.0, "silent": 0.0, "unknown": 0.0,
                           "timing_end_lo": float("nan"),
                           "timing_end_hi": float("nan")})
    fig = plot_failure_decomposition(shares)
    labels = [[t.get_text() for t in ax.get_yticklabels()] for ax in fig.axes[:2]]
    assert labels == [["m1", "m2"], ["m1"]]


@pytest.mark.slow
@pytest.mark.xdist_group("report_fit")  # one fit (the module fixture) for all four
def test_pooled_headline_is_the_episode_weighted_mean_of_the_cells(fitted_report):
    from rtanalysis.reporting.content import pooled_posterior

    _, fit, _ = fitted_report
    dec = fit.decomposition()
    pooled = pooled_posterior(fit, dec, "wall", 0.95).set_index("model")
    wall = dec[dec["clock"] == "wall"]
    expected = (wall["p_success"] * wall["n_episodes"]).groupby(wall["model"]).sum() / \
        wall.groupby("model")["n_episodes"].sum()
    assert pooled["p_success"].to_numpy() == pytest.approx(expected.reindex(pooled.index).to_numpy(), abs=1e-9)
    assert (pooled["p_success_lo"] < pooled["p_success"]).all() and (pooled["p_success"] < pooled["p_success_hi"]).all()
    assert pooled["share_timing"].between(0, 1).all()


@pytest.mark.slow
@pytest.mark.xdist_group("report_fit")  # one fit (the module fixture) for all four
def test_fit_round_trips_through_its_folder_without_pickle(fitted_report, tmp_path):
    from rtanalysis.model import FitResult
    from rtanalysis.reporting import load_or_fit

    load, fit, _ = fitted_report
    fit.to_dir(tmp_path)
    back = FitResult.from_dir(tmp_path, load)
    pd.testing.assert_frame_equal(back.decomposition(), fit.decomposition())
    assert back.diagnostics["ok"] == fit.diagnostics["ok"] and back.seed == fit.seed
    again = load_or_fit(load, tmp_path, draws=fit.n_draws, chains=fit.chains, seed=fit.seed, ci_prob=fit.ci_prob)
    pd.testing.assert_frame_equal(again.decomposition(), fit.decomposition())
    # a fit that retried (tune="auto") is found again by the draws that were asked for
    info_path = tmp_path / "diagnostics.json"
    info = json.loads(info_path.read_text())
    info["retried"] = {"asked": {"draws": fit.n_draws // 2, "tune": 10}}
    info_path.write_text(json.dumps(info))
    again = load_or_fit(load, tmp_path, draws=fit.n_draws // 2, chains=fit.chains, seed=fit.seed, ci_prob=fit.ci_prob)
    assert again.n_draws == fit.n_draws
    other = dataclasses.replace(load, episodes=load.episodes.iloc[1:].reset_index(drop=True))
    with pytest.raises(ValueError, match="other data"):
        FitResult.from_dir(tmp_path, other)


def test_sixty_paused_models_without_windows_get_a_report():
    # issue 11's shape (figures: tests/test_plots.py): the document must not need a timed clock
    from tests.report_fixtures import paused_leaderboard

    load = paused_leaderboard()
    tabs = metrics.compute_all(load.episodes, load.steps)
    md = to_markdown(report_blocks(load, tabs, {}, None, {}, report_tables(tabs, {}), 0.95, 0, "abc123"))
    assert "No episode ran under a timed clock" in md and not NAN.search(md)
    assert all(model in md for model in load.episodes["model"].unique())
