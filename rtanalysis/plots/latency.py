"""Latency figures: success versus latency, latency ECDFs, latency counterfactuals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns

from . import style
from .summaries import success_by_latency

#: column names a posterior success curve may use for its x axis (latency relative to the window)
CURVE_X = ("latency_ratio", "rel_latency", "latency_rel", "x", "ratio")
#: x range of latency-ratio axes (log scale): the posterior curve is drawn only inside it
RATIO_LIMITS = (0.07, 12.0)
CLOCK_LINESTYLES = {"wall": "-", "step": "--"}


def _task_types(frame: pd.DataFrame) -> list[str]:
    return sorted(frame["task_type"].dropna().unique().tolist())


def _timed(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["clock"] != "paused"] if "clock" in frame else frame


def plot_success_vs_latency(episodes: pd.DataFrame, steps: pd.DataFrame, curve: pd.DataFrame | None = None,
                            width: str = "double", level: float = 0.95, diagnostics: dict | None = None):
    """Observed success by latency relative to the window (binned, with Wilson intervals), per model,
    faceted by task type; the model's posterior success curve and band drawn over it when given.

    With more than :data:`style.MANY_MODELS` models it becomes a heatmap (models ranked by overall
    success × latency bins) so 60 models stay readable.
    """
    binned = _timed(success_by_latency(episodes, steps, level))
    models = sorted(episodes["model"].unique())
    palette = style.model_palette(models)
    types = _task_types(binned) or _task_types(episodes)
    if style.many(models):
        return _success_latency_heatmap(binned, episodes, types, width, diagnostics)
    fig, axes = style.panel_figure(width, len(types), sharey=True)
    curve = _normalise_curve(curve)
    for ax, task_type in zip(axes, types):
        for model in models:
            colour = palette[model]
            b = binned[(binned["model"] == model) & (binned["task_type"] == task_type)].sort_values("ratio_mid")
            b = b[b["ratio_mid"] > 0]
            if len(b):
                ax.errorbar(b["ratio_mid"].clip(*RATIO_LIMITS), b["rate"], yerr=style.err(b["rate"], b["lo"], b["hi"]),
                            fmt="o", ms=3, lw=0.8, color=colour, label=model, alpha=0.9)
            if curve is not None:
                c = curve[(curve["model"] == model) & (curve["task_type"] == task_type)
                          & curve["x"].between(*RATIO_LIMITS)].sort_values("x")
                for clock, cc in (c.groupby("clock") if "clock" in c else [("wall", c)]):
                    ls = CLOCK_LINESTYLES.get(clock, "-")
                    ax.plot(cc["x"], cc["p_success"], color=colour, lw=1.2, ls=ls)
                    if {"p_success_lo", "p_success_hi"} <= set(cc.columns):
                        ax.fill_between(cc["x"], cc["p_success_lo"], cc["p_success_hi"], color=colour, alpha=0.15, lw=0)
        ax.axvline(1.0, color="black", lw=0.6, ls="--")
        _ratio_axis(ax)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(task_type)
        ax.set_xlabel("latency / window close")
    axes[0].set_ylabel("P(success)")
    _legend(fig, axes[0], len(models))
    return style.mark_diagnostics(fig, diagnostics)


def _ratio_axis(ax) -> None:
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ax.set_xscale("log", base=2)
    ax.set_xlim(*RATIO_LIMITS)
    ax.xaxis.set_major_locator(FixedLocator([0.1, 0.25, 0.5, 1, 2, 4, 8]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def _success_latency_heatmap(binned, episodes, types, width, diagnostics):
    order = (episodes[episodes["clock"] != "paused"].groupby("model")["success"].mean()
             .sort_values(ascending=False).index.tolist())
    # not sharey: seaborn's tick handling on shared axes would strip the first panel's labels;
    # every panel is reindexed to the same row order instead
    fig, axes = style.new_figure(width, style.rows_height(len(order), per_row=0.13), ncols=len(types))
    bins = list(dict.fromkeys(binned.sort_values("ratio_mid")["bin"]))
    for i, (ax, task_type) in enumerate(zip(axes.flat, types)):
        grid = (binned[binned["task_type"] == task_type].pivot_table(index="model", columns="bin", values="rate")
                .reindex(index=order, columns=[b for b in bins if b in set(binned["bin"])]))
        _model_heatmap(ax, grid, task_type, first=i == 0, last=i == len(types) - 1, cbar="observed P(success)",
                       xlabel="latency / window close", ylabel="model (ranked by success)")
        ax.tick_params(axis="x", labelsize=5, rotation=90)
    return style.mark_diagnostics(fig, diagnostics)


def _normalise_curve(curve: pd.DataFrame | None) -> pd.DataFrame | None:
    if curve is None or len(curve) == 0:
        return None
    curve = _timed(curve)
    for name in CURVE_X:
        if name in curve.columns:
            return curve.rename(columns={name: "x"})
    raise ValueError(f"success curve needs one of the columns {CURVE_X}; it has {list(curve.columns)}")


def _legend(fig, ax, n_models: int) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        per_row = 4 if fig.get_figwidth() >= style.WIDTHS["double"] else 2
        fig.legend(handles, labels, loc="outside lower center", ncols=min(n_models, per_row), frameon=False,
                   title="model")


def plot_latency_ecdf(steps: pd.DataFrame, width: str = "double"):
    """ECDF of decision latency per model, one panel per task type, the window close marked.

    With many models: a ranked dot plot of median latency with the interquartile range.
    """
    s = _timed(steps).dropna(subset=["latency"])
    models = sorted(steps["model"].unique())
    palette = style.model_palette(models)
    types = _task_types(s) or _task_types(steps)
    if style.many(models):
        return _latency_dots(s, types, width)
    fig, axes = style.panel_figure(width, len(types))
    for ax, task_type in zip(axes, types):
        sub = s[s["task_type"] == task_type]
        for model in models:
            lat = np.sort(sub.loc[sub["model"] == model, "latency"].to_numpy())
            if len(lat):
                ax.step(lat, np.arange(1, len(lat) + 1) / len(lat), where="post", color=palette[model], lw=1,
                        label=model)
        _mark_windows(ax, sub)
        ax.set_title(task_type)
        ax.set_xlabel(f"latency ({_unit(sub)})")
        ax.set_ylim(0, 1.01)
    axes[0].set_ylabel("cumulative share of decisions")
    _legend(fig, axes[0], len(models))
    return fig


def _latency_dots(s, types, width):
    summary = (s.groupby(["task_type", "model"])["latency"].quantile([0.25, 0.5, 0.75]).unstack()
               .rename(columns={0.25: "q1", 0.5: "median", 0.75: "q3"}).reset_index())
    order = summary.groupby("model")["median"].median().sort_values().index.tolist()
    palette = style.model_palette(order)
    fig, axes = style.new_figure(width, style.rows_height(len(order)), ncols=max(len(types), 1), sharey=True)
    pos = {m: i for i, m in enumerate(order)}
    for i, (ax, task_type) in enumerate(zip(axes.flat, types)):
        sub = summary[summary["task_type"] == task_type]
        y = sub["model"].map(pos).astype(float)
        ax.hlines(y, sub["q1"], sub["q3"], color=[palette[m] for m in sub["model"]], lw=1)
        ax.scatter(sub["median"], y, c=[palette[m] for m in sub["model"]], s=8, zorder=3)
        _mark_windows(ax, s[s["task_type"] == task_type])
        ax.set_title(task_type)
        ax.set_xlabel(f"latency ({_unit(s[s['task_type'] == task_type])}), median and IQR")
    ax0 = axes.flat[0]
    ax0.set_yticks(range(len(order)), order, fontsize=5)
    ax0.set_ylim(len(order) - 0.5, -0.5)
    return fig


def _mark_windows(ax, sub: pd.DataFrame) -> None:
    closes = sub["window_close"].dropna()
    if len(closes):
        close = float(closes.median())
        ax.axvline(close, color="black", lw=0.7, ls="--")
        ax.annotate("window close", (close, 0.02), xycoords=("data", "axes fraction"), fontsize=6,
                    rotation=90, ha="right", va="bottom")
    opens = sub["window_open"].dropna() if "window_open" in sub else []
    if len(opens) and float(opens.median()) > 0:  # a late-opening window: answers before it are too early
        ax.axvline(float(opens.median()), color="black", lw=0.7, ls=":")
        ax.annotate("window opens", (float(opens.median()), 0.98), xycoords=("data", "axes fraction"), fontsize=6,
                    rotation=90, ha="right", va="top")


def _unit(sub: pd.DataFrame) -> str:
    units = sub["time_unit"].dropna().unique() if "time_unit" in sub else []
    return "/".join(sorted(units)) or "s"


def plot_counterfactuals(counterfactuals: pd.DataFrame, width: str = "double", diagnostics: dict | None = None):
    """Posterior success versus latency scale λ (λ = 0.5: latency halved), per model, with bands.

    Uses the ``scenario == "scale"`` rows; with many models, a heatmap of success over λ with
    models ranked by success at λ = 1.
    """
    cf = counterfactuals[counterfactuals["scenario"] == "scale"].copy()
    cf = _timed(cf)
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
    axes[0].set_ylabel("P(success), posterior")
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
        grid.columns = [f"{x:g}" for x in grid.columns]
        _model_heatmap(ax, grid, task_type, first=i == 0, last=i == len(types) - 1, cbar="posterior P(success)",
                       xlabel="latency scale λ", ylabel="model (ranked by success at λ = 1)")
    return style.mark_diagnostics(fig, diagnostics)


def _model_heatmap(ax, grid, title, first, last, cbar, xlabel, ylabel):
    """One task type's panel of a many-model heatmap: success in [0, 1], model labels on the first panel."""
    sns.heatmap(grid, ax=ax, vmin=0, vmax=1, cmap="viridis", cbar=last, cbar_kws={"label": cbar}, yticklabels=first)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel if first else "")
    ax.tick_params(axis="y", labelsize=5)
