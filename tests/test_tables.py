"""Tables: Markdown and LaTeX parse back to the same numbers at the printed precision; LaTeX is
booktabs with caption, label and escaped names; missing numbers never print as ``nan``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rtanalysis.reporting import tables
from tests.report_fixtures import fit_frames, simulated

NASTY = ["m_1 & co", "50%-model", "#hash$", "back\\slash{x}", "pipe|model", "λ−model × 2"]


def _nasty_decomposition():
    sim, _ = simulated("mixed")
    dec = tables.decomposition_table(fit_frames(sim)["decomposition"])
    models = sorted(dec["model"].unique())
    return dec.assign(model=dec["model"].map(dict(zip(models, NASTY))))


def _assert_same_at_precision(original: pd.DataFrame, parsed: pd.DataFrame, digits: int = tables.DIGITS):
    assert list(parsed.columns) == list(original.columns)
    for col in original.columns:
        a, b = original[col], parsed[col]
        if pd.api.types.is_bool_dtype(a):
            assert [str(bool(x)) for x in a] == list(b), col
        elif pd.api.types.is_integer_dtype(a):
            assert np.array_equal(a.to_numpy(dtype=float), b.to_numpy(dtype=float)), col
        elif pd.api.types.is_float_dtype(a):
            np.testing.assert_allclose(b.to_numpy(dtype=float), np.round(a.to_numpy(dtype=float), digits),
                                       atol=10.0 ** -digits * 0.5 + 1e-12, err_msg=col)
        else:
            assert list(a.astype(str)) == list(b), col


@pytest.mark.parametrize("fmt", ["markdown", "latex"])
def test_decomposition_table_round_trips(fmt, tmp_path):
    dec = _nasty_decomposition()
    paths = tables.write_table(dec, tmp_path, "decomposition", "Posterior decomposition (95% intervals)")
    text = paths[1 if fmt == "markdown" else 2].read_text()
    parsed = tables.expand_intervals(tables.read_markdown(text) if fmt == "markdown" else tables.read_latex(text))
    _assert_same_at_precision(dec, parsed)
    back = pd.read_csv(paths[0])
    np.testing.assert_allclose(back["p_success"], dec["p_success"], rtol=1e-12)


def test_latex_is_booktabs_with_caption_label_and_escaped_names():
    dec = _nasty_decomposition()
    tex = tables.to_latex(dec, "Decomposition: 95% intervals & more", "tab:decomposition")
    for cmd in (r"\toprule", r"\midrule", r"\bottomrule", r"\label{tab:decomposition}",
                r"\caption{Decomposition: 95\% intervals \& more}"):
        assert cmd in tex
    assert r"m\_1 \& co" in tex and r"50\%-model" in tex and r"\#hash\$" in tex
    assert r"back\textbackslash{}slash\{x\}" in tex and r"$\lambda$$-$model $\times$ 2" in tex
    assert tables.latex_unescape(tables.latex_escape("tilde~caret^ — x")) == "tilde~caret^ — x"
    assert r"p\_success" in tex  # headers escaped too


def test_interval_format_and_parse():
    assert tables.format_interval(0.4234, 0.3712, 0.4851) == "0.42 [0.37, 0.49]"
    assert tables.parse_interval("0.42 [0.37, 0.49]") == (0.42, 0.37, 0.49)
    assert tables.format_interval(np.nan, 0.1, 0.2) == tables.MISSING
    assert tables.format_interval(0.5, np.nan, np.nan) == "0.50"


def test_missing_numbers_never_print_as_nan():
    frame = pd.DataFrame({"model": ["a", "b"], "x": [0.5, np.nan], "x_lo": [0.4, np.nan], "x_hi": [0.6, np.nan],
                          "y": [np.nan, 1.0]})
    for text in (tables.to_markdown(frame, "c"), tables.to_latex(frame, "c", "tab:c")):
        assert "nan" not in text.lower()
    parsed = tables.expand_intervals(tables.read_markdown(tables.to_markdown(frame)))
    assert np.isnan(parsed.loc[1, "x"]) and parsed.loc[0, "x_hi"] == 0.6 and np.isnan(parsed.loc[0, "y"])


def test_counterfactual_table_is_wide_by_lambda():
    sim, _ = simulated("mixed")
    cf = fit_frames(sim)["counterfactuals"]
    wide = tables.counterfactual_table(cf)
    assert {"lambda_0.5", "lambda_0.5_lo", "lambda_1", "lambda_2_hi"} <= set(wide.columns)
    one = cf[(cf["lambda"] == 0.5) & (cf["model"] == wide.loc[0, "model"]) & (cf["task_type"] == wide.loc[0, "task_type"])
             & (cf["clock"] == wide.loc[0, "clock"])]
    assert wide.loc[0, "lambda_0.5"] == pytest.approx(one["p_success"].iloc[0])


def test_success_table_is_the_metrics_rows():
    from rtanalysis.metrics import success_rates

    _, load = simulated("mixed")
    success = success_rates(load.episodes, ci_prob=0.9)
    t = tables.success_table(success)
    ep = load.episodes
    assert t["n"].sum() == len(ep) and t["successes"].sum() == ep["success"].sum()
    merged = t.merge(success, on=["model", "task_type", "clock"], suffixes=("", "_m"))
    assert len(merged) == len(success)
    np.testing.assert_array_equal(merged["success_rate_lo"], merged["success_rate_lo_m"])
