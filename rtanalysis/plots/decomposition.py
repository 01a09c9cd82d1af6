"""Decomposition figures: stacked failure shares, paused-versus-wall slopegraph, forest plot."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from . import style
from .summaries import step_outcome_shares, success_rates

TIMING_KINDS = ("late", "early", "silent")
SEGMENTS = ("success", "capability", *TIMING_KINDS, "timing", "unknown")
SEGMENT_LABELS = {"success": "success", "capability": "capability failure", "late": "timing: late",
                  "early": "timing: early", "silent": "timing: no action", "timing": "timing failure",
                  "unknown": "undetermined"}


def decomposition_shares(decomposition: pd.DataFrame | None, episodes: pd.DataFrame,
                         steps: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per model × task type × timed clock: the share of episodes in each segment, with whiskers.

    From the model's posterior decomposition when given (success = p_success, timing failures =
    (1 − p_success) · share_timing), otherwise from the observed episode failure types. The timing
    share is split into late / early / no action in the proportions of the observed timing-failed
    decisions of that cell, when the steps carry them.
    """
    keys = ["model", "task_type", "clock"]
    if decomposition is not None and len(decomposition):
        d = decomposition[decomposition["clock"] != "paused"].copy()
        fail = 1 - d["p_success"]
        out = d[keys].copy()
        out["success"] = d["p_success"]
        out["timing"] = fail * d["share_timing"]
        out["capability"] = fail * (1 - d["share_timing"])
        out["unknown"] = 0.0
        out["success_lo"], out["success_hi"] = d["p_success_lo"], d["p_success_hi"]
        out["timing_end_lo"] = d["p_success"] + fail * d["share_timing_lo"]
        out["timing_end_hi"] = d["p_success"] + fail * d["share_timing_hi"]
        out["source"] = "posterior"
    else:
        ep = episodes[episodes["clock"] != "paused"]
        kind = np.where(ep["success"], "success",
                        ep["failure_type"].map({"capability": "capability", "both": "capability",
                                                "timing": "timing"}).fillna("unknown"))
        counts = pd.crosstab([ep["model"], ep["task_type"], ep["clock"]], kind, normalize="index")
        out = counts.reindex(columns=["success", "capability", "timing", "unknown"], fill_value=0.0).reset_index()
        rates = success_rates(ep)
        out = out.merge(rates[keys + ["lo", "hi"]].rename(columns={"lo": "success_lo", "hi": "success_hi"}), on=keys)
        out["timing_end_lo"] = out["timing_end_hi"] = np.nan
        out["source"] = "observed"
    out = out.reset_index(drop=True)
    split = _timing_split(steps)
    for kind in TIMING_KINDS:
        out[kind] = 0.0
    if split is not None:
        out = out.merge(split, on=keys, how="left", suffixes=("", "_frac"))
        has = out[[k + "_frac" for k in TIMING_KINDS]].notna().all(axis=1)
        for kind in TIMING_KINDS:
            out.loc[has, kind] = out.loc[has, "timing"] * out.loc[has, kind + "_frac"]
        out.loc[has, "timing"] = 0.0
        out = out.drop(columns=[k + "_frac" for k in TIMING_KINDS])
    return out


def _timing_split(steps: pd.DataFrame | None) -> pd.DataFrame | None:
    if steps is None or steps.empty:
        return None
    shares = step_outcome_shares(steps[steps["clock"] != "paused"])
    shares = shares[shares["outcome"].isin(TIMING_KINDS)]
    if shares.empty:
        return None
    wide = shares.pivot_table(index=["model", "task_type", "clock"], columns="outcome", values="n", fill_value=0)
    wide = wide.reindex(columns=list(TIMING_KINDS), fill_value=0)
    return wide.div(wide.sum(axis=1), axis=0).reset_index()


def plot_failure_decomposition(episodes: pd.DataFrame, steps: pd.DataFrame | None = None,
                               decomposition: pd.DataFrame | None = None, width: str = "double",
                               diagnostics: dict | None = None):
    """Stacked horizontal bars per model (ranked by success), one panel per task type: success,
    capability failure and timing failure (late / early / no action apart where observed), with
    whiskers on the success share and, from the posterior, on the success + timing boundary."""
    shares = decomposition_shares(decomposition, episodes, steps)
    types = sorted(shares["task_type"].unique())
    shares["label"] = _row_labels(shares)
    # models ranked by mean success; a model's clocks stay together (wall before step)
    model_rank = shares.groupby("model")["success"].mean().rank(ascending=False, method="first")
    clock_rank = shares["clock"].map({"wall": 0, "step": 1}).fillna(2)
    order = (shares.assign(_m=shares["model"].map(model_rank), _c=clock_rank).sort_values(["_m", "_c"])["label"]
             .drop_duplicates().tolist())
    fig, axes = style.new_figure(width, style.rows_height(len(order), per_row=0.18 if len(order) < 20 else 0.13),
                                 ncols=max(len(types), 1), sharey=True)
    pos = {lab: i for i, lab in enumerate(order)}
    present = [s for s in SEGMENTS if shares[s].sum() > 0] if len(shares) else ["success"]
    for ax, task_type in zip(axes.flat, types):
        sub = shares[shares["task_type"] == task_type]
        y = sub["label"].map(pos).astype(float).to_numpy()
        left = np.zeros(len(sub))
        for seg in present:
            vals = sub[seg].to_numpy(dtype=float)
            style.hbars(ax, y, left, vals, style.OUTCOME_COLOURS[seg])
            left += vals
        s = sub["success"].to_numpy(dtype=float)
        ax.errorbar(s, y, xerr=style.err(s, sub["success_lo"], sub["success_hi"]), fmt="none", ecolor="black", lw=0.6,
                    capsize=1.5)
        if sub["timing_end_lo"].notna().any():
            end = s + sub[["timing", *TIMING_KINDS]].sum(axis=1).to_numpy()
            ax.errorbar(end, y, xerr=style.err(end, sub["timing_end_lo"], sub["timing_end_hi"]),
                        fmt="none", ecolor="#444444", lw=0.6, capsize=1.5)
        ax.set_xlim(0, 1)
        ax.set_title(task_type)
        ax.set_xlabel("share of episodes")
    ax0 = axes.flat[0]
    ax0.set_yticks(range(len(order)), order, fontsize=7 if len(order) <= 20 else 5)
    ax0.set_ylim(len(order) - 0.5, -0.5)
    fig.legend([Patch(color=style.OUTCOME_COLOURS[s]) for s in present], [SEGMENT_LABELS[s] for s in present],
               loc="outside lower center", ncols=min(len(present), 4), frameon=False)
    return style.mark_diagnostics(fig, diagnostics)


def _row_labels(frame: pd.DataFrame) -> pd.Series:
    if frame["clock"].nunique() > 1:
        return frame["model"].astype(str) + " · " + frame["clock"].astype(str)
    return frame["model"].astype(str)


def clock_contrast(episodes: pd.DataFrame, decomposition: pd.DataFrame | None = None, level: float = 0.95) -> pd.DataFrame:
    """Success per model × task type × clock, columns ``rate, lo, hi, source``: from the posterior
    when a decomposition is given (the paused clock's success is ``p_capable``: timing cannot fail
    there), otherwise observed with Wilson intervals."""
    keys = ["model", "task_type", "clock"]
    if decomposition is not None and len(decomposition):
        d = decomposition
        timed = d[d["clock"] != "paused"].rename(columns={"p_success": "rate", "p_success_lo": "lo", "p_success_hi": "hi"})
        paused = d[d["clock"] == "paused"].rename(columns={"p_success": "rate", "p_success_lo": "lo", "p_success_hi": "hi"})
        if paused.empty:
            paused = (d[d["clock"] != "paused"].sort_values("clock", key=lambda c: c != "wall")
                      .drop_duplicates(["model", "task_type"])
                      .rename(columns={"p_capable": "rate", "p_capable_lo": "lo", "p_capable_hi": "hi"})
                      .assign(clock="paused"))
        both = pd.concat([paused[keys + ["rate", "lo", "hi"]], timed[keys + ["rate", "lo", "hi"]]], ignore_index=True)
        return both.assign(source="posterior")
    return success_rates(episodes, level=level)[keys + ["rate", "lo", "hi"]].assign(source="observed")


def plot_paused_vs_wall(episodes: pd.DataFrame, decomposition: pd.DataFrame | None = None, width: str = "double",
                        diagnostics: dict | None = None):
    """Slopegraph of success under the paused clock versus the timed clock(s), per model, with
    intervals; a ranked dumbbell plot (models ordered by the paused − timed gap) for many models."""
    rates = clock_contrast(episodes, decomposition)
    clocks = [c for c in ("paused", "step", "wall") if c in set(rates["clock"])]
    models = sorted(episodes["model"].unique())
    palette = style.model_palette(models)
    types = sorted(rates["task_type"].unique())
    if style.many(models):
        return _dumbbell(rates, clocks, types, width, diagnostics)
    fig, axes = style.panel_figure(width, len(types), sharey=True)
    xpos = {c: i for i, c in enumerate(clocks)}
    for ax, task_type in zip(axes, types):
        sub = rates[rates["task_type"] == task_type]
        for j, model in enumerate(models):
            m = sub[sub["model"] == model].copy()
            m["x"] = m["clock"].map(xpos).astype(float) + (j - (len(models) - 1) / 2) * 0.03
            m = m.sort_values("x")
            ax.plot(m["x"], m["rate"], color=palette[model], lw=1, marker="o", ms=3, label=model)
            ax.vlines(m["x"], m["lo"], m["hi"], color=palette[model], lw=0.8)
        ax.set_xticks(range(len(clocks)), clocks)
        ax.set_xlim(-0.4, len(clocks) - 0.6)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(task_type)
        ax.set_xlabel("clock")
    axes[0].set_ylabel("P(success)")
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(models), 4), frameon=False)
    return style.mark_diagnostics(fig, diagnostics)


def _dumbbell(rates, clocks, types, width, diagnostics):
    timed = [c for c in clocks if c != "paused"]
    wide = rates.pivot_table(index=["model", "task_type"], columns="clock", values="rate")
    gap = (wide.get("paused", np.nan) - wide[timed].mean(axis=1)) if timed else wide.mean(axis=1)
    order = gap.groupby("model").mean().sort_values(ascending=False).index.tolist()
    fig, axes = style.new_figure(width, style.rows_height(len(order)), ncols=max(len(types), 1), sharey=True)
    pos = {m: i for i, m in enumerate(order)}
    markers = {"paused": "o", "wall": "s", "step": "^"}
    colours = {"paused": "#0072B2", "wall": "#D55E00", "step": "#E69F00"}
    for ax, task_type in zip(axes.flat, types):
        sub = rates[rates["task_type"] == task_type]
        w = sub.pivot_table(index="model", columns="clock", values="rate")
        for model, row in w.iterrows():
            vals = row.dropna()
            if len(vals) > 1:
                ax.hlines(pos[model], vals.min(), vals.max(), color="#999999", lw=0.6)
        for clock in clocks:
            c = sub[sub["clock"] == clock]
            y = c["model"].map(pos).astype(float)
            ax.errorbar(c["rate"], y, xerr=style.err(c["rate"], c["lo"], c["hi"]), fmt=markers[clock], ms=2.5,
                        color=colours[clock], lw=0.5, label=clock)
        ax.set_xlim(-0.02, 1.02)
        ax.set_title(task_type)
        ax.set_xlabel("P(success)")
    ax0 = axes.flat[0]
    ax0.set_yticks(range(len(order)), order, fontsize=5)
    ax0.set_ylim(len(order) - 0.5, -0.5)
    handles, labels = ax0.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(clocks), frameon=False, title="clock")
    return style.mark_diagnostics(fig, diagnostics)


def plot_forest(decomposition: pd.DataFrame, width: str = "double", diagnostics: dict | None = None):
    """Forest plot of each model's capability (P(capable)) and speed (P(timely)) effects, posterior
    medians with intervals, one marker per task type; models ranked by capability."""
    d = decomposition[decomposition["clock"] != "paused"]
    models = sorted(decomposition["model"].unique())
    palette = style.model_palette(models)
    order = d.groupby("model")["p_capable"].mean().sort_values(ascending=False).index.tolist()
    types = sorted(d["task_type"].unique())
    clocks = sorted(d["clock"].unique())
    present = set(zip(d["task_type"], d["clock"]))
    groups = [(t, c) for t in types for c in clocks if (t, c) in present]
    fig, axes = style.new_figure(width, style.rows_height(len(order), per_row=0.12 + 0.04 * len(groups)),
                                 ncols=2, sharey=True)
    pos = {m: i for i, m in enumerate(order)}
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    step = 0.7 / max(len(groups), 1)
    for ax, (q, title) in zip(axes.flat, (("p_capable", "capability: P(capable)"), ("p_timely", "speed: P(timely)"))):
        for g, (task_type, clock) in enumerate(groups):
            sub = d[(d["task_type"] == task_type) & (d["clock"] == clock)]
            y = sub["model"].map(pos).astype(float) + (g - (len(groups) - 1) / 2) * step
            colours = [palette[m] for m in sub["model"]]
            ax.hlines(y, sub[q + "_lo"], sub[q + "_hi"], colors=colours, lw=0.8)
            ax.scatter(sub[q], y, c=colours, marker=markers[g % len(markers)], s=8, zorder=3)
        ax.set_xlim(-0.02, 1.02)
        ax.set_title(title)
        ax.set_xlabel("posterior median and interval")
    ax0 = axes.flat[0]
    ax0.set_yticks(range(len(order)), order, fontsize=7 if len(order) <= 20 else 5)
    ax0.set_ylim(len(order) - 0.5, -0.5)
    label = (lambda t, c: t) if len(clocks) == 1 else (lambda t, c: f"{t} · {c}")
    fig.legend([Line2D([], [], color="black", marker=markers[g % len(markers)], ls="", ms=3) for g in range(len(groups))],
               [label(t, c) for t, c in groups], loc="outside lower center", ncols=min(len(groups), 4), frameon=False)
    return style.mark_diagnostics(fig, diagnostics)
