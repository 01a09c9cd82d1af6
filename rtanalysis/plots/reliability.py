"""Reliability: per model, the share of decisions lost to failed calls beside those lost to timeouts."""

from __future__ import annotations

import pandas as pd

from . import style

#: (column, label, marker): the two rates drawn per model
RATES = (("failed_call_rate", "failed call (error / other)", "s"), ("timeout_rate", "timeout (timing)", "o"))


def has_failed_calls(reliability: pd.DataFrame) -> bool:
    """Whether any decision of ``metrics.reliability_summary``'s table was lost to a failed call."""
    return bool(len(reliability)) and int(reliability["n_failed_call"].sum()) > 0


def plot_reliability(reliability: pd.DataFrame, width: str = "single", ci_prob: float = 0.95, models=None):
    """Per model (rows, ranked by failed-call rate), the share of decisions with no action because the
    call failed and the share that timed out, with ``ci_prob`` intervals (``metrics.reliability_summary``
    grouped by model). A failed call is neither timing nor capability: the model leaves it out."""
    models = list(models if models is not None else reliability["model"])
    r = reliability.set_index("model").reindex(models)
    order = r["failed_call_rate"].fillna(-1).sort_values(ascending=False).index.tolist()
    r = r.reindex(order)
    palette = style.model_palette(sorted(models))
    fig, axes = style.new_figure(width, style.rows_height(len(order), per_row=0.16 if style.many(order) else 0.22))
    ax = axes[0, 0]
    y = pd.Series(range(len(order)), index=order, dtype=float)
    for j, (col, label, marker) in enumerate(RATES):
        offset = (j - 0.5) * 0.3
        ok = r[col].notna()
        ax.errorbar(r.loc[ok, col], y[ok] + offset, xerr=style.err(r.loc[ok, col], r.loc[ok, f"{col}_lo"],
                                                                   r.loc[ok, f"{col}_hi"]),
                    fmt="none", ecolor="#555555", lw=0.6)
        ax.scatter(r.loc[ok, col], y[ok] + offset, c=[palette[m] for m in r.index[ok]], marker=marker, s=12,
                   zorder=3, label=label, edgecolors="black" if marker == "s" else "none", linewidths=0.4)
    fontsize = 5 if style.many(order) else 7
    ax.set_yticks(range(len(order)), order, fontsize=fontsize)
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_xlim(left=0)
    ax.set_xlabel(f"share of decisions, {style.pct(ci_prob)} interval")
    ax.set_title("decisions lost to failed calls and to timeouts")
    leg = ax.legend(loc="lower right", fontsize=6, frameon=False)
    for handle in leg.legend_handles:
        handle.set_facecolor("#999999")
    return fig
