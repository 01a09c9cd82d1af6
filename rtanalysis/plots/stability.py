"""Trajectory stability: hazard of the first failed decision by step index, and fallback rates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns

from . import style

#: hazard points from fewer episodes at risk are too noisy to draw
MIN_AT_RISK = 5
MAX_STEP = 30  # steps drawn (later steps have few episodes at risk)


def hazard_points(hazard: pd.DataFrame, max_step: int = MAX_STEP) -> pd.DataFrame:
    """The rows of ``metrics.failure_hazard`` the figure draws: step ≤ ``max_step`` and at least
    :data:`~rtanalysis.plots.stability.MIN_AT_RISK` episodes at risk."""
    return hazard[(hazard["step"] <= max_step) & (hazard["n_at_risk"] >= MIN_AT_RISK)]


def plot_trajectory_stability(hazard: pd.DataFrame, fallback: pd.DataFrame, width: str = "double",
                              ci_prob: float = 0.95, models=None):
    """Left: discrete hazard of the first failed decision by step index per model (the rows of
    ``metrics.failure_hazard`` grouped by model: it censors an episode at an unknown outcome);
    right: the share of labelled decisions that used a fallback action per model
    (``metrics.fallback_summary``), both with ``ci_prob`` intervals. With many models the hazard
    becomes a heatmap (models × step)."""
    models = sorted(set(models if models is not None else fallback["model"]))
    hz = hazard_points(hazard)
    palette = style.model_palette(models)
    if style.many(models):
        return _many(hz, fallback, models, width, ci_prob)
    fig, axes = style.new_figure(width, 2.4, ncols=2, gridspec_kw={"width_ratios": [2, 1]})
    ax = axes[0, 0]
    for model in models:
        h = hz[hz["model"] == model].sort_values("step")
        if len(h):
            ax.plot(h["step"], h["hazard"], color=palette[model], lw=1, marker="o", ms=2, label=model)
            ax.fill_between(h["step"], h["hazard_lo"], h["hazard_hi"], color=palette[model], alpha=0.15, lw=0)
    ax.set_xlabel("decision index (step)")
    ax.set_ylabel(f"hazard of first failure\n{style.pct(ci_prob)} band")  # one line is taller than the panel
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("first failed decision")
    _fallback_panel(axes[0, 1], fallback, models, palette, ci_prob)
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncols=style.legend_columns(fig, labels),
                   frameon=False)
    return fig


def _fallback_panel(ax, fb, order, palette, ci_prob, fontsize=7):
    pos = {m: i for i, m in enumerate(order)}
    f = fb[fb["model"].isin(order) & fb["fallback_rate"].notna()]
    if len(f):
        y = f["model"].map(pos).astype(float)
        ax.errorbar(f["fallback_rate"], y, xerr=style.err(f["fallback_rate"], f["fallback_rate_lo"],
                                                          f["fallback_rate_hi"]),
                    fmt="none", ecolor="#555555", lw=0.6)
        ax.scatter(f["fallback_rate"], y, c=[palette[m] for m in f["model"]], s=10, zorder=3)
    else:
        ax.text(0.5, 0.5, "no fallback labels", transform=ax.transAxes, ha="center", fontsize=7)
    ax.set_yticks(range(len(order)), order, fontsize=fontsize)
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_xlim(left=0)
    ax.set_xlabel(f"fallback rate\n{style.pct(ci_prob)} interval")
    ax.set_title("fallback actions")


def _many(hz, fb, models, width, ci_prob):
    order = hz.groupby("model")["hazard"].mean().reindex(models).fillna(np.inf).sort_values().index.tolist()
    palette = style.model_palette(models)
    fig, axes = style.new_figure(width, style.rows_height(len(order), per_row=0.13), ncols=2, sharey=False,
                                 gridspec_kw={"width_ratios": [2, 1]})
    grid = hz.pivot_table(index="model", columns="step", values="hazard").reindex(index=order)
    if grid.shape[1] == 0:  # no decision labels: nothing at risk; keep the model rows
        grid = pd.DataFrame({0: np.nan}, index=order)
    sns.heatmap(grid, ax=axes[0, 0], vmin=0, vmax=1, cmap="magma_r", yticklabels=True,
                cbar_kws={"label": "hazard of first failure"})
    axes[0, 0].set_xlabel("decision index (step)")
    axes[0, 0].set_ylabel("model (ranked by mean hazard)")
    axes[0, 0].tick_params(axis="y", labelsize=5)
    _fallback_panel(axes[0, 1], fb, order, palette, ci_prob, fontsize=5)
    return fig
