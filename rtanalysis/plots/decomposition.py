"""Decomposition figures: stacked failure shares, paused-versus-wall slopegraph, forest plot."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from . import style
from .latency import timed_or_all

KEYS = ["model", "task_type", "clock"]
TIMING_KINDS = ("late", "early", "silent")
SEGMENTS = ("success", "capability", *TIMING_KINDS, "timing", "unknown")
SEGMENT_LABELS = {"success": "success", "capability": "capability failure", "late": "timing: late",
                  "early": "timing: early", "silent": "timing: no action", "timing": "timing failure",
                  "unknown": "undetermined"}


def _posterior_shares(decomposition: pd.DataFrame) -> pd.DataFrame:
    """Segments from ``FitResult.decomposition``: success = p_success, timing = (1 − p_success) · share_timing."""
    d = timed_or_all(decomposition)
    fail = 1 - d["p_success"]
    out = d[KEYS].copy()
    out["success"] = d["p_success"]
    out["timing"] = fail * d["share_timing"]
    out["capability"] = fail * (1 - d["share_timing"])
    out["unknown"] = 0.0
    out["success_lo"], out["success_hi"] = d["p_success_lo"], d["p_success_hi"]
    out["timing_end_lo"] = d["p_success"] + fail * d["share_timing_lo"]
    out["timing_end_hi"] = d["p_success"] + fail * d["share_timing_hi"]
    return out.assign(source="posterior")


def _observed_shares(success: pd.DataFrame, observed_decomposition: pd.DataFrame) -> pd.DataFrame:
    """Segments from ``metrics.success_rates`` and ``metrics.observed_decomposition``: each failure
    type's share of the failed episodes times the failure rate ("both" counts as capability)."""
    s = timed_or_all(success)
    out = s[KEYS].copy()
    out["success"] = s["success_rate"].to_numpy()
    share = (observed_decomposition.pivot_table(index=KEYS, columns="failure_type", values="share", dropna=False)
             .reindex(columns=["capability", "timing", "both", "unknown"]).fillna(0.0))
    share = share.reindex(pd.MultiIndex.from_frame(out[KEYS])).fillna(0.0).to_numpy()
    fail = 1 - out["success"].to_numpy()[:, None]
    out["capability"] = fail[:, 0] * (share[:, 0] + share[:, 2])
    out["timing"] = fail[:, 0] * share[:, 1]
    out["unknown"] = fail[:, 0] * share[:, 3]
    out["success_lo"], out["success_hi"] = s["success_rate_lo"].to_numpy(), s["success_rate_hi"].to_numpy()
    out["timing_end_lo"] = out["timing_end_hi"] = np.nan
    return out.assign(source="observed")


def _timing_split(validity: pd.DataFrame | None) -> pd.DataFrame | None:
    """Per cell, the late / early / no-action proportions of the timing-failed decisions, from the
    ``count`` column of ``metrics.decision_validity``."""
    if validity is None or validity.empty:
        return None
    v = timed_or_all(validity)
    v = v[v["measure"].isin(TIMING_KINDS)]
    wide = v.pivot_table(index=KEYS, columns="measure", values="count", aggfunc="sum", fill_value=0)
    wide = wide.reindex(columns=list(TIMING_KINDS), fill_value=0)
    wide = wide[wide.sum(axis=1) > 0]
    return None if wide.empty else wide.div(wide.sum(axis=1), axis=0).reset_index()


def decomposition_shares(decomposition: pd.DataFrame | None, success: pd.DataFrame | None = None,
                         observed_decomposition: pd.DataFrame | None = None,
                         validity: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per model × task type × timed clock: the share of episodes in each segment, with whiskers.

    From the model's posterior decomposition when given, otherwise from the observed tables
    (``success`` and ``observed_decomposition`` of :mod:`rtanalysis.metrics`). The timing share is
    split into late / early / no action in the proportions of the timing-failed decisions of that
    cell in ``validity`` (``metrics.decision_validity``), when it has them.
    """
    if decomposition is not None and len(decomposition):
        out = _posterior_shares(decomposition)
    else:
        out = _observed_shares(success, observed_decomposition)
    out = out.reset_index(drop=True)
    for kind in TIMING_KINDS:
        out[kind] = 0.0
    split = _timing_split(validity)
    if split is not None:
        out = out.merge(split, on=KEYS, how="left", suffixes=("", "_frac"))
        has = out[[k + "_frac" for k in TIMING_KINDS]].notna().all(axis=1)
        for kind in TIMING_KINDS:
            out.loc[has, kind] = out.loc[has, "timing"] * out.loc[has, kind + "_frac"]
        out.loc[has, "timing"] = 0.0
        out = out.drop(columns=[k + "_frac" for k in TIMING_KINDS])
    return out


def plot_failure_decomposition(shares: pd.DataFrame, width: str = "double", ci_prob: float = 0.95,
                               diagnostics: dict | None = None):
    """Stacked horizontal bars per model (ranked by success), one panel per task type: success,
    capability failure and timing failure (late / early / no action apart where observed), with
    ``ci_prob`` whiskers on the success share and, from the posterior, on the success + timing
    boundary. ``shares``: the rows of :func:`decomposition_shares`."""
    shares = shares.assign(label=_row_labels(shares))
    types = sorted(shares["task_type"].unique())
    # models ranked by mean success; a model's clocks stay together (wall before step)
    model_rank = shares.groupby("model")["success"].mean().rank(ascending=False, method="first")
    clock_rank = shares["clock"].map({"wall": 0, "step": 1}).fillna(2)
    order = (shares.assign(_m=shares["model"].map(model_rank), _c=clock_rank).sort_values(["_m", "_c"])["label"]
             .drop_duplicates().tolist())
    # where some task type lacks some model × clock rows, the task types are stacked, each panel with
    # its own rows (side by side they would show blank rows, or repeat long names on every panel)
    rows_of = {k: [lab for lab in order if lab in set(shares.loc[shares["task_type"] == k, "label"])] for k in types}
    shared = all(len(rows) == len(order) for rows in rows_of.values())
    per_row = 0.18 if len(order) < 20 else 0.13
    if shared:
        fig, axes = style.new_figure(width, style.rows_height(len(order), per_row=per_row),
                                     ncols=max(len(types), 1), sharey=True)
    else:
        counts = [max(len(rows_of[k]), 1) for k in types]
        fig, axes = style.new_figure(width, style.rows_height(sum(counts), per_row=per_row) + 0.35 * len(types),
                                     nrows=len(types), sharex=True, gridspec_kw={"height_ratios": counts})
    present = [s for s in SEGMENTS if shares[s].sum() > 0] if len(shares) else ["success"]
    for ax, task_type in zip(axes.flat, types):
        rows = order if shared else rows_of[task_type]
        _stacked_panel(ax, shares[shares["task_type"] == task_type], {lab: i for i, lab in enumerate(rows)}, present)
        ax.set_title(task_type)
        if not shared:
            _model_rows(ax, rows)
    if shared:
        _model_rows(axes.flat[0], order)
        style.panel_xlabel(fig, list(axes.flat)[:len(types)], "share of episodes")
    else:
        axes.flat[len(types) - 1].set_xlabel("share of episodes")
    fig.legend([Patch(color=style.OUTCOME_COLOURS[s]) for s in present], [SEGMENT_LABELS[s] for s in present],
               loc="outside lower center", ncols=style.legend_columns(fig, [SEGMENT_LABELS[s] for s in present]),
               frameon=False,
               title=f"whiskers: {style.pct(ci_prob)} interval of the success share")
    return style.mark_diagnostics(fig, diagnostics)


def _stacked_panel(ax, sub: pd.DataFrame, pos: dict, present: list[str]) -> None:
    y = sub["label"].map(pos).astype(float).to_numpy()
    left = np.zeros(len(sub))
    for seg in present:
        vals = sub[seg].to_numpy(dtype=float)
        style.hbars(ax, y, left, vals, style.OUTCOME_COLOURS[seg])
        left += vals
    s = sub["success"].to_numpy(dtype=float)
    ax.errorbar(s, y, xerr=style.err(s, sub["success_lo"], sub["success_hi"]), fmt="none", ecolor="black", lw=0.6,
                capsize=1.5, gid="success")
    if sub["timing_end_lo"].notna().any():
        end = s + sub[["timing", *TIMING_KINDS]].sum(axis=1).to_numpy()
        ax.errorbar(end, y, xerr=style.err(end, sub["timing_end_lo"], sub["timing_end_hi"]),
                    fmt="none", ecolor="#444444", lw=0.6, capsize=1.5)
    ax.set_xlim(0, 1)


def _model_rows(ax, order: list[str]) -> None:
    """Label the rows of a ranked plot (top = first) on the first panel."""
    ax.set_yticks(range(len(order)), order, fontsize=7 if len(order) <= 20 else 5)
    ax.set_ylim(len(order) - 0.5, -0.5)


def _row_labels(frame: pd.DataFrame) -> pd.Series:
    if frame["clock"].nunique() > 1:
        return frame["model"].astype(str) + " · " + frame["clock"].astype(str)
    return frame["model"].astype(str)


def clock_contrast(success: pd.DataFrame | None, decomposition: pd.DataFrame | None = None) -> pd.DataFrame:
    """Success per model × task type × clock as ``estimate``, ``estimate_lo``, ``estimate_hi``,
    ``quantity`` and ``source``: the posterior ``p_success`` when a decomposition is given (the
    paused clock's is ``p_capable`` when no paused row was fitted: timing cannot fail there),
    otherwise the observed ``success_rate`` rows of ``metrics.success_rates``."""
    def pick(frame, quantity, source):
        cols = {quantity: "estimate", f"{quantity}_lo": "estimate_lo", f"{quantity}_hi": "estimate_hi"}
        return frame[KEYS + list(cols)].rename(columns=cols).assign(quantity=quantity, source=source)

    if decomposition is None or not len(decomposition):
        return pick(success, "success_rate", "observed")
    d = decomposition
    parts = [pick(d, "p_success", "posterior")]
    if not (d["clock"] == "paused").any():
        first_timed = d.sort_values("clock", key=lambda c: c != "wall").drop_duplicates(["model", "task_type"])
        parts.insert(0, pick(first_timed.assign(clock="paused"), "p_capable", "posterior"))
    return pd.concat(parts, ignore_index=True)


def plot_paused_vs_wall(contrast: pd.DataFrame, width: str = "double", ci_prob: float = 0.95,
                        diagnostics: dict | None = None, models=None):
    """Slopegraph of success under the paused clock versus the timed clock(s), per model, with
    ``ci_prob`` intervals; a ranked dumbbell plot (models ordered by the paused − timed gap) for many
    models. ``contrast``: the rows of :func:`clock_contrast`."""
    clocks = [c for c in ("paused", "step", "wall") if c in set(contrast["clock"])]
    models = sorted(set(models if models is not None else contrast["model"]))
    types = sorted(contrast["task_type"].unique())
    if style.many(models):
        return _dumbbell(contrast, clocks, types, width, ci_prob, diagnostics)
    palette = style.model_palette(models)
    fig, axes = style.panel_figure(width, len(types), sharey=True)
    xpos = {c: i for i, c in enumerate(clocks)}
    for ax, task_type in zip(axes, types):
        sub = contrast[contrast["task_type"] == task_type]
        for j, model in enumerate(models):
            m = sub[sub["model"] == model].copy()
            m["x"] = m["clock"].map(xpos).astype(float) + (j - (len(models) - 1) / 2) * 0.03
            m = m.sort_values("x")
            ax.plot(m["x"], m["estimate"], color=palette[model], lw=1, marker="o", ms=3, label=model)
            ax.vlines(m["x"], m["estimate_lo"], m["estimate_hi"], color=palette[model], lw=0.8)
        ax.set_xticks(range(len(clocks)), clocks)
        ax.set_xlim(-0.4, len(clocks) - 0.6)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(task_type)
        ax.set_xlabel("clock")
    if len(axes):
        axes[0].set_ylabel(f"P(success), {style.pct(ci_prob)} interval")
        handles, labels = axes[0].get_legend_handles_labels()
        if handles:
            fig.legend(handles, labels, loc="outside lower center", ncols=style.legend_columns(fig, labels),
                       frameon=False)
    return style.mark_diagnostics(fig, diagnostics)


def _dumbbell(rates, clocks, types, width, ci_prob, diagnostics):
    timed = [c for c in clocks if c != "paused"]
    wide = rates.pivot_table(index=["model", "task_type"], columns="clock", values="estimate")
    gap = (wide.get("paused", np.nan) - wide[timed].mean(axis=1)) if timed else wide.mean(axis=1)
    order = gap.groupby("model").mean().sort_values(ascending=False).index.tolist()
    fig, axes = style.new_figure(width, style.rows_height(len(order)), ncols=max(len(types), 1), sharey=True)
    pos = {m: i for i, m in enumerate(order)}
    markers = {"paused": "o", "wall": "s", "step": "^"}
    colours = {"paused": "#0072B2", "wall": "#D55E00", "step": "#E69F00"}
    for ax, task_type in zip(axes.flat, types):
        sub = rates[rates["task_type"] == task_type]
        w = sub.pivot_table(index="model", columns="clock", values="estimate")
        for model, row in w.iterrows():
            vals = row.dropna()
            if len(vals) > 1:
                ax.hlines(pos[model], vals.min(), vals.max(), color="#999999", lw=0.6)
        for clock in clocks:
            c = sub[sub["clock"] == clock]
            ax.errorbar(c["estimate"], c["model"].map(pos).astype(float),
                        xerr=style.err(c["estimate"], c["estimate_lo"], c["estimate_hi"]), fmt=markers[clock], ms=2.5,
                        color=colours[clock], lw=0.5, label=clock)
        ax.set_xlim(-0.02, 1.02)
        ax.set_title(task_type)
    style.panel_xlabel(fig, list(axes.flat)[:len(types)], f"P(success), {style.pct(ci_prob)} interval")
    ax0 = axes.flat[0]
    ax0.set_yticks(range(len(order)), order, fontsize=5)
    ax0.set_ylim(len(order) - 0.5, -0.5)
    handles, labels = ax0.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(clocks), frameon=False, title="clock")
    return style.mark_diagnostics(fig, diagnostics)


def plot_forest(decomposition: pd.DataFrame, width: str = "double", diagnostics: dict | None = None,
                ci_prob: float = 0.95):
    """Forest plot of each model's capability (P(capable)) and speed (P(timely)): the posterior
    means and ``ci_prob`` equal-tailed intervals of ``FitResult.decomposition``, one marker per task
    type (× timed clock); models ranked by capability."""
    d = timed_or_all(decomposition)
    models = sorted(decomposition["model"].unique())
    palette = style.model_palette(models)
    order = d.groupby("model")["p_capable"].mean().sort_values(ascending=False).index.tolist()
    clocks = sorted(d["clock"].unique())
    present = set(zip(d["task_type"], d["clock"]))
    groups = [(t, c) for t in sorted(d["task_type"].unique()) for c in clocks if (t, c) in present]
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
        ax.set_xlabel(f"posterior mean and {style.pct(ci_prob)} interval")
    _model_rows(axes.flat[0], order)
    label = (lambda t, c: t) if len(clocks) == 1 else (lambda t, c: f"{t} · {c}")
    fig.legend([Line2D([], [], color="black", marker=markers[g % len(markers)], ls="", ms=3) for g in range(len(groups))],
               [label(t, c) for t, c in groups], loc="outside lower center",
               ncols=style.legend_columns(fig, [label(t, c) for t, c in groups]), frameon=False)
    return style.mark_diagnostics(fig, diagnostics)
