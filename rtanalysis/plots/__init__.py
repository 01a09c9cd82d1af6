"""Paper figures from the tidy tables and the fitted model; one module per figure family.

Every ``plot_*`` function returns a matplotlib Figure sized for one (``width="single"``, 3.5 in) or
two (``"double"``, 7 in) paper columns; :func:`write_figure` writes it as PDF (Type 42 fonts) and
300-dpi PNG. :func:`build_figures` makes the whole set for a report (:func:`iter_figures` one at a time).
"""

from __future__ import annotations

from ..model.result import LAMBDA_GRID
from .decomposition import (clock_contrast, decomposition_shares, plot_failure_decomposition, plot_forest,
                            plot_paused_vs_wall)
from .diagnostics import plot_ppc, plot_rank_trace
from .latency import plot_counterfactuals, plot_latency_ecdf, plot_success_vs_latency, timed_or_all
from .reliability import has_failed_calls, plot_reliability
from .stability import hazard_points, plot_trajectory_stability
from .style import MANY_MODELS, apply_style, mark_diagnostics, model_palette, write_figure

#: figure name -> (needs a fitted model, one-line description); the report's order
FIGURES = {
    "success_vs_latency": (False, "success versus latency relative to the window"),
    "failure_decomposition": (False, "failure decomposition"),
    "latency_ecdf": (False, "latency distributions"),
    "paused_vs_wall": (False, "paused versus timed-clock success"),
    "counterfactuals": (True, "latency counterfactuals"),
    "forest": (True, "capability and speed effects"),
    "trajectory_stability": (False, "trajectory stability"),
    "reliability": (False, "decisions lost to failed calls (drawn when the logs hold any)"),
    "ppc": (True, "posterior predictive check"),
    "rank_trace": (True, "rank and trace plots"),
}
#: the FitResult frame each model figure needs
FIT_FRAME = {"counterfactuals": "counterfactuals", "forest": "decomposition", "ppc": "ppc", "rank_trace": "posterior"}

#: the λ grid of the counterfactual curves: log-spaced, fine enough to draw a curve (0.25 to 4, part of
#: the success curve's grid, so the report computes each of these λ once for both figures)
CURVE_LAMBDAS = tuple(x for x in LAMBDA_GRID if 0.25 <= x <= 4)
#: the most posterior draws the λ curves of the figures are computed from (evenly thinned; each λ costs a
#: pass over the draws, and a curve is read for its shape). The report states their Monte Carlo error
#: (``FitResult.curve_ess``)
CURVE_DRAWS = 1000
#: the λ of the report's counterfactual table
TABLE_LAMBDAS = (0.25, 0.5, 1.0, 2.0)


def fit_outputs(fit, ci_prob: float | None = None) -> dict:
    """The frames a fit result offers the figures and the report's tables, with intervals at ``ci_prob``
    (default: the fit's). The two λ curves (``counterfactuals``, ``success_curve``) are computed from at
    most :data:`CURVE_DRAWS` draws; the tables' frames from all."""
    if fit is None:
        return {}
    kw = {} if ci_prob is None else {"ci_prob": ci_prob}
    return {
        "diagnostics": dict(fit.diagnostics or {}),
        "decomposition": fit.decomposition(**kw),
        "highest": fit.highest_probability("p_success"),
        "counterfactuals": fit.counterfactuals(lambdas=CURVE_LAMBDAS, as_models=False, draws=CURVE_DRAWS, **kw),
        # the report's table of a few λ, from all the draws
        "counterfactual_table": fit.counterfactuals(lambdas=TABLE_LAMBDAS, as_models=False, **kw),
        "success_curve": fit.success_curve(draws=CURVE_DRAWS, **kw),
        "ppc": fit.ppc(**kw),
        "posterior": fit.idata,
    }


def figure_tables(episodes, steps, ci_prob: float = 0.95, metrics: dict | None = None) -> dict:
    """The :mod:`rtanalysis.metrics` tables the observed figures draw, keyed by name: the default
    grouping (model × task type × clock, reused from ``metrics`` when given, e.g. the
    :func:`rtanalysis.metrics.compute_all` tables of the same ``ci_prob``), plus the hazard and
    fallback tables grouped by model over the timed clocks (``hazard_by_model``,
    ``fallback_by_model``; all clocks when none is timed) and the reliability table by model
    (``reliability_by_model``, every clock)."""
    from .. import metrics as m
    from ..metrics._groups import steps_of
    from ..metrics.reliability import RELIABILITY_STEP_COLUMNS
    from ..metrics.stability import STABILITY_STEP_COLUMNS

    have = metrics or {}
    names = ("success", "success_by_latency", "latency", "latency_ecdf", "validity", "observed_decomposition")
    out = {name: have[name] if name in have else m.METRICS[name](episodes, steps, None, ci_prob) for name in names}
    timed = timed_or_all(episodes)
    with m.shared_episode_rows():  # each decision's episode found once for both tables, not per table
        # only the columns the two tables read are copied (a whole steps frame is GBs at 10^6 episodes)
        timed_steps = steps_of(steps, timed, columns=STABILITY_STEP_COLUMNS)
        out["hazard_by_model"] = m.failure_hazard(timed, timed_steps, by="model", ci_prob=ci_prob)
        out["fallback_by_model"] = m.fallback_summary(timed, timed_steps, by="model", ci_prob=ci_prob)
        out["reliability_by_model"] = m.reliability_summary(
            episodes, steps_of(steps, episodes, columns=[c for c in RELIABILITY_STEP_COLUMNS if c in steps]),
            by="model", ci_prob=ci_prob)
    return out


def _figure_makers(t: dict, f: dict, models, width: str, ci_prob: float) -> dict:
    diag = f.get("diagnostics")
    dec = f.get("decomposition")
    dec_diag = diag if dec is not None else None
    return {
        "success_vs_latency": lambda: plot_success_vs_latency(t["success_by_latency"], curve=f.get("success_curve"),
                                                              width=width, ci_prob=ci_prob, diagnostics=diag,
                                                              models=models),
        "failure_decomposition": lambda: plot_failure_decomposition(
            decomposition_shares(dec, t["success"], t["observed_decomposition"], t["validity"]), width=width,
            ci_prob=ci_prob, diagnostics=dec_diag),
        "latency_ecdf": lambda: plot_latency_ecdf(t["latency_ecdf"], t["latency"], width=width, models=models),
        "paused_vs_wall": lambda: plot_paused_vs_wall(clock_contrast(t["success"], dec), width=width, ci_prob=ci_prob,
                                                      diagnostics=dec_diag, models=models),
        "counterfactuals": lambda: plot_counterfactuals(f["counterfactuals"], width=width, diagnostics=diag,
                                                        ci_prob=ci_prob),
        "forest": lambda: plot_forest(dec, width=width, diagnostics=diag, ci_prob=ci_prob),
        "trajectory_stability": lambda: plot_trajectory_stability(t["hazard_by_model"], t["fallback_by_model"],
                                                                  width=width, ci_prob=ci_prob, models=models),
        "reliability": lambda: plot_reliability(t["reliability_by_model"], width=width, ci_prob=ci_prob,
                                                models=models),
        "ppc": lambda: plot_ppc(f["ppc"], width=width, diagnostics=diag, ci_prob=ci_prob),
        "rank_trace": lambda: plot_rank_trace(f["posterior"], width=width, diagnostics=diag),
    }


def iter_figures(episodes, steps, fit=None, width: str = "double", fit_frames: dict | None = None,
                 ci_prob: float = 0.95, metrics: dict | None = None):
    """The figures of :func:`build_figures` as ``(name, Figure)`` pairs, each drawn only when the
    previous one has been taken: a caller that writes and closes each in turn holds one figure's
    raster at a time (a 60-model figure at 300 dpi is 20–45 MiB, and a drawn figure keeps it)."""
    for name, make in figure_makers(episodes, steps, fit, width, fit_frames, ci_prob, metrics).items():
        yield name, make()


def figure_makers(episodes, steps, fit=None, width: str = "double", fit_frames: dict | None = None,
                  ci_prob: float = 0.95, metrics: dict | None = None) -> dict:
    """``{name: make}`` for each figure of :func:`build_figures`, in report order: ``make()`` draws it.
    The tables they draw are computed here, once; a figure is drawn only when its maker is called (the
    report draws them in worker processes, ``rtanalysis.reporting.pipeline``)."""
    f = fit_frames if fit_frames is not None else fit_outputs(fit, ci_prob)
    tables = figure_tables(episodes, steps, ci_prob, metrics)
    models = sorted(episodes["model"].unique())
    out = {}
    for name, make in _figure_makers(tables, f, models, width, ci_prob).items():
        if name == "reliability" and not has_failed_calls(tables["reliability_by_model"]):
            continue  # nothing to show: no call failed
        if name not in FIT_FRAME or f.get(FIT_FRAME[name]) is not None:
            out[name] = make
    return out


def build_figures(episodes, steps, fit=None, width: str = "double", fit_frames: dict | None = None,
                  ci_prob: float = 0.95, metrics: dict | None = None) -> dict:
    """All figures the data (and the fit, when given) allow: ``{name: Figure}`` in report order.

    Observed figures draw :func:`figure_tables` (metrics frames); model figures draw the fit's
    frames (``fit_frames``, default :func:`fit_outputs` of ``fit`` at ``ci_prob``). To write many
    figures, :func:`iter_figures` holds one at a time."""
    return dict(iter_figures(episodes, steps, fit, width, fit_frames, ci_prob, metrics))


__all__ = [
    "CURVE_DRAWS", "CURVE_LAMBDAS", "FIGURES", "MANY_MODELS", "apply_style", "build_figures", "clock_contrast",
    "decomposition_shares", "figure_makers", "figure_tables", "fit_outputs", "hazard_points", "iter_figures", "mark_diagnostics", "model_palette",
    "plot_counterfactuals", "plot_failure_decomposition", "plot_forest", "plot_latency_ecdf", "plot_paused_vs_wall",
    "plot_ppc", "plot_rank_trace", "plot_reliability", "plot_success_vs_latency", "plot_trajectory_stability", "write_figure",
    "timed_or_all",
]
