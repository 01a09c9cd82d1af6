"""Trajectory stability: hazard of the first failed decision by step index, and fallback rates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns

from . import style
from .summaries import fallback_rates, first_failure_hazard

MIN_AT_RISK = 5  # hazard points from fewer episodes at risk are too noisy to draw


def plot_trajectory_stability(steps: pd.DataFrame, width: str = "double", max_step: int = 30):
    """Left: discrete hazard of the first failed decision by step index (timed clocks), per model,
    pooled over task types; right: the share of decisions that used a fallback action, per model
    with Wilson intervals. With many models the hazard becomes a heatmap (models × step)."""
    s = steps[steps["clock"] != "paused"]
    models = sorted(steps["model"].unique())
    palette = style.model_palette(models)
    hz = first_failure_hazard(s.assign(task_type="all", clock="timed"), max_step=max_step)
    hz = hz[hz["n"] >= MIN_AT_RISK]
    fb = fallback_rates(s.assign(task_type="all", clock="timed"))
    if style.many(models):
        return _many(hz, fb, models, width)
    fig, axes = style.new_figure(width, 2.4, ncols=2, gridspec_kw={"width_ratios": [2, 1]})
    ax = axes[0, 0]
    for model in models:
        h = hz[hz["model"] == model].sort_values("step")
        if len(h):
            ax.plot(h["step"], h["rate"], color=palette[model], lw=1, marker="o", ms=2, label=model)
            ax.fill_between(h["step"], h["lo"], h["hi"], color=palette[model], alpha=0.15, lw=0)
    ax.set_xlabel("decision index (step)")
    ax.set_ylabel("hazard of first failure")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("first failed decision")
    _fallback_panel(axes[0, 1], fb, models, palette)
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(models), 4), frameon=False)
    return fig


def _fallback_panel(ax, fb, order, palette, fontsize=7):
    pos = {m: i for i, m in enumerate(order)}
    f = fb[fb["model"].isin(order)]
    if len(f):
        y = f["model"].map(pos).astype(float)
        ax.errorbar(f["rate"], y, xerr=style.err(f["rate"], f["lo"], f["hi"]), fmt="none", ecolor="#555555",
                    lw=0.6)
        ax.scatter(f["rate"], y, c=[palette[m] for m in f["model"]], s=10, zorder=3)
    else:
        ax.text(0.5, 0.5, "no fallback labels", transform=ax.transAxes, ha="center", fontsize=7)
    ax.set_yticks(range(len(order)), order, fontsize=fontsize)
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_xlim(left=0)
    ax.set_xlabel("fallback rate")
    ax.set_title("fallback actions")


def _many(hz, fb, models, width):
    order = (hz.groupby("model")["rate"].mean().reindex(models).fillna(np.inf).sort_values().index.tolist())
    palette = style.model_palette(models)
    fig, axes = style.new_figure(width, style.rows_height(len(order), per_row=0.13), ncols=2, sharey=False,
                                 gridspec_kw={"width_ratios": [2, 1]})
    grid = hz.pivot_table(index="model", columns="step", values="rate").reindex(index=order)
    sns.heatmap(grid, ax=axes[0, 0], vmin=0, vmax=1, cmap="magma_r", yticklabels=True,
                cbar_kws={"label": "hazard of first failure"})
    axes[0, 0].set_xlabel("decision index (step)")
    axes[0, 0].set_ylabel("model (ranked by mean hazard)")
    axes[0, 0].tick_params(axis="y", labelsize=5)
    _fallback_panel(axes[0, 1], fb, order, palette, fontsize=5)
    return fig
