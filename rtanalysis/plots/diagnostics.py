"""Sampler and model checks: posterior predictive checks, rank and trace plots.

Rank and trace plots are drawn here from the posterior ``xarray.DataTree`` directly (matplotlib):
kept as our code because ``arviz_plots.plot_rank`` / ``plot_trace`` each make a figure of their own
size, while the report needs trace and rank side by side per parameter in one 1- or 2-column paper
figure with the diagnostics mark; the numbers (E-BFMI, R-hat, ESS) come from ``arviz_stats``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from . import style

MAX_PARAMS = 8  # rank/trace plots show the main (lowest-dimensional) parameters, at most this many


def posterior_dataset(posterior):
    """The ``posterior`` group of a DataTree (or the dataset itself) as an ``xarray.Dataset``."""
    if hasattr(posterior, "children") and "posterior" in getattr(posterior, "children", {}):
        return posterior["posterior"].to_dataset()
    if hasattr(posterior, "to_dataset"):
        return posterior.to_dataset()
    return posterior


def _model_main_params() -> tuple[str, ...]:
    from ..model.build import MAIN_PARAMS

    return tuple(MAIN_PARAMS)


def main_parameters(ds, max_params: int = MAX_PARAMS) -> list[tuple[str, dict]]:
    """(variable, coords) pairs to show: the model's main parameters (population means and
    scales, not the standardised offsets ``z_*``), scalars first, then leading entries of small
    vectors; other variables only when the model names none."""
    sample_dims = {"chain", "draw"}
    main = [v for v in _model_main_params() if v in ds.data_vars and not v.startswith("z_")]
    pool = main or [v for v in ds.data_vars if not str(v).startswith("z_")] or list(ds.data_vars)

    def size(v):
        return int(np.prod([ds[v].sizes[d] for d in ds[v].dims if d not in sample_dims] or [1]))

    rank = {v: i for i, v in enumerate(pool)}
    names = sorted(pool, key=lambda v: (size(v) > 1, rank[v] if main else str(v)))
    out = []
    for name in names:
        var = ds[name]
        extra = [d for d in var.dims if d not in sample_dims]
        if not extra:
            out.append((name, {}))
        elif len(extra) == 1 and var.sizes[extra[0]] <= 4:
            out.extend((name, {extra[0]: var[extra[0]].values[i]}) for i in range(var.sizes[extra[0]]))
        if len(out) >= max_params:
            break
    return out[:max_params]


def plot_rank_trace(posterior, width: str = "double", diagnostics: dict | None = None,
                    max_params: int = MAX_PARAMS):
    """Per main parameter: trace by chain (left) and rank histograms by chain (right). Uniform
    rank histograms and overlapping traces indicate the chains mix."""
    ds = posterior_dataset(posterior)
    params = main_parameters(ds, max_params)
    n = max(len(params), 1)
    fig, axes = style.new_figure(width, 0.9 * n + 0.6, nrows=n, ncols=2, gridspec_kw={"width_ratios": [2, 1]})
    for row, (name, sel) in enumerate(params):
        values = np.asarray(ds[name].sel(sel).transpose("chain", "draw").values, dtype=float)
        n_chain, n_draw = values.shape
        ranks = stats.rankdata(values.ravel()).reshape(values.shape)
        bins = np.linspace(0, values.size, min(20, max(n_draw // 5, 4)) + 1)
        colours = style.OKABE_ITO
        label = name + "".join(f"[{v}]" for v in sel.values())
        for c in range(n_chain):
            axes[row, 0].plot(values[c], lw=0.4, color=colours[c % len(colours)], alpha=0.8)
            hist, _ = np.histogram(ranks[c], bins=bins)
            axes[row, 1].stairs(hist, bins, color=colours[c % len(colours)], lw=0.8)
        axes[row, 1].axhline(n_draw / (len(bins) - 1), color="black", lw=0.5, ls="--")
        axes[row, 0].set_ylabel(label, fontsize=6, rotation=0, ha="right", va="center")
        axes[row, 1].set_yticks([])
    if params:
        axes[-1, 0].set_xlabel("draw")
        axes[-1, 1].set_xlabel("rank (all chains)")
        axes[0, 0].set_title("trace by chain")
        axes[0, 1].set_title("rank histogram by chain")
    else:
        axes[0, 0].text(0.5, 0.5, "no parameters", ha="center", transform=axes[0, 0].transAxes)
    return style.mark_diagnostics(fig, diagnostics)


def plot_ppc(ppc: pd.DataFrame, width: str = "double", diagnostics: dict | None = None, ci_prob: float = 0.95):
    """Posterior predictive check: each cell's observed statistic against the posterior predictive
    mean and interval. Left: success rate per model × task type × clock; right (when the frame has
    them, ``check`` = ``log_latency_p10/p50/p90``): log-latency quantiles. Points whose interval
    crosses the diagonal are reproduced by the model. Columns of ``FitResult.ppc``: ``observed``,
    ``predicted``, ``predicted_lo``/``_hi`` and ``check``."""
    obs, pred, lo, hi = "observed", "predicted", "predicted_lo", "predicted_hi"
    missing = [c for c in (obs, pred, lo, hi) if c not in ppc.columns]
    if missing:
        raise ValueError(f"posterior predictive frame lacks {missing}; has {list(ppc.columns)}")
    check = ppc["check"].astype(str) if "check" in ppc else pd.Series("success_rate", index=ppc.index)
    success = ppc[check.str.startswith("success")]
    latency = ppc[check.str.startswith("log_latency")]
    panels = [("success rate", success, (0, 1))] + ([("log latency quantiles", latency, None)] if len(latency) else [])
    models = sorted(ppc["model"].unique()) if "model" in ppc else []
    palette = style.model_palette(models)
    fig, axes = style.new_figure(width, min(style.figure_width(width) / len(panels), 3.5) + 0.6, ncols=len(panels))
    markers = {"log_latency_p10": "v", "log_latency_p50": "o", "log_latency_p90": "^"}
    for ax, (title, frame, limits) in zip(axes.flat, panels):
        colours = [palette[m] for m in frame["model"]] if models else "#0072B2"
        ax.vlines(frame[obs], frame[lo], frame[hi], colors=colours, lw=0.6, alpha=0.8)
        if title.startswith("log"):
            for q, marker in markers.items():
                sub = frame[frame["check"] == q]
                ax.scatter(sub[obs], sub[pred], c=[palette[m] for m in sub["model"]], s=8, marker=marker, zorder=3,
                           label=q.replace("log_latency_", ""))
            ax.legend(frameon=False, loc="upper left", title="quantile")
        else:
            ax.scatter(frame[obs], frame[pred], c=colours, s=8, zorder=3)
        both = pd.concat([frame[obs], frame[pred]])
        lim = limits or (float(both.min()) - 0.1, float(both.max()) + 0.1)
        ax.plot(lim, lim, color="black", lw=0.6, ls="--")
        ax.set_xlim(*lim)
        ax.set_ylim(*lim)
        ax.set_xlabel(f"observed {title}")
        ax.set_ylabel(f"posterior predictive mean, {style.pct(ci_prob)} interval")
        if len(frame):
            inside = ((frame[obs] >= frame[lo]) & (frame[obs] <= frame[hi])).mean()
            ax.set_title(f"{title}: {inside:.0%} of cells inside their interval")
    if models and len(models) <= style.MANY_MODELS:
        from matplotlib.lines import Line2D

        fig.legend([Line2D([], [], color=palette[m], marker="o", ls="", ms=3) for m in models], models,
                   loc="outside lower center", ncols=style.legend_columns(fig, models, most=6), frameon=False)
    return style.mark_diagnostics(fig, diagnostics)
