"""Paper figures from the tidy tables and the fitted model; one module per figure family.

Every ``plot_*`` function returns a matplotlib Figure sized for one (``width="single"``, 3.5 in) or
two (``"double"``, 7 in) paper columns; :func:`save_figure` writes it as PDF (Type 42 fonts) and
300-dpi PNG. :func:`build_figures` makes the whole set for a report.
"""

from __future__ import annotations

import numpy as np

from .decomposition import (clock_contrast, decomposition_shares, plot_failure_decomposition, plot_forest,
                            plot_paused_vs_wall)
from .diagnostics import plot_ppc, plot_rank_trace
from .latency import plot_counterfactuals, plot_latency_ecdf, plot_success_vs_latency
from .stability import plot_trajectory_stability
from .style import MANY_MODELS, apply_style, mark_diagnostics, model_palette, save_figure

#: figure name -> (needs a fitted model, one-line description); the report's order
FIGURES = {
    "success_vs_latency": (False, "success versus latency relative to the window"),
    "failure_decomposition": (False, "failure decomposition"),
    "latency_ecdf": (False, "latency distributions"),
    "paused_vs_wall": (False, "paused versus timed-clock success"),
    "counterfactuals": (True, "latency counterfactuals"),
    "forest": (True, "capability and speed effects"),
    "trajectory_stability": (False, "trajectory stability"),
    "ppc": (True, "posterior predictive check"),
    "rank_trace": (True, "rank and trace plots"),
}


#: the λ grid of the counterfactual curves: log-spaced, fine enough to draw a curve
CURVE_LAMBDAS = tuple(float(x) for x in np.round(2.0 ** np.linspace(-2, 2, 17), 4))


def fit_outputs(fit) -> dict:
    """The frames a fit result offers the figures (methods absent on the result are skipped)."""
    if fit is None:
        return {}
    out = {"diagnostics": dict(getattr(fit, "diagnostics", None) or {})}
    for name in ("decomposition", "counterfactuals", "success_curve", "ppc"):
        method = getattr(fit, name, None)
        kwargs = {"lambdas": CURVE_LAMBDAS, "as_models": False} if name == "counterfactuals" else {}
        try:
            out[name] = method(**kwargs) if callable(method) else None
        except (ModuleNotFoundError, NotImplementedError):  # a part of the model stage not installed
            out[name] = None
    out["posterior"] = getattr(fit, "posterior", None)
    return out


def build_figures(episodes, steps, fit=None, width: str = "double", fit_frames: dict | None = None) -> dict:
    """All figures the data (and the fit, when given) allow: ``{name: Figure}`` in report order."""
    f = fit_frames if fit_frames is not None else fit_outputs(fit)
    diag = f.get("diagnostics")
    dec = f.get("decomposition")
    figs = {
        "success_vs_latency": lambda: plot_success_vs_latency(episodes, steps, curve=f.get("success_curve"),
                                                              width=width, diagnostics=diag),
        "failure_decomposition": lambda: plot_failure_decomposition(episodes, steps, dec, width=width,
                                                                    diagnostics=diag if dec is not None else None),
        "latency_ecdf": lambda: plot_latency_ecdf(steps, width=width),
        "paused_vs_wall": lambda: plot_paused_vs_wall(episodes, dec, width=width,
                                                      diagnostics=diag if dec is not None else None),
        "counterfactuals": lambda: plot_counterfactuals(f["counterfactuals"], width=width, diagnostics=diag),
        "forest": lambda: plot_forest(dec, width=width, diagnostics=diag),
        "trajectory_stability": lambda: plot_trajectory_stability(steps, width=width),
        "ppc": lambda: plot_ppc(f["ppc"], width=width, diagnostics=diag),
        "rank_trace": lambda: plot_rank_trace(f["posterior"], width=width, diagnostics=diag),
    }
    needs = {"counterfactuals": "counterfactuals", "forest": "decomposition", "ppc": "ppc", "rank_trace": "posterior"}
    out = {}
    for name, make in figs.items():
        key = needs.get(name)
        if key is not None and f.get(key) is None:
            continue
        if name in ("latency_ecdf", "success_vs_latency", "trajectory_stability") and steps is None:
            continue
        out[name] = make()
    return out


__all__ = [
    "FIGURES", "MANY_MODELS", "apply_style", "build_figures", "clock_contrast", "decomposition_shares",
    "fit_outputs", "mark_diagnostics", "model_palette", "plot_counterfactuals", "plot_failure_decomposition",
    "plot_forest", "plot_latency_ecdf", "plot_paused_vs_wall", "plot_ppc", "plot_rank_trace",
    "plot_success_vs_latency", "plot_trajectory_stability", "save_figure",
]
