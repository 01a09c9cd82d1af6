"""What the written report says: methods, headline sentences, per-task-type sections, captions,
the power note and the diagnostics warnings, as blocks for :mod:`rtanalysis.reporting.template`.

Numbers are printed with :func:`pct` / :func:`pct_interval`; a missing number prints as ``—`` and
a sentence whose numbers are missing is left out, so the text never shows ``nan``.
"""

from __future__ import annotations

import math
from importlib import metadata

import numpy as np
import pandas as pd

from ..plots import style

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


def pct_interval(est, lo, hi, digits: int = 0) -> str:
    """``12% [8, 17]`` (``digits`` decimals: ``0.3% [0.1, 0.7]``); without finite ends just the estimate."""
    if not finite(est):
        return "—"
    if finite(lo) and finite(hi):
        return f"{100 * float(est):.{digits}f}% [{100 * float(lo):.{digits}f}, {100 * float(hi):.{digits}f}]"
    return f"{100 * float(est):.{digits}f}%" if digits else pct(est)


def package_versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def headline_clock(clocks) -> str | None:
    # the distinct values first: iterating a million-row Arrow column in Python took seconds
    clocks = set(pd.Series(clocks).dropna().unique())
    return next((c for c in TIMED_PREFERENCE if c in clocks), None)


CLOCK_WORDS = {"wall": "wall-clock", "step": "step-clock", "paused": "paused-clock"}


# --------------------------------------------------------------------------------------------
# pooled posterior quantities (over task types, weighted by episodes)


def _pooled_row(model, quantities: dict, ci_prob: float) -> dict:
    al = (1 - ci_prob) / 2
    row = {"model": model}
    for name, x in quantities.items():
        x = x[np.isfinite(x)]
        row[name] = float(x.mean()) if len(x) else np.nan
        row[f"{name}_lo"], row[f"{name}_hi"] = (np.quantile(x, [al, 1 - al]) if len(x) else (np.nan, np.nan))
    return row


def pooled_posterior(fit, decomposition: pd.DataFrame, clock: str, ci_prob: float) -> pd.DataFrame:
    """Per model at ``clock``: ``p_success``, ``share_timing`` and ``p_success_half_latency``
    (λ = 0.5), pooled over task types with episode weights per posterior draw (``FitResult.draws``):
    posterior mean and ``ci_prob`` equal-tailed interval."""
    at_clock = decomposition[decomposition["clock"] == clock].set_index(["model", "task_type"])
    weights = at_clock["n_episodes"]
    informative = (at_clock["latency_informative"].astype(bool) if "latency_informative" in at_clock
                   else pd.Series(True, index=at_clock.index))

    def wide(quantity, lam=1.0):
        d = fit.draws(quantity, lam=lam, wide=True)
        return d[d.index.get_level_values("clock") == clock].droplevel("clock").sort_index()

    ps, share, half = wide("p_success"), wide("share_timing"), wide("p_success", 0.5)
    w = weights.reindex(ps.index).fillna(0).to_numpy()[:, None]
    rows = []
    for model, idx in ps.groupby(level="model").indices.items():
        wm = w[idx]
        if wm.sum() == 0:
            continue
        fail = wm * (1 - ps.to_numpy()[idx])
        row = _pooled_row(model, {
            "p_success": (wm * ps.to_numpy()[idx]).sum(0) / wm.sum(),
            "share_timing": (fail * share.to_numpy()[idx]).sum(0) / np.where(fail.sum(0) > 0, fail.sum(0), np.nan),
            "p_success_half_latency": (wm * half.to_numpy()[idx]).sum(0) / wm.sum(),
        }, ci_prob)
        # the episode share where λ can act: latencies measured, not capped at the deadline or a constant
        can_act = informative.reindex(ps.index[idx]).fillna(False).to_numpy(bool)
        row["latency_informative_share"] = float(wm[can_act].sum() / wm.sum())
        rows.append(row)
    return pd.DataFrame(rows)


def observed_headline(success_by_clock: pd.DataFrame, failures_by_clock: pd.DataFrame, clock: str) -> pd.DataFrame:
    """Per model at ``clock``, from metrics frames grouped by model × clock: ``success_rate`` (and
    interval) of ``metrics.success_rates``; ``share_timing`` = the timing row's ``share_labelled``
    of ``metrics.observed_decomposition`` (timing failures among the failures the step labels
    classify); ``paused_success_rate`` from the paused rows."""
    rate = ["success_rate", "success_rate_lo", "success_rate_hi"]
    out = success_by_clock[success_by_clock["clock"] == clock].set_index("model")[rate]
    timing = failures_by_clock[(failures_by_clock["clock"] == clock) & (failures_by_clock["failure_type"] == "timing")]
    timing = timing.set_index("model")[["share_labelled", "share_labelled_lo", "share_labelled_hi"]]
    out[["share_timing", "share_timing_lo", "share_timing_hi"]] = timing.reindex(out.index).to_numpy()
    paused = success_by_clock[success_by_clock["clock"] == "paused"].set_index("model")[rate]
    out[["paused_" + c for c in rate]] = paused.reindex(out.index).to_numpy()
    return out.reset_index()


def headline_sentence(row, clock: str, posterior: bool) -> str:
    """One model's headline: success at ``clock`` (posterior ``p_success`` or observed
    ``success_rate``), the timing share of its failures and, posterior, the λ = 0.5 counterfactual;
    observed, the paused-clock success."""
    words = CLOCK_WORDS.get(clock, clock)
    est = "p_success" if posterior else "success_rate"
    miss = row.get("ppc_misses")
    mark = "⚠ " if isinstance(miss, str) and miss else ""
    observed = (f" (observed {pct_interval(row['success_rate'], row['success_rate_lo'], row['success_rate_hi'])})"
                if posterior and finite(row.get("success_rate")) else "")
    parts = [f"{mark}**{row['model']}** succeeds in {pct_interval(row[est], row[est + '_lo'], row[est + '_hi'])}"
             f"{observed} of {words} episodes" + (f" — the model misses its logs in {miss}" if mark else "")]
    if finite(row.get("share_timing")):
        kind = "" if posterior else " (of the failures the step labels classify)"
        parts.append(f"{pct_interval(row['share_timing'], row['share_timing_lo'], row['share_timing_hi'])} of its "
                     f"failures are timing failures{kind}")
    can_act = row.get("latency_informative_share", 1.0)
    if posterior and finite(can_act) and can_act == 0:
        parts.append("what halving its latency would do the data cannot tell (its latencies are capped at the "
                     "deadline or logged as a constant, so λ has nothing to act on)")
    elif posterior and finite(row.get("p_success_half_latency")):
        change = round(100 * row["p_success_half_latency"]) - round(100 * row["p_success"])
        verb = "raise success to" if change > 0 else "lower success to" if change < 0 else "leave success at"
        parts.append(f"halving its latency would {verb} "
                     + pct_interval(row["p_success_half_latency"], row["p_success_half_latency_lo"],
                                    row["p_success_half_latency_hi"])
                     + ("" if not finite(can_act) or can_act >= 1 else
                        f" (λ acts on the {100 * can_act:.0f}% of its episodes whose latencies are measured)"))
    if not posterior and finite(row.get("paused_success_rate")):
        parts.append("with the environment paused while it thinks it succeeds in "
                     + pct_interval(row["paused_success_rate"], row["paused_success_rate_lo"],
                                    row["paused_success_rate_hi"]))
    return "; ".join(parts) + "."


# --------------------------------------------------------------------------------------------
# captions


def diagnostics_warning(diagnostics: dict | None) -> str | None:
    if not style.diagnostics_failed(diagnostics):
        return None
    detail = style.diagnostics_text(diagnostics)
    advice = (diagnostics.get("advice") or "").strip()
    return ("the sampler's convergence diagnostics failed" + (f" ({detail})" if detail else "")
            + ". Posterior numbers and figures marked with this warning are unreliable"
            + (f". {'; '.join(advice.splitlines())}." if advice else
               ": rerun with more tuning, draws and chains (`--tune auto`, `--draws`, `--chains`) before reporting them."))


CAPTIONS = {
    "success_vs_latency": lambda c: (
        "Observed success rate by the episode's median decision latency relative to its validity window "
        f"(1 = the window closes; dashed line), in bins, with {c['p']} {c['method']} intervals"
        + ("; lines and bands: the model's posterior success curve (solid: wall clock, dashed: step clock)"
           if c["fit"] else "")
        + ", one panel per task type. Success that falls as latency approaches the window marks timing failures."
        + (" With many models, a heatmap: rows are models ranked by success." if c["many"] else "")),
    "failure_decomposition": lambda c: (
        ("Posterior" if c["fit"] else "Observed") + " decomposition of episodes into success, capability failure "
        "and timing failure per model and task type (timed clocks); the timing share is split into late, early and "
        "no action in the proportions of the observed timing-failed decisions. Whiskers: "
        + (f"{c['p']} posterior intervals of the success share and of the success + timing boundary."
           if c["fit"] else f"{c['p']} {c['method']} intervals of the success share.")),
    "latency_ecdf": lambda c: (
        "Empirical distribution of decision latency per model, one panel per task type; the dashed line marks the "
        "median window close and a dotted line the median window opening where windows open late."
        + (" With many models: median and interquartile range, models ranked by median latency." if c["many"] else "")),
    "paused_vs_wall": lambda c: (
        "Success with the environment paused during inference (timing cannot fail) versus the timed clocks, per "
        f"model, with {c['p']} " + ("posterior" if c["fit"] else c["method"]) + " intervals. The drop from paused to "
        "wall is the cost of time." + (" With many models: a dumbbell plot ranked by that drop." if c["many"] else "")),
    "counterfactuals": lambda c: (
        "Posterior mean success if every latency were scaled by λ (λ = 0.5: twice as fast; λ = 1: as observed), per "
        f"model and task type, with {c['p']} posterior bands." + (" With many models, a heatmap." if c["many"] else "")),
    "forest": lambda c: (
        "Forest plot of each model's posterior probability of answering correctly with unlimited time "
        "(capability) and of acting within every window (speed), per task type: posterior means with "
        f"{c['p']} equal-tailed posterior intervals."),
    "trajectory_stability": lambda c: (
        "Left: hazard of the first failed decision by decision index, pooled over task types (timed clocks; an "
        "episode whose outcome is unknown is censored there; points from at least 5 episodes at risk), with "
        f"{c['p']} {c['method']} bands. Right: share of labelled decisions that used a fallback action, with {c['p']} "
        f"{c['method']} intervals."),
    "reliability": lambda c: (
        "Share of each model's decisions with no action because the call failed (provider or agent error, or the "
        "harness stopped it; squares) beside the share that timed out (circles), over every clock, with "
        f"{c['p']} {c['method']} intervals. Failed calls are neither timing nor capability failures: the model leaves "
        "them out, and the decomposition does not count them."),
    "ppc": lambda c: (
        "Posterior predictive check: observed success rate of each model × task type × clock cell (and, where "
        "available, the 10th, 50th and 90th percentiles of log latency) against the posterior predictive mean and "
        f"{c['p']} interval; cells whose interval crosses the diagonal are reproduced by the model."),
    "rank_trace": lambda c: (
        "Trace and rank plots of the main parameters, one colour per chain; overlapping traces and flat rank "
        "histograms indicate that the chains mixed."),
}
INTERVAL_NAMES = {"wilson": "Wilson", "jeffreys": "Jeffreys", "beta_posterior": "Jeffreys (central)",
                  "clopper_pearson": "Clopper–Pearson"}


def caption(name: str, fit: bool, many: bool, diagnostics: dict | None, needs_fit: bool, ci_prob: float = 0.95,
            method: str = "wilson") -> str:
    """The figure's caption; intervals named with their probability ``ci_prob`` and ``method``."""
    text = CAPTIONS[name]({"fit": fit, "many": many, "p": style.pct(ci_prob), "method": INTERVAL_NAMES[method]})
    warn = diagnostics_warning(diagnostics) if (fit or needs_fit) else None
    if warn and (needs_fit or name in ("success_vs_latency", "failure_decomposition", "paused_vs_wall")):
        text += " **Warning: " + warn + "**"
    return text


# --------------------------------------------------------------------------------------------
# power note


def power_note(success: pd.DataFrame, clock: str | None) -> list[str]:
    """Sentences sizing the next run (episodes per model × task type × clock cell), after Miller
    (2024), from the cells of ``metrics.success_rates`` at ``clock``."""
    from ..metrics import episodes_needed, min_detectable_difference

    cells = success[success["clock"] == clock] if clock else success
    cells = cells[cells["n"] > 0]
    if cells.empty:
        return []
    p = min(max(float(cells["success_rate"].median()), 0.02), 0.98)
    n_now = float(cells["n"].median())
    out, needs = [], []
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
