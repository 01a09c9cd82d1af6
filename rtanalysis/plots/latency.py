"""Latency figures: success versus latency, latency ECDFs, latency counterfactuals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns

from . import style

#: the x column of ``FitResult.success_curve`` (median latency relative to the median window close)
CURVE_X = "rel_latency"
#: x range of latency-ratio axes (log scale): the posterior curve is drawn only inside it
RATIO_LIMITS = (0.07, 12.0)
CLOCK_LINESTYLES = {"wall": "-", "step": "--"}


def _task_types(frame: pd.DataFrame) -> list[str]:
    return sorted(frame["task_type"].dropna().unique().tolist())


def timed_or_all(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of timed clocks (where timing can fail); all rows when the data has no timed clock."""
    if "clock" not in frame or not len(frame):
        return frame
    timed = frame[frame["clock"] != "paused"]
    return timed if len(timed) else frame


def plot_success_vs_latency(success_by_latency: pd.DataFrame, curve: pd.DataFrame | None = None,
                            width: str = "double", ci_prob: float = 0.95, diagnostics: dict | None = None,
                            models=None):
    """Observed success by the episode's median latency relative to its window (the rows of
    ``metrics.success_by_latency``: binned, with their intervals), per model, faceted by task type;
    the model's posterior success curve and band drawn over it when given.

    With more than :data:`~rtanalysis.plots.style.MANY_MODELS` models it becomes a heatmap (models ranked by
    overall success × latency bins) so 60 models stay readable. ``models``: all model names (for the palette;
    default those in the table).
    """
    binned = timed_or_all(success_by_latency)
    models = sorted(set(models if models is not None else success_by_latency["model"]))
    types = _task_types(binned)
    if style.many(models):
        return _success_latency_heatmap(binned, types, width, diagnostics)
    fig, axes = style.panel_figure(width, len(types), sharey=True)
    palette = style.model_palette(models)
    curve = _normalise_curve(curve)
    for ax, task_type in zip(axes, types):
        for model in models:
            _success_points(ax, binned, model, task_type, palette[model])
            if curve is not None:
                _success_curve(ax, curve, model, task_type, palette[model])
        ax.axvline(1.0, color="black", lw=0.6, ls="--")
        _ratio_axis(ax)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(task_type)
    style.panel_xlabel(fig, axes, "latency / window close")
    if len(axes):
        axes[0].set_ylabel(f"P(success), {style.pct(ci_prob)} interval")
        _legend(fig, axes[0], len(models))
    return style.mark_diagnostics(fig, diagnostics)


def _success_points(ax, binned, model, task_type, colour) -> None:
    b = binned[(binned["model"] == model) & (binned["task_type"] == task_type) & (binned["relative_latency"] > 0)]
    b = b.sort_values("relative_latency")
    if len(b):
        ax.errorbar(b["relative_latency"].clip(*RATIO_LIMITS), b["success_rate"],
                    yerr=style.err(b["success_rate"], b["success_rate_lo"], b["success_rate_hi"]),
                    fmt="o", ms=3, lw=0.8, color=colour, label=model, alpha=0.9)


def _success_curve(ax, curve, model, task_type, colour) -> None:
    c = curve[(curve["model"] == model) & (curve["task_type"] == task_type)
              & curve["x"].between(*RATIO_LIMITS)].sort_values("x")
    for clock, cc in (c.groupby("clock") if "clock" in c else [("wall", c)]):
        ax.plot(cc["x"], cc["p_success"], color=colour, lw=1.2, ls=CLOCK_LINESTYLES.get(clock, "-"))
        if {"p_success_lo", "p_success_hi"} <= set(cc.columns):
            ax.fill_between(cc["x"], cc["p_success_lo"], cc["p_success_hi"], color=colour, alpha=0.15, lw=0)


def _ratio_axis(ax) -> None:
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ax.set_xscale("log", base=2)
    ax.set_xlim(*RATIO_LIMITS)
    ax.xaxis.set_major_locator(FixedLocator([0.1, 0.25, 0.5, 1, 2, 4, 8]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def _success_latency_heatmap(binned, types, width, diagnostics):
    totals = binned.groupby("model")[["successes", "n"]].sum()
    order = (totals["successes"] / totals["n"]).sort_values(ascending=False).index.tolist()
    # not sharey: seaborn's tick handling on shared axes would strip the first panel's labels;
    # every panel is reindexed to the same row order instead
    fig, axes = style.new_figure(width, style.rows_height(len(order), per_row=0.13), ncols=max(len(types), 1))
    bins = list(dict.fromkeys(binned.sort_values("relative_latency")["bin"]))
    for i, (ax, task_type) in enumerate(zip(axes.flat, types)):
        grid = (binned[binned["task_type"] == task_type]
                .pivot_table(index="model", columns="bin", values="success_rate", aggfunc="mean")
                .reindex(index=order, columns=bins))
        _model_heatmap(ax, grid, task_type, first=i == 0, last=i == len(types) - 1, cbar="observed P(success)",
                       xlabel="latency / window close", ylabel="model (ranked by success)")
        ax.tick_params(axis="x", labelsize=5, rotation=90)
    if not types:
        _no_data(axes.flat[0], "no decision has a window: no relative latency")
    return style.mark_diagnostics(fig, diagnostics)


def _no_data(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=7)
    ax.set_xticks([])
    ax.set_yticks([])


def _normalise_curve(curve: pd.DataFrame | None) -> pd.DataFrame | None:
    if curve is None or len(curve) == 0:
        return None
    curve = timed_or_all(curve)
    if CURVE_X not in curve.columns:
        raise ValueError(f"success curve needs the column {CURVE_X!r}; it has {list(curve.columns)}")
    return curve.rename(columns={CURVE_X: "x"})


def _legend(fig, ax, n_models: int) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        per_row = 4 if fig.get_figwidth() >= style.WIDTHS["double"] else 2
        fig.legend(handles, labels, loc="outside lower center", ncols=style.legend_columns(fig, labels, per_row),
                   frameon=False,
                   title="model")


def plot_latency_ecdf(latency_ecdf: pd.DataFrame, latency: pd.DataFrame, width: str = "double", models=None):
    """ECDF of decision latency per model (the rows of ``metrics.latency_ecdf``), one panel per task
    type, the median window close (and a late opening) from ``metrics.latency_summary`` marked.
    Timed clocks only, unless the data has none.

    With many models: a ranked dot plot of median latency with the interquartile range
    (``p50``, ``p25``, ``p75`` of ``metrics.latency_summary``).
    """
    ecdf, summary = timed_or_all(latency_ecdf), timed_or_all(latency)
    models = sorted(set(models if models is not None else latency["model"]))
    types = _task_types(summary[summary["n_acted"] > 0]) or _task_types(summary)
    if style.many(models):
        return _latency_dots(summary, types, width)
    palette = style.model_palette(models)
    fig, axes = style.panel_figure(width, len(types))
    for ax, task_type in zip(axes, types):
        sub = ecdf[ecdf["task_type"] == task_type]
        for model in models:
            m = sub[sub["model"] == model]
            if len(m):
                ax.step(m["latency"], m["ecdf"], where="post", color=palette[model], lw=1, label=model)
        _mark_windows(ax, summary[summary["task_type"] == task_type])
        ax.set_title(task_type)
        ax.set_xlabel(f"latency ({_unit(summary[summary['task_type'] == task_type])})")
        ax.set_ylim(0, 1.01)
    if len(axes):
        axes[0].set_ylabel("cumulative share of decisions")
        _legend(fig, axes[0], len(models))
    return fig


def _latency_dots(summary: pd.DataFrame, types, width):
    acted = summary[summary["n_acted"] > 0]
    order = acted.groupby("model")["p50"].median().sort_values().index.tolist()
    order += sorted(set(summary["model"]) - set(order))  # models that never acted, last
    palette = style.model_palette(order)
    fig, axes = style.new_figure(width, style.rows_height(len(order)), ncols=max(len(types), 1), sharey=True)
    pos = {m: i for i, m in enumerate(order)}
    for ax, task_type in zip(axes.flat, types):
        sub = acted[acted["task_type"] == task_type]
        y = sub["model"].map(pos).astype(float)
        colours = [palette[m] for m in sub["model"]]
        ax.hlines(y, sub["p25"], sub["p75"], color=colours, lw=1)
        ax.scatter(sub["p50"], y, c=colours, s=8, zorder=3)
        _mark_windows(ax, summary[summary["task_type"] == task_type])
        ax.set_title(task_type)
        # the unit per panel, what is drawn once: a long label per panel ran into its neighbour's
        ax.set_xlabel(f"latency ({_unit(summary[summary['task_type'] == task_type])})")
    axes.flat[0].set_xlabel(axes.flat[0].get_xlabel() + ", median and IQR")
    ax0 = axes.flat[0]
    ax0.set_yticks(range(len(order)), order, fontsize=5)
    ax0.set_ylim(len(order) - 0.5, -0.5)
    return fig


def _mark_windows(ax, summary: pd.DataFrame) -> None:
    """Dashed: the median over cells of the median window close; dotted: a late-opening window."""
    close = summary["window_close_p50"].median() if len(summary) else np.nan
    if np.isfinite(close):
        ax.axvline(close, color="black", lw=0.7, ls="--")
        ax.annotate("window close", (close, 0.02), xycoords=("data", "axes fraction"), fontsize=6,
                    rotation=90, ha="right", va="bottom")
    opens = summary["window_open_p50"].median() if len(summary) else np.nan
    if np.isfinite(opens) and opens > 0:  # a late-opening window: answers before it are too early
        ax.axvline(opens, color="black", lw=0.7, ls=":")
        ax.annotate("window opens", (opens, 0.98), xycoords=("data", "axes fraction"), fontsize=6,
                    rotation=90, ha="right", va="top")


def _unit(sub: pd.DataFrame) -> str:
    units = sub["time_unit"].dropna().unique() if "time_unit" in sub else []
    return "/".join(sorted(units)) or "s"


def plot_counterfactuals(counterfactuals: pd.DataFrame, width: str = "double", diagnostics: dict | None = None,
                         ci_prob: float = 0.95):
    """Posterior success versus latency scale λ (λ = 0.5: latency halved), per model: posterior
    mean with its ``ci_prob`` band (the rows of ``FitResult.counterfactuals``).

    Uses the ``scenario == "scale"`` rows; with many models, a heatmap of success over λ with
    models ranked by success at λ = 1.
    """
    cf = counterfactuals[counterfactuals["scenario"] == "scale"].copy()
    cf = timed_or_all(cf)
    cf["lambda"] = cf["lambda"].astype(float)
    models = sorted(counterfactuals["model"].unique())
    palette = style.model_palette(models)
    types = _task_types(cf)
    if style.many(models):
        return _counterfactual_heatmap(cf, types, width, diagnostics)
    fig, axes = style.panel_figure(width, len(types), sharey=True)
    for ax, task_type in zip(axes, types):
        for model in models:
            c = cf[(cf["model"] == model) & (cf["task_type"] == task_type)].sort_values("lambda")
            c = c.groupby("lambda", as_index=False)[["p_success", "p_success_lo", "p_success_hi"]].mean()
            if len(c):
                ax.plot(c["lambda"], c["p_success"], color=palette[model], lw=1.2, marker="o", ms=2, label=model)
                ax.fill_between(c["lambda"], c["p_success_lo"], c["p_success_hi"], color=palette[model],
                                alpha=0.2, lw=0)
        ax.axvline(1.0, color="black", lw=0.6, ls="--")
        _ratio_axis(ax)
        if len(cf):
            ax.set_xlim(cf["lambda"].min() / 1.2, cf["lambda"].max() * 1.2)
        ax.set_title(task_type)
        ax.set_xlabel("latency × λ")
        ax.set_ylim(-0.02, 1.02)
    # two lines: one is taller than a 2-inch panel and was cut at the figure's edge
    axes[0].set_ylabel(f"P(success)\nposterior mean, {style.pct(ci_prob)} band")
    _legend(fig, axes[0], len(models))
    return style.mark_diagnostics(fig, diagnostics)


def _counterfactual_heatmap(cf, types, width, diagnostics):
    at_one = cf[np.isclose(cf["lambda"], 1.0)]
    order = (at_one if len(at_one) else cf).groupby("model")["p_success"].mean().sort_values(ascending=False)
    order = order.index.tolist()
    fig, axes = style.new_figure(width, style.rows_height(len(order), per_row=0.13), ncols=max(len(types), 1))
    for i, (ax, task_type) in enumerate(zip(axes.flat, types)):
        grid = (cf[cf["task_type"] == task_type].pivot_table(index="model", columns="lambda", values="p_success")
                .reindex(index=order))
        grid.columns = [f"{x:.2g}" for x in grid.columns]  # 0.35, not 0.3536
        _model_heatmap(ax, grid, task_type, first=i == 0, last=i == len(types) - 1, cbar="posterior P(success)",
                       xlabel="latency scale λ", ylabel="model (ranked by success at λ = 1)")
    return style.mark_diagnostics(fig, diagnostics)


def _model_heatmap(ax, grid, title, first, last, cbar, xlabel, ylabel):
    """One task type's panel of a many-model heatmap: success in [0, 1], model labels on the first panel."""
    sns.heatmap(grid, ax=ax, vmin=0, vmax=1, cmap="viridis", cbar=last, cbar_kws={"label": cbar}, yticklabels=first)
    ax.set_title(title)
    ax.set_xlabel(xlabel if first else "")  # once: one per narrow panel ran into its neighbour's
    ax.set_ylabel(ylabel if first else "")
    ax.tick_params(axis="y", labelsize=5)
