"""What the written report says: methods, headline sentences, per-task-type sections, captions,
the power note and the diagnostics warnings, as blocks for :mod:`rtanalysis.report_template`.

Numbers are printed with :func:`pct` / :func:`pct_interval`; a missing number prints as ``—`` and
a sentence whose numbers are missing is left out, so the text never shows ``nan``.
"""

from __future__ import annotations

import math
from importlib import metadata

import numpy as np
import pandas as pd

from .plots import style

PACKAGES = ("rtanalysis", "pymc", "pytensor", "arviz", "nutpie", "numpy", "pandas", "scipy", "statsmodels",
            "matplotlib", "seaborn")
#: differences (absolute, in success probability) the power note sizes the next run for
POWER_DIFFERENCES = (0.10, 0.05)
TIMED_PREFERENCE = ("wall", "step")


def finite(x) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def pct(x) -> str:
    return f"{100 * float(x):.0f}%" if finite(x) else "—"


def pct_interval(est, lo, hi) -> str:
    """``12% [8, 17]``; without finite ends just ``12%``."""
    if not finite(est):
        return "—"
    if finite(lo) and finite(hi):
        return f"{100 * float(est):.0f}% [{100 * float(lo):.0f}, {100 * float(hi):.0f}]"
    return pct(est)


def package_versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def headline_clock(episodes: pd.DataFrame) -> str | None:
    clocks = set(episodes["clock"])
    return next((c for c in TIMED_PREFERENCE if c in clocks), None)


CLOCK_WORDS = {"wall": "wall-clock", "step": "step-clock", "paused": "paused-clock"}


# --------------------------------------------------------------------------------------------
# pooled posterior quantities (over task types, weighted by episodes)


def pooled_posterior(fit, decomposition: pd.DataFrame, clock: str, interval: float) -> pd.DataFrame | None:
    """Per model at ``clock``: success, timing share of failures and success at λ = 0.5, pooled
    over task types with episode weights, per posterior draw; None when the fit offers no draws."""
    draws = getattr(fit, "draws", None)
    if not callable(draws):
        return None
    weights = decomposition[decomposition["clock"] == clock].set_index(["model", "task_type"])["n_episodes"]

    def wide(quantity, lam=1.0):
        d = draws(quantity, lam=lam)
        d = d[d["clock"] == clock]
        return d.pivot_table(index=["model", "task_type"], columns="draw", values="value")

    ps, share, half = wide("p_success"), wide("share_timing"), wide("p_success", 0.5)
    w = weights.reindex(ps.index).fillna(0).to_numpy()[:, None]
    al = (1 - interval) / 2
    rows = []
    for model, idx in ps.groupby(level="model").indices.items():
        wm = w[idx]
        if wm.sum() == 0:
            continue
        p = (wm * ps.to_numpy()[idx]).sum(0) / wm.sum()
        fail = wm * (1 - ps.to_numpy()[idx])
        sh = (fail * share.to_numpy()[idx]).sum(0) / np.where(fail.sum(0) > 0, fail.sum(0), np.nan)
        h = (wm * half.to_numpy()[idx]).sum(0) / wm.sum()
        row = {"model": model}
        for name, x in (("p_success", p), ("share_timing", sh), ("p_success_half_latency", h)):
            x = x[np.isfinite(x)]
            row[name] = float(x.mean()) if len(x) else np.nan
            row[f"{name}_lo"], row[f"{name}_hi"] = (np.quantile(x, [al, 1 - al]) if len(x) else (np.nan, np.nan))
        rows.append(row)
    return pd.DataFrame(rows)


def observed_headline(episodes: pd.DataFrame, clock: str, level: float) -> pd.DataFrame:
    """Per model at ``clock``: observed success (Wilson) and the labelled timing share of failures."""
    from .plots.summaries import wilson

    ep = episodes[episodes["clock"] == clock]
    g = ep.groupby("model")
    out = pd.DataFrame({"n": g.size(), "k": g["success"].sum()})
    out["p_success"] = out["k"] / out["n"]
    out["p_success_lo"], out["p_success_hi"] = wilson(out["k"], out["n"], level)
    failed = ep[~ep["success"]]
    typed = failed[failed["failure_type"].isin(["capability", "timing", "both"])]
    # a comparison summed per group stays numeric when no failure is typed (apply on an empty frame is text)
    kt = (typed["failure_type"] == "timing").groupby(typed["model"]).sum()
    nt = typed.groupby("model").size()
    out["share_timing"] = (kt / nt).reindex(out.index)
    out["share_timing_lo"], out["share_timing_hi"] = wilson(kt.reindex(out.index).fillna(0),
                                                            nt.reindex(out.index).fillna(0), level)
    paused = episodes[episodes["clock"] == "paused"].groupby("model")["success"].agg(["size", "sum"])
    out["p_paused"] = (paused["sum"] / paused["size"]).reindex(out.index)
    lo, hi = wilson(paused["sum"], paused["size"], level)
    out["p_paused_lo"] = pd.Series(lo, index=paused.index).reindex(out.index)
    out["p_paused_hi"] = pd.Series(hi, index=paused.index).reindex(out.index)
    return out.reset_index()


def headline_sentence(row, clock: str, posterior: bool) -> str:
    words = CLOCK_WORDS.get(clock, clock)
    s = (f"**{row['model']}** succeeds in {pct_interval(row['p_success'], row['p_success_lo'], row['p_success_hi'])}"
         f" of {words} episodes")
    parts = [s]
    if finite(row.get("share_timing")):
        kind = "" if posterior else " (of the failures the step labels classify)"
        parts.append(f"{pct_interval(row['share_timing'], row['share_timing_lo'], row['share_timing_hi'])} of its "
                     f"failures are timing failures{kind}")
    if posterior and finite(row.get("p_success_half_latency")):
        change = round(100 * row["p_success_half_latency"]) - round(100 * row["p_success"])
        verb = "raise success to" if change > 0 else "lower success to" if change < 0 else "leave success at"
        parts.append(f"halving its latency would {verb} "
                     + pct_interval(row["p_success_half_latency"], row["p_success_half_latency_lo"],
                                    row["p_success_half_latency_hi"]))
    if not posterior and finite(row.get("p_paused")):
        parts.append("with the environment paused while it thinks it succeeds in "
                     + pct_interval(row["p_paused"], row["p_paused_lo"], row["p_paused_hi"]))
    return "; ".join(parts) + "."


# --------------------------------------------------------------------------------------------
# captions


def diagnostics_warning(diagnostics: dict | None) -> str | None:
    if not style.diagnostics_failed(diagnostics):
        return None
    detail = style.diagnostics_text(diagnostics)
    return ("the sampler's convergence diagnostics failed" + (f" ({detail})" if detail else "")
            + ". Posterior numbers and figures marked with this warning are unreliable: rerun with more draws "
              "and chains (`--draws`, `--chains`) before reporting them.")


CAPTIONS = {
    "success_vs_latency": lambda c: (
        "Observed success rate by the episode's median decision latency relative to its validity window "
        "(1 = the window closes; dashed line), in bins, with 95% Wilson intervals"
        + ("; lines and bands: the model's posterior success curve (solid: wall clock, dashed: step clock)"
           if c["fit"] else "")
        + ", one panel per task type. Success that falls as latency approaches the window marks timing failures."
        + (" With many models, a heatmap: rows are models ranked by success." if c["many"] else "")),
    "failure_decomposition": lambda c: (
        ("Posterior" if c["fit"] else "Observed") + " decomposition of episodes into success, capability failure "
        "and timing failure per model and task type (timed clocks); the timing share is split into late, early and "
        "no action in the proportions of the observed timing-failed decisions. Whiskers: "
        + ("posterior intervals of the success share and of the success + timing boundary."
           if c["fit"] else "95% Wilson intervals of the success share.")),
    "latency_ecdf": lambda c: (
        "Empirical distribution of decision latency per model, one panel per task type; the dashed line marks the "
        "median window close and a dotted line the median window opening where windows open late." + (" With many models: median and interquartile range, models ranked by "
                                  "median latency." if c["many"] else "")),
    "paused_vs_wall": lambda c: (
        "Success with the environment paused during inference (timing cannot fail) versus the timed clocks, per "
        "model, with " + ("posterior" if c["fit"] else "95% Wilson") + " intervals. The drop from paused to wall is "
        "the cost of time." + (" With many models: a dumbbell plot ranked by that drop." if c["many"] else "")),
    "counterfactuals": lambda c: (
        "Posterior success if every latency were scaled by λ (λ = 0.5: twice as fast; λ = 1: as observed), per "
        "model and task type, with posterior bands." + (" With many models, a heatmap." if c["many"] else "")),
    "forest": lambda c: (
        "Forest plot of each model's posterior probability of answering correctly with unlimited time "
        "(capability) and of acting within every window (speed), per task type, with posterior intervals."),
    "trajectory_stability": lambda c: (
        "Left: hazard of the first failed decision by decision index, pooled over task types (timed clocks; points "
        "from at least 5 episodes at risk). Right: share of decisions that used a fallback action, with 95% Wilson "
        "intervals."),
    "ppc": lambda c: (
        "Posterior predictive check: observed success rate of each model × task type × clock cell (and, where "
        "available, the 10th, 50th and 90th percentiles of log latency) against the posterior predictive mean and "
        "interval; cells whose interval crosses the diagonal are reproduced by the model."),
    "rank_trace": lambda c: (
        "Trace and rank plots of the main parameters, one colour per chain; overlapping traces and flat rank "
        "histograms indicate that the chains mixed."),
}


def caption(name: str, fit: bool, many: bool, diagnostics: dict | None, needs_fit: bool) -> str:
    text = CAPTIONS[name]({"fit": fit, "many": many})
    warn = diagnostics_warning(diagnostics) if (fit or needs_fit) else None
    if warn and (needs_fit or name in ("success_vs_latency", "failure_decomposition", "paused_vs_wall")):
        text += " **Warning: " + warn + "**"
    return text


# --------------------------------------------------------------------------------------------
# power note


def power_note(episodes: pd.DataFrame, clock: str | None) -> list[str]:
    """Sentences sizing the next run (episodes per model × task type × clock cell), after Miller (2024)."""
    from .metrics import episodes_needed, min_detectable_difference

    ep = episodes[episodes["clock"] == clock] if clock else episodes
    if ep.empty:
        return []
    cells = ep.groupby(["model", "task_type"])["success"].agg(["mean", "size"])
    p = float(cells["mean"].median())
    n_now = float(cells["size"].median())
    p = min(max(p, 0.02), 0.98)
    out = []
    needs = []
    for d in POWER_DIFFERENCES:
        a, b = (p, p + d) if p + d <= 1 else (p - d, p)
        n = episodes_needed(a, b, alpha=0.05, power=0.8)
        if finite(n):
            needs.append(f"{int(n)} episodes per cell to detect a {100 * d:.0f}-point difference")
    if needs:
        out.append(f"At the median observed success rate of {pct(p)} ({CLOCK_WORDS.get(clock, 'all')} episodes), a "
                   f"two-sided test at α = 0.05 with 80% power needs " + " and ".join(needs)
                   + " between two models (independent episodes).")
    mdd = min_detectable_difference(n_now, p, alpha=0.05, power=0.8)
    if finite(mdd):
        out.append(f"This run has a median of {int(n_now)} episodes per cell, enough to detect differences of about "
                   f"{100 * mdd:.0f} percentage points.")
    out.append("Following Miller (2024, *Adding error bars to evals*), run every model on the same (task, seed) "
               "units and compare them pairwise — paired differences need fewer episodes when outcomes correlate "
               "across models — and cluster standard errors on tasks, since seeds of one task are not independent; "
               "clustering inflates the numbers above by the design effect.")
    return out
