"""The written report as blocks (see :mod:`.template`): methods, headline numbers, a section per
task type, figures with captions, tables and the power note. Every number comes from a
:mod:`rtanalysis.metrics` frame or a :class:`~rtanalysis.FitResult` frame."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import metrics as m
from .. import plots
from . import tables
from ..model.assumptions import assumptions_for
from ..model.checks import family_flags
from ..model.families import FAMILIES
from ..model.harmony import harmony
from ..model.spec import PARTS
from . import content

TITLE = "Capability versus timing failures"
MAX_INLINE_ROWS = 60  # longer tables are only linked (they are written as CSV, Markdown and LaTeX)
DECOMPOSITION_COLUMNS = ["model", "clock", "n_episodes", "p_success", "p_success_lo", "p_success_hi", "p_capable",
                         "p_capable_lo", "p_capable_hi", "p_timely", "p_timely_lo", "p_timely_hi", "share_timing",
                         "share_timing_lo", "share_timing_hi"]


# --------------------------------------------------------------------------------------------
# tables


def report_tables(metrics: dict, frames: dict, fit=None, ci_prob: float = 0.95) -> dict[str, tuple]:
    """``{name: (frame, caption)}``: the observed success, latency and failure-type tables (rows of
    the :func:`rtanalysis.metrics.compute_all` tables ``metrics``) and, with a fit's ``frames``,
    the decomposition, counterfactual and pairwise-comparison tables."""
    p = plots.style.pct(ci_prob)
    out = {"success": (tables.success_table(metrics["success"]),
                       f"Observed success per model, task type and clock, with {p} Wilson intervals and {p} "
                       "intervals clustered on tasks.")}
    if len(metrics.get("latency", ())):
        out["latency"] = (tables.latency_table(metrics["latency"]),
                          "Decision latency: median (p50) and 90th percentile, absolute and relative to the window "
                          "close (rel_; 1 = the deadline).")
    if len(metrics.get("observed_decomposition", ())):
        out["observed_failure_types"] = (tables.observed_decomposition_table(metrics["observed_decomposition"]),
                                         "Observed failure types: share of failed episodes whose decision labels "
                                         "show a capability, timing or both failure, or cannot tell (unknown), with "
                                         f"{p} Wilson intervals.")
    dec = frames.get("decomposition")
    if dec is not None:
        out["decomposition"] = (tables.decomposition_table(dec),
                                "Posterior decomposition: P(success) = P(capable) × P(timely), and the share of "
                                f"failures that are timing failures; posterior means with {p} intervals.")
    cf = frames.get("counterfactual_table", frames.get("counterfactuals"))
    if cf is not None:
        out["counterfactuals"] = (tables.counterfactual_table(cf, plots.TABLE_LAMBDAS),
                                  f"Posterior mean success (with {p} intervals) if latencies were scaled by λ "
                                  "(columns), timed clocks. This counterfactual assumes: "
                                  + " ".join(assumptions_for("scale", fit.spec if fit is not None else None)))
    if fit is not None and dec is not None and dec["task_type"].nunique() > 1 and (dec["clock"] != "paused").any():
        out["harmony"] = (harmony(fit, ci_prob),
                          "Harmony across task types (1 − normalised Gini of the per-type values, per posterior "
                          f"draw; `docs/user-guide/measure.md`) of P(capable) and P(timely | capable), with {p} intervals: "
                          "1 = uniform across task types, low = concentrated in a few (a model whose timing "
                          "failures sit in one task type has low timely harmony).")
    ps, _ = prior_sensitivity_of(fit)
    if ps is not None and len(ps):
        out["prior_sensitivity"] = (ps, "Power-scaling sensitivity (arviz_stats; Kallioinen et al. 2024) of "
                                        "share_timing and p_timely per timed row: flagged (threshold 0.05) where "
                                        "the prior moves the posterior (diagnosis as arviz_stats' psense_summary).")
    flags = family_flags(frames.get("ppc"))
    if len(flags):
        out["ppc_flags"] = (flags, "Posterior predictive checks per family: cells checked (rows), cells extreme "
                                   "(p < 0.025 or > 0.975), the number chance gives (5 %), the binomial p of that "
                                   "many extremes, and whether the family is flagged (p ≤ 0.05).")
    comps = comparison_rows(fit, dec, ci_prob) if fit is not None and dec is not None else []
    if comps:
        out["comparisons"] = (tables.comparison_table(comps),
                              "Posterior differences in P(success): paused minus timed clock per model (the cost "
                              f"of time), and each model minus the best model per task type; {p} intervals.")
    return out


def comparison_rows(fit, decomposition: pd.DataFrame, ci_prob: float = 0.95) -> list[dict]:
    """Rows of ``fit.compare``: paused − each timed clock per model, and each model − the best one."""
    rows = []
    clocks = set(decomposition["clock"])
    for timed in ("wall", "step"):
        if "paused" in clocks and timed in clocks:
            c = fit.compare("p_success", "paused", timed, over="clock", ci_prob=ci_prob)
            rows += _comparison_records(c, f"p_success: paused − {timed}", over="clock")
    clock = "wall" if "wall" in clocks else next(iter(sorted(clocks - {"paused"})), None)
    if clock is None:
        return rows
    timed = decomposition[decomposition["clock"] == clock]
    best = timed.groupby("model")["p_success"].mean().idxmax()
    for model in sorted(timed["model"].unique()):
        if model != best:
            c = fit.compare("p_success", model, best, over="model", ci_prob=ci_prob)
            rows += _comparison_records(c[c["clock"] == clock], f"p_success: model − {best}")
    return rows


def _comparison_records(c: pd.DataFrame, quantity: str, over: str = "model") -> list[dict]:
    """Rows of ``fit.compare`` as table records; for a clock contrast the model is the subject."""
    recs = []
    for r in c.to_dict("records"):
        a, b = (r["model"], "—") if over == "clock" else (r["a"], r["b"])
        recs.append({"quantity": quantity, "task_type": r.get("task_type"),
                     "clock": f"{r['a']} − {r['b']}" if over == "clock" else r.get("clock"), "a": a, "b": b,
                     "difference": r["difference"], "difference_lo": r["difference_lo"],
                     "difference_hi": r["difference_hi"], "p_a_gt_b": r["p_a_gt_b"]})
    return recs


# --------------------------------------------------------------------------------------------
# the document


def report_blocks(load_result, metrics: dict, frames: dict, fit, figure_paths: dict, table_frames: dict,
                  ci_prob: float, seed, data_digest: str) -> list[dict]:
    """The report as blocks (see :mod:`rtanalysis.reporting.template`)."""
    ep = load_result.episodes
    has_fit = frames.get("decomposition") is not None
    diag = frames.get("diagnostics") if fit is not None or has_fit else None
    warn = content.diagnostics_warning(diag)
    blocks: list[dict] = [{"kind": "h1", "text": TITLE}]
    if warn:
        blocks.append({"kind": "warning", "text": warn})
    many = plots.style.many(ep["model"].unique())
    # the answer first (headline, observed beside modelled, and the decomposition figure); what the
    # data cannot tell and the methods follow the results they qualify
    blocks += headline_blocks(ep, frames, fit, ci_prob, warn, metrics.get("episode_structure"))
    lead = {k: v for k, v in figure_paths.items() if k in LEAD_FIGURES}
    blocks += figure_blocks(lead, many, has_fit, diag, ci_prob, heading=None)
    blocks += reliability_blocks(load_result, ci_prob)
    blocks += notes_blocks(diag)
    for task_type in sorted(ep["task_type"].unique()):
        blocks += task_type_blocks(task_type, ep, metrics, frames, ci_prob)
    blocks += figure_blocks({k: v for k, v in figure_paths.items() if k not in LEAD_FIGURES}, many, has_fit, diag,
                            ci_prob)
    blocks += table_blocks(table_frames)
    blocks += methods_blocks(load_result, fit, ci_prob, seed, data_digest, frames.get("ppc"))
    blocks.append({"kind": "h2", "text": "Power for the next run"})
    blocks.append({"kind": "p", "text": " ".join(content.power_note(metrics["success"],
                                                                    content.headline_clock(ep["clock"])))})
    return blocks + prior_appendix_blocks(fit)


def prior_appendix_blocks(fit) -> list[dict]:
    """Appendix: the prior of every parameter the fit sampled (the registry's entries present in its
    posterior), with its rationale, as the reporting guidelines ask (Kruschke 2021, BARG step 2)."""
    if fit is None or getattr(fit, "idata", None) is None:
        return []
    from ..model.priors import prior_table

    post = fit.idata["posterior"]
    table = prior_table()
    table = table[table["parameter"].isin(list(post.data_vars)) | (table["distribution"] == "Fixed")]
    return [{"kind": "h2", "text": "Appendix: priors"},
            {"kind": "table", "frame": table.reset_index(drop=True),
             "caption": "The prior of every parameter of this fit (fixed scales marked Fixed), from the registry "
                        "`rtanalysis.model.priors.PRIORS`; none depends on the data. The model in mathematics: "
                        "`docs/model.md`."}]


def notes_blocks(diagnostics: dict | None) -> list[dict]:
    """What the data cannot tell (no timed clock, latency cells logged as a constant) and a retried fit."""
    d = diagnostics or {}
    items = list(d.get("notes") or [])
    if d.get("retried"):
        r = d["retried"]
        items.append(f"the first fit failed the diagnostics gate and was retried once with tune={r.get('tune')}, "
                     f"draws={r.get('draws')} (`tune='auto'`); the numbers come from the retry")
    if not items:
        return []
    return [{"kind": "h2", "text": "What these data can and cannot tell"}, {"kind": "list", "items": items}]


def headline_blocks(ep: pd.DataFrame, frames: dict, fit, ci_prob: float, warn,
                    structure: pd.DataFrame | None = None) -> list[dict]:
    """Per model at the headline clock: posterior (pooled over task types) or observed numbers; with a
    fit, where the model misses the logs and what in the logs' shape (``structure``:
    :func:`rtanalysis.metrics.episode_structure`) it does not expect."""
    blocks = [{"kind": "h2", "text": "Headline numbers"}]
    clock = content.headline_clock(ep["clock"])
    if clock is None:
        return blocks + [{"kind": "p", "text": "No episode ran under a timed clock (wall or step), so timing could "
                                               "not fail and the report has no timing decomposition."}]
    p = plots.style.pct(ci_prob)
    posterior = fit is not None and frames.get("decomposition") is not None
    if posterior:
        head = content.pooled_posterior(fit, frames["decomposition"], clock, ci_prob)
        head = head.sort_values("p_success", ascending=False)
        source = f"Posterior means with {p} equal-tailed intervals, pooled over task types with episode weights."
        if warn:
            blocks.append({"kind": "warning", "text": "the headline numbers below come from a fit whose "
                                                      "diagnostics failed."})
    else:
        by_clock = ("model", "clock")
        head = content.observed_headline(m.success_rates(ep, by_clock, ci_prob=ci_prob),
                                         m.observed_decomposition(ep, by_clock, ci_prob=ci_prob), clock)
        head = head.sort_values("success_rate", ascending=False)
        source = f"Observed rates with {p} Wilson intervals; no model was fitted."
    if posterior:  # the logs' own rate beside the model's, and where the model misses them
        observed = m.success_rates(ep, ("model", "clock"), ci_prob=ci_prob)
        observed = observed[observed["clock"] == clock].set_index("model")
        for c in ("success_rate", "success_rate_lo", "success_rate_hi"):
            head[c] = head["model"].map(observed[c])
        misses = success_misses(frames.get("ppc"), clock)
        head["ppc_misses"] = head["model"].map(misses)
        source += (" Beside each, the logs' own success rate (Wilson interval); ⚠ marks a model whose observed "
                   "success falls outside the model's posterior predictive interval in some task type.")
    blocks.append({"kind": "p", "text": source})
    blocks.append({"kind": "list", "items": [content.headline_sentence(r, clock, posterior)
                                             for r in head.to_dict("records")]})
    slowness = fit is not None and getattr(fit, "idata", None) is not None and "latency_icc" in fit.idata["posterior"]
    shape = shape_notes(structure, ci_prob, slowness) if posterior else []
    if posterior and head["ppc_misses"].notna().any():
        causes = ("In these logs: " + " ".join(shape)) if shape else MISS_CAUSES
        blocks.append({"kind": "p", "text": f"{MISS_ADVICE} {causes} {MISS_NEXT}"})
    elif shape:
        blocks.append({"kind": "p", "text": "**How these logs are shaped.** " + " ".join(shape)})
    missing = sorted(set(ep["model"].unique()) - set(head["model"]))  # distinct values: not one per episode
    if missing:
        blocks.append({"kind": "p", "text": "Not run under the " + content.CLOCK_WORDS.get(clock, clock)
                       + " clock: " + ", ".join(f"**{m_}**" for m_ in missing) + "."})
    return blocks


def reliability_blocks(load_result, ci_prob: float) -> list[dict]:
    """Decisions lost to failed calls, per model, where the logs hold any (neither timing nor capability)."""
    ep, steps = load_result.episodes, load_result.steps
    if "no_action_cause" not in steps or not len(steps):
        return []
    r = m.reliability_summary(ep, steps, by="model", ci_prob=ci_prob)
    if not plots.has_failed_calls(r):
        return []
    p = plots.style.pct(ci_prob)
    # rates of a few per thousand read as 0% at whole percents: one decimal where every end is under 10%
    digits = 1 if float(r[["failed_call_rate_hi", "timeout_rate_hi"]].max().max()) < 0.1 else 0

    def rate(row, name):
        return content.pct_interval(row[name], row[f"{name}_lo"], row[f"{name}_hi"], digits)

    items = [f"**{row['model']}**: {rate(row, 'failed_call_rate')} of its {row['n_decisions']} decisions "
             f"({row['n_error']} errors, {row['n_other']} other), against {rate(row, 'timeout_rate')} timed out"
             for row in r.sort_values("failed_call_rate", ascending=False).to_dict("records") if row["n_failed_call"]]
    return [{"kind": "h2", "text": "Failed calls (reliability)"},
            {"kind": "p", "text": (
                f"{int(r['n_failed_call'].sum())} decisions had no action because the call failed (the provider or "
                "the agent returned an error, or the harness stopped it: `no_action_cause` error or other). They are "
                "neither timing nor capability failures: the decomposition does not count them and the model leaves "
                f"them out. Share of decisions lost this way, with {p} Wilson intervals:")},
            {"kind": "list", "items": items}] + _error_episodes_note(ep)


def _error_episodes_note(ep: pd.DataFrame) -> list[dict]:
    """Failed episodes that only a failed call explains: the model still reads them as failures."""
    n = int(((ep["failure_type"] == "error") & ~ep["success"]).sum())
    if not n:
        return []
    return [{"kind": "p", "text": (
        f"{n} failed episode(s) have no wrong or missed decision, only failed calls (failure type `error`). The "
        "model keeps every episode's verdict, so it reads these failures as capability or timing failures it "
        "cannot see; where they are many, compare the fit on the episodes without failed calls.")}]


#: what a success the model does not reproduce may mean, and what to try
MISS_ADVICE = ("⚠ Where the model misses the observed success, its numbers for that model are not the logs' and "
               "should not be reported as they are.")
#: the causes named when the logs' shape points to none of them
MISS_CAUSES = ("Likely causes: episodes that end at their first fatal decision (the log stops there, so its length "
               "is not the design's), misses that cluster within episodes (a hard state slows the agent and makes "
               "it wrong for many decisions in a row), or hard items that are also slow.")
MISS_NEXT = ("Compare `--structure auto`, read the flagged checks under Methods, and report the observed rate "
             "beside the model's.")
#: what a shape note adds where the model does not allow for the shape
NOT_ALLOWED = "The model's intervals do not allow for this; read them as too narrow there."
#: an ICC whose lower end passes this: latencies of one episode are alike enough to matter
ICC_NOTABLE = 0.1


def shape_notes(structure: pd.DataFrame | None, ci_prob: float, slowness: bool = False) -> list[str]:
    """Sentences on what the logs' shape shows and the model does not expect (empty when nothing does):
    failed episodes logged shorter than successful ones (the log ends at the fatal decision), and
    latencies alike within episodes; from the rows (model × task type × clock) whose interval excludes
    "no effect"."""
    if structure is None or not len(structure):
        return []
    p = plots.style.pct(ci_prob)
    out = []
    cut = structure[structure["failed_shorter_lo"] > 0.5]
    if len(cut):
        r = cut.sort_values("failed_shorter", ascending=False).iloc[0]
        told = int(structure["n_ended_failure"].sum())
        out.append(
            f"Failed episodes logged fewer decisions than successful ones in {len(cut)} of {len(structure)} "
            f"model × task-type × clock rows (most in {_row_name(r)}: {r['steps_failure']:.1f} against "
            f"{r['steps_success']:.1f} decisions, P(shorter) {r['failed_shorter']:.2f} [{r['failed_shorter_lo']:.2f}, "
            f"{r['failed_shorter_hi']:.2f}], {p}): the logs end at the fatal decision"
            + (f", and {told} episodes say so in their `ended` field: the model reads those as ended there (each "
               "survived the decisions before its last and ended at the last: the survival reading) and gives "
               "P(capable) and P(success) over the lengths the episodes would have played, taken from episodes of "
               "the same task that reached their end. Where an episode's end depends on other agents (an arena, "
               "where the last one standing wins), the length a failed episode would have played is not "
               "identified and P(success) over natural lengths can exceed the logs' rate; `--ignore-ended` "
               "reads each log as the whole episode." if told else
               ", and a model that takes each episode's length as given reads those failures as short, easy "
               "episodes, so its success and P(timely) there come out too high. The logs do not say how their "
               "episodes ended: write the episode field `ended` (`failure` where the failure ended the episode, "
               "`horizon` where it reached its end) and the model reads them as they ended. " + NOT_ALLOWED))
    alike = structure[structure["latency_icc_lo"] > ICC_NOTABLE]
    if len(alike):
        r = alike.sort_values("latency_icc", ascending=False).iloc[0]
        out.append(
            f"Latencies of one episode are alike in {len(alike)} of {len(structure)} rows (intraclass correlation "
            f"up to {r['latency_icc']:.2f} [{r['latency_icc_lo']:.2f}, {r['latency_icc_hi']:.2f}] in {_row_name(r)}): "
            "a hard state or a hard item slows the agent for many decisions in a row"
            + (": the model lets an episode's decisions share a slowness (Methods), so its P(timely) has the "
               "misses cluster as the logs do." if slowness else
               ", and this fit treats its decisions as independent, so its intervals on P(timely) are too narrow "
               "there: refit with the default episode slowness (drop `--no-episode-effects`; "
               "`ModelSpec(episode_effects=True)`: an episode's decisions share a slowness; normal latency family, "
               "without item time intensities or latency by correctness). " + NOT_ALLOWED))
    return out


def _row_name(r) -> str:
    return " / ".join(str(r[c]) for c in ("model", "task_type", "clock") if c in r.index)


def success_misses(ppc, clock: str) -> dict:
    """Per model: the task types at ``clock`` whose observed success rate falls outside the posterior
    predictive interval, as text (``"snake: observed 40% vs 22–35%"``); models without a miss are absent."""
    if ppc is None or not len(ppc):
        return {}
    rows = ppc[(ppc["check"] == "success_rate") & (ppc["clock"] == clock) & ~ppc["covered"].astype(bool)]
    out: dict[str, list[str]] = {}
    for r in rows.itertuples():
        out.setdefault(r.model, []).append(f"{r.task_type}: observed {100 * r.observed:.0f}% vs "
                                           f"{100 * r.predicted_lo:.0f}–{100 * r.predicted_hi:.0f}%")
    return {k: "; ".join(v) for k, v in out.items()}


def methods_blocks(load_result, fit, ci_prob: float, seed, data_digest: str, ppc=None) -> list[dict]:
    ep, steps = load_result.episodes, load_result.steps
    clocks = ", ".join(f"{c} ({(ep['clock'] == c).sum()})" for c in ("paused", "wall", "step") if (ep["clock"] == c).any())
    text = (f"**Data.** {load_result.n_read} episode records read from {len(load_result.files)} file(s); "
            f"{load_result.n_accepted} accepted and {load_result.n_quarantined} quarantined (see `quarantine.jsonl`). "
            f"{len(ep)} episodes and {len(steps)} decisions of {ep['model'].nunique()} model(s) on "
            f"{ep['task_type'].nunique()} task type(s); episodes per clock: {clocks}. Data hash `{data_digest}`.")
    blocks = [{"kind": "h2", "text": "Methods"}, {"kind": "p", "text": text}]
    blocks += model_blocks(fit, ci_prob, seed)
    if fit is not None:
        blocks += check_blocks(ppc)
    versions = ", ".join(f"{k} {v}" for k, v in content.package_versions().items())
    blocks.append({"kind": "p", "text": f"**Software.** {versions}. Seed {seed}."})
    return blocks


def model_blocks(fit, ci_prob: float, seed) -> list[dict]:
    if fit is None:
        return [{"kind": "p", "text": (
            "**Model.** No model was fitted for this report; the numbers below are observed rates with "
            f"{plots.style.pct(ci_prob)} Wilson intervals, and the decomposition comes from the step labels.")}]
    d = fit.diagnostics or {}
    family = FAMILIES[fit.spec.latency_family].description
    parts = "".join(part.report_clause for name, part in PARTS.items() if name in fit.spec.parts)
    return [{"kind": "p", "text": (
        "**Model.** A hierarchical capability × timing model (PyMC): an episode succeeds when the model is "
        "capable (logit-scale model, task-type, model × task-type and item effects; see `docs/model.md` for which "
        "scales are fixed and which are estimated) and every "
        f"decision lands inside its validity window (latency {family} with model and task-type effects{parts}; a missed "
        "window is fatal with a per-task-type probability). Under the paused clock timing cannot fail, which "
        "identifies capability. Priors are weakly informative and do not depend on the data (the registry in "
        "`rtanalysis.model.priors`, documented in `docs/model.md`). Latency cells with fewer than 3 distinct "
        "latencies, repeated (a harness that logs the tick length) or with latencies piled up at the window close (a harness "
        "that cuts thinking off at the deadline and acts) are left out of the latency likelihood; their P(miss) "
        "comes from the logged misses and fallbacks, and the decomposition flags them "
        "(`latency_informative` = false)." + survival_text(fit) + slowness_text(fit, ci_prob) + loo_text(fit)
        + f" **Decision rule.** A model is named the highest of a task type and clock only where the posterior "
          f"probability that it is exceeds {HIGHEST_PROBABILITY:g} (`FitResult.highest_probability()`); pairwise "
          "comparisons report P(a > b) with the interval of the difference.")},
        {"kind": "p", "text": (
            f"**Sampler.** NUTS ({fit.sampler}), {fit.chains} chains × {fit.n_draws} draws after {fit.tune} tuning "
            f"steps{_accept_text(d)}, seed {fit.seed}; intervals are {plots.style.pct(ci_prob)} equal-tailed posterior intervals "
            f"around posterior means. **Diagnostics:** {plots.style.diagnostics_text(d) or '—'} — "
            f"{'passed' if d.get('ok', True) else '**failed**'}.{curve_text(fit)}")}] + sensitivity_blocks(fit)


def curve_text(fit) -> str:
    """What the figures' λ curves are computed from, where they use fewer than all the draws
    (``plots.CURVE_DRAWS``), and the Monte Carlo error that leaves them."""
    total = fit._params.n
    if total <= plots.CURVE_DRAWS:
        return ""
    n = fit._thinned(plots.CURVE_DRAWS).n
    ess = fit.curve_ess(plots.CURVE_DRAWS)
    error = (f"; among them the smallest bulk ESS of a timed row's p_success at λ = 1 is {ess:.0f}, so a curve's "
             f"mean is within about {100 / np.sqrt(ess):.0f}% of a posterior SD of its exact value (one Monte Carlo "
             "standard error)") if np.isfinite(ess) and ess > 0 else ""
    return (f" The λ curves of the figures are computed from {n} of the {total} draws (evenly thinned within each "
            f"chain){error}; the tables use all draws.")


def survival_text(fit) -> str:
    """How episodes that say their failure ended them were read, when the fit read any so."""
    d = getattr(fit, "data", None)
    if d is None or not getattr(d, "survival", False):
        return ""
    n = int(d.episodes["ended_failure"].sum())
    return (f" {n} episodes say their failure ended them (`ended` = failure): each is read as having survived the "
            "decisions before its last and ended at the last (the survival reading), and P(capable), P(success) "
            "and the counterfactuals are over the lengths the episodes would have played.")


def slowness_text(fit, ci_prob: float) -> str:
    """The episode slowness the fit estimated (its intraclass correlation of log-latency per task type), or
    that decisions were taken as independent."""
    post = fit.idata["posterior"] if getattr(fit, "idata", None) is not None else None
    if post is None or "latency_icc" not in post:
        return ""
    icc = post["latency_icc"]
    a = (1 - ci_prob) / 2
    lo, hi = icc.quantile([a, 1 - a], dim=("chain", "draw")).values
    mean = icc.mean(("chain", "draw")).values
    per = "; ".join(f"{k} {m:.2f} [{x:.2f}, {y:.2f}]" for k, m, x, y in
                    zip(icc.coords["task_type"].values, mean, lo, hi))
    return (" The decisions of an episode share a slowness (a random intercept on log-latency, so misses "
            f"cluster within episodes; P(timely) integrates it out): its share of the log-latency variance is {per}.")


def _accept_text(d: dict) -> str:
    accept = (d.get("retried") or {}).get("target_accept") or d.get("target_accept")
    low_rank = " with a low-rank mass matrix" if d.get("adaptation") == "low_rank" else ""
    return (f" at target acceptance {accept}" if accept else "") + low_rank


def loo_text(fit) -> str:
    """The latency family's and the structure's LOO choices, when the fit made them
    (``latency_family="auto"``, ``structure="auto"``)."""
    from ..model.choice import structure_choice_summary
    from ..model.compare import family_choice_summary

    loo = fit.loo_compare() if hasattr(fit, "loo_compare") else None
    text = "" if loo is None or not len(loo) else " " + family_choice_summary(loo)
    chosen = fit.structure_loo() if hasattr(fit, "structure_loo") else None
    return text + ("" if chosen is None else " " + structure_choice_summary(chosen))


def check_blocks(ppc) -> list[dict]:
    """The posterior predictive check families, and which are flagged with what they point at."""
    flags = family_flags(ppc)
    if not len(flags):
        return []
    flags = flags[flags["kind"] == "posterior"]
    intro = (f"**Model checks.** Posterior predictive checks (`FitResult.ppc()`) in {len(flags)} families "
             f"({', '.join(flags['family'].str.replace('_', ' '))}); a family is flagged when more of its cells are "
             "extreme (p < 0.025 or > 0.975) than chance gives (binomial at 5 %, `tables/ppc_flags.csv`): ")
    bad = flags[flags["flagged"]]
    if not len(bad):
        return [{"kind": "p", "text": intro + "none is flagged."}]
    items = [f"{r.family.replace('_', ' ')}: {r.extreme_rows} of {r.rows} cells extreme ({r.expected:.1f} expected, "
             f"p = {r.p_value:.2g}) — {r.advice}" for r in bad.itertuples()]
    text = (intro + f"{len(bad)} flagged. The data show something the model does not represent; intervals "
            "that rest on it may be too narrow (which misspecification each check catches, and what it does "
            "to the intervals: `docs/validation.md`).")
    return [{"kind": "p", "text": text}, {"kind": "list", "items": items}]


#: at most this many prior-sensitive rows are listed by name
MAX_SENSITIVE_LISTED = 12


def prior_sensitivity_of(fit) -> tuple[pd.DataFrame | None, str | None]:
    """(``fit.prior_sensitivity()``, None), (None, why it failed), or (None, None) without a fit."""
    if not hasattr(fit, "prior_sensitivity"):
        return None, None
    try:
        return fit.prior_sensitivity(), None
    except (ValueError, RuntimeError, KeyError) as e:  # a diagnostic, never a reason to lose the report
        return None, f"{type(e).__name__}: {e}"


def sensitivity_blocks(fit) -> list[dict]:
    """Power-scaling prior sensitivity of share_timing and p_timely: the flagged rows, or none."""
    ps, error = prior_sensitivity_of(fit)
    if ps is None and error is None:
        return []
    intro = ("**Prior sensitivity.** Power-scaling of the prior and of the likelihood (Kallioinen et al. 2024; "
             "`arviz_stats.psense`, threshold 0.05; `FitResult.prior_sensitivity()`) for share_timing and "
             "p_timely of every timed row: ")
    if error is not None:
        return [{"kind": "p", "text": intro + f"not computed ({error})."}]
    flagged = ps[ps["flag"]]
    if not len(flagged):
        return [{"kind": "p", "text": intro + "no row is prior-sensitive."}]
    items = [f"{r.model} × {r.task_type} ({r.clock}), {r.quantity}: prior {r.prior_sensitivity:.3f}, "
             f"likelihood {r.likelihood_sensitivity:.3f} — {r.diagnosis}"
             for r in flagged.head(MAX_SENSITIVE_LISTED).itertuples()]
    more = len(flagged) - len(items)
    n_draws = getattr(fit, "n_draws", 0) * getattr(fit, "chains", 0)
    text = (intro + f"{len(flagged)} of {len(ps)} values are flagged; their intervals lean on the priors "
            "(more data for these rows, or a prior that is stated and defended)"
            + (f"; {more} more in `tables/prior_sensitivity.csv`" if more > 0 else "")
            + f". From {n_draws} draws; the diagnostic's own Monte Carlo noise is about 0.01 at 4000 draws and "
            "0.025 at 1000 (`docs/user-guide/fit.md`), so a value just above 0.05 is a weak signal.")
    return [{"kind": "p", "text": text}, {"kind": "list", "items": items}]


def task_type_blocks(task_type: str, episodes: pd.DataFrame, metrics: dict, frames: dict,
                     ci_prob: float) -> list[dict]:
    ep = episodes[episodes["task_type"] == task_type]
    n_by_clock = ep.groupby("clock").size()
    blocks = [{"kind": "h2", "text": f"Task type: {task_type}"},
              {"kind": "p", "text": f"{len(ep)} episodes (" + ", ".join(f"{c}: {n}" for c, n in n_by_clock.items())
               + f") of {ep['model'].nunique()} models."}]
    dec = frames.get("decomposition")
    if dec is None:
        success = tables.success_table(metrics["success"])
        return blocks + [{"kind": "table", "frame": success[success["task_type"] == task_type].drop(
            columns=["task_type"]).reset_index(drop=True), "caption": f"Observed success, {task_type}, with "
                                                                       f"{plots.style.pct(ci_prob)} Wilson intervals."}]
    d = dec[dec["task_type"] == task_type]
    timed = d[d["clock"] != "paused"].sort_values("p_success", ascending=False)
    if len(timed):
        best = timed.iloc[0]
        most = timed.sort_values("share_timing", ascending=False).iloc[0]
        blocks.append({"kind": "p", "text": (
            highest_sentence(best, frames.get("highest"))
            + f" Largest timing share of failures: **{most['model']}**, "
            f"{content.pct_interval(most['share_timing'], most['share_timing_lo'], most['share_timing_hi'])}.")})
    table = d[[c for c in DECOMPOSITION_COLUMNS if c in d.columns]].sort_values(["clock", "p_success"],
                                                                                ascending=[True, False])
    return blocks + [{"kind": "table", "frame": table.reset_index(drop=True),
                      "caption": f"Posterior decomposition, {task_type} (means, {plots.style.pct(ci_prob)} intervals)."}]


#: the decision rule of every ranking in the report: a model is named the highest of its task type and
#: clock only where the posterior probability that it is exceeds this
HIGHEST_PROBABILITY = 0.9


def highest_sentence(best, highest: pd.DataFrame | None) -> str:
    """The row with the highest posterior mean success, named best only under the decision rule
    (:data:`HIGHEST_PROBABILITY`), with its probability of being the highest (``highest``:
    :meth:`~rtanalysis.FitResult.highest_probability`)."""
    at = (f"**{best['model']}** at {content.pct_interval(best['p_success'], best['p_success_lo'], best['p_success_hi'])}"
          f" ({best['clock']} clock")
    if highest is None or not len(highest):
        return f"Highest success: {at})."
    row = highest[(highest["model"] == best["model"]) & (highest["task_type"] == best["task_type"])
                  & (highest["clock"] == best["clock"])]
    p = float(row["p_highest"].iloc[0]) if len(row) else np.nan
    if p >= HIGHEST_PROBABILITY:
        return f"Highest success: {at}; posterior probability it is the highest {p:.2f})."
    return (f"No model's success is the highest with posterior probability ≥ {HIGHEST_PROBABILITY:g} (the rule "
            f"this report names a leader by); the highest posterior mean is {at}; probability it is the highest "
            f"{p:.2f}).")


#: figures shown with the headline, before anything else
LEAD_FIGURES = ("failure_decomposition",)


def figure_blocks(figure_paths: dict, many: bool, has_fit: bool, diag, ci_prob: float,
                  heading: str | None = "Figures") -> list[dict]:
    blocks = [{"kind": "h2", "text": heading}] if heading and figure_paths else []
    for name, path in figure_paths.items():
        needs_fit, title = plots.FIGURES[name]
        blocks.append({"kind": "figure", "title": title, "path": path,
                       "caption": content.caption(name, has_fit, many, diag, needs_fit, ci_prob)})
    return blocks


def table_blocks(table_frames: dict) -> list[dict]:
    blocks = [{"kind": "h2", "text": "Tables"},
              {"kind": "p", "text": "Every table is also written as CSV (full precision), Markdown and LaTeX "
                                    "(booktabs) under `tables/`."}]
    for name, (frame, cap) in table_frames.items():
        if len(frame) > MAX_INLINE_ROWS or (name == "decomposition" and len(frame) > 40):
            # too long to read inline; the decomposition is shown per task type above
            blocks.append({"kind": "p", "text": f"{cap} ({len(frame)} rows: `tables/{name}.csv`, `.md`, `.tex`.)"})
        else:
            blocks.append({"kind": "table", "frame": frame, "caption": cap})
    return blocks
