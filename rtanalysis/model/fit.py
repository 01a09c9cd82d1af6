"""``fit()``: aggregate the data, build the model its :class:`~.spec.ModelSpec` names, sample it
until the diagnostics gate passes (one retry), and return a :class:`~.result.FitResult`."""

from __future__ import annotations

import sys
import time
from dataclasses import replace

import numpy as np

from ..errors import UsageError
from ..metrics import DEFAULT_CI_PROB
from ..metrics.intervals import check_ci_prob
from .data import MIN_DISTINCT_LATENCIES, ModelData, aggregate
from .inputs import as_frames, data_hash
from .result import FitResult
from .sampler import sample_model
from .spec import AUTO, STRUCTURES, ModelSpec, structure_name

#: fit()'s default sampling: enough for the diagnostics gate on the example data
DEFAULT_DRAWS = 1000
DEFAULT_CHAINS = 4
#: the retry's target acceptance when the first attempt diverged (nutpie's default is 0.8)
RETRY_TARGET_ACCEPT = 0.95
#: below this many episodes the first attempt already takes smaller steps (``RETRY_TARGET_ACCEPT``) and
#: adapts a low-rank mass matrix (``SMALL_DATA_ADAPTATION``): weak data leave the hierarchical scales to
#: their priors, whose funnels diverge at nutpie's default 0.8, and pin an intercept plus a zero-sum
#: effect only along their sum, a ridge a diagonal mass matrix crawls along (the real fixtures of
#: 6–144 episodes: 3 of 11 first attempts failed the gate, 0 of 18 with both;
#: ``studies/real_fixtures_gate.py``); a fit that small costs
#: seconds either way
SMALL_DATA_EPISODES = 500
SMALL_DATA_ADAPTATION = "low_rank"


def fit(data, spec: ModelSpec | str | None = None, *, draws: int = DEFAULT_DRAWS, chains: int = DEFAULT_CHAINS,
        seed: int = 0, ci_prob: float = DEFAULT_CI_PROB, tune: int | str | None = "auto",
        progress: bool = True) -> FitResult:
    """Fit the hierarchical capability × timing model.

    Parameters
    ----------
    data
        A :class:`~rtanalysis.LoadResult`, ``(episodes, steps)`` frames, or path(s) (loaded with
        :func:`rtanalysis.load`).
    spec
        The model: a :class:`~.spec.ModelSpec` (latency family and structure), a structure name
        (``"item_latency"``, ``"auto"``, ...) or ``None``, the default model (normal latency, base
        structure). With ``structure="auto"`` every structure the data can tell apart is fitted and
        the simplest that PSIS-LOO on the episodes' outcomes, the timed decisions' latencies and the
        silent decisions cannot beat is returned, with the comparison
        (:meth:`~rtanalysis.FitResult.structure_loo`). With ``latency_family="auto"`` the family is chosen
        first by PSIS-LOO on each latency cell's order statistics (:meth:`~rtanalysis.FitResult.loo_compare`).
    draws, chains
        Posterior draws per chain and chains.
    seed
        Same data and seed give identical tables.
    ci_prob
        Probability of every interval the result reports (by default; each table takes its own).
    tune
        ``"auto"`` (the default, as in the CLI): as many tuning steps as draws, then, if the
        diagnostics gate fails, once more with 3× the tuning and 2× the draws (recorded in
        ``diagnostics["retried"]``); a number (or ``None`` = draws) fixes the tuning and never retries
        (simulation studies, where the procedure must not depend on the draws).
    progress
        Progress messages on stderr.
    """
    return fit_for_benchmarks(data, spec, draws=draws, chains=chains, seed=seed, ci_prob=ci_prob, tune=tune,
                              progress=progress)


def fit_for_benchmarks(data, spec: ModelSpec | str | None = None, *, sampler: str = "nutpie", per_row: bool = False,
                       draws: int = DEFAULT_DRAWS, chains: int = DEFAULT_CHAINS, seed: int = 0,
                       ci_prob: float = DEFAULT_CI_PROB, tune: int | str | None = "auto",
                       progress: bool = True) -> FitResult:
    """:func:`fit` with the options only benchmarks need: ``sampler`` (``nutpie``, the default;
    ``pymc``; ``numpyro``, which needs the ``bench`` extra) and ``per_row`` (the same likelihood
    without aggregation, one term per decision and episode: a much slower baseline)."""
    spec = ModelSpec.coerce(spec)
    check_ci_prob(ci_prob)
    if draws < 1 or chains < 1:
        raise UsageError(f"draws and chains must be >= 1, got draws={draws}, chains={chains}")
    if not (tune is None or tune == "auto" or (isinstance(tune, (int, np.integer)) and tune >= 0)):
        raise UsageError(f"tune must be a number of steps >= 0, None or 'auto', got {tune!r}")
    run = dict(sampler=sampler, per_row=per_row, draws=draws, chains=chains, seed=seed, ci_prob=ci_prob, tune=tune,
               progress=progress)
    if spec.structure == AUTO:
        return _fit_auto_structure(data, spec, run)
    episodes, steps = as_frames(data)
    # hashed first: its per-decision temporaries then add to the tables alone, not to the tables, the
    # aggregates and the posterior (the fit's peak memory at 10^6 episodes was while hashing at the end)
    digest = data_hash(episodes, steps)
    d = aggregate(episodes, steps, per_row=per_row, clock_effects=spec.clock_effects,
                  latency_by_correctness=spec.latency_by_correctness, read_ended=spec.read_ended)
    n_tune = draws if tune in (None, "auto") else int(tune)
    t0 = time.time()
    loo, notes = None, []
    if spec.latency_family == AUTO:
        from .compare import choose_family, latency_loo
        from .families import NAMES

        if progress:
            print(f"choosing the latency family ({', '.join(NAMES)}) by LOO on log-latency order statistics...",
                  file=sys.stderr)
        loo = latency_loo(d, draws=min(draws, 500), chains=max(2, chains), seed=seed, sampler=sampler)
        spec = replace(spec, latency_family=choose_family(loo))
        if not len(loo):
            notes.append("latency_family='auto': no latency cell has spread (tick lengths or caps logged every "
                         "time), so PSIS-LOO had nothing to compare the families on; the normal family was kept")
    from .build import build_model, has_item_latency_data

    if spec.item_latency and not has_item_latency_data(d):  # fitted without, and said so
        spec = replace(spec, structure=structure_name(spec.parts - {"item_latency"}))
        notes.append("item_latency was asked for, but no item has informative latencies (task ids and "
                     "latencies that vary): fitted without item time intensities")
    model = build_model(d, spec.latency_family, item_latency=spec.item_latency, episode_latency=spec.episode_latency)
    if progress:
        print(f"setting up the model ({spec.latency_family} latency; compiled once per machine, cached afterwards)...",
              file=sys.stderr)
    small = len(d.episodes) < SMALL_DATA_EPISODES
    first_accept = RETRY_TARGET_ACCEPT if small else None
    adaptation = SMALL_DATA_ADAPTATION if small and sampler == "nutpie" else None
    reuse: dict = {}  # the retry samples the same model: set up once
    idata, diag, table = _sample_diagnosed(model, draws, n_tune, chains, seed, sampler, progress, first_accept,
                                           adaptation, reuse)
    if tune == "auto" and not diag["ok"]:
        first = {k: diag[k] for k in ("max_rhat", "min_ess_bulk", "min_ess_tail", "n_divergent", "failed_params")}
        asked = {"draws": draws, "tune": n_tune}
        draws, n_tune = 2 * draws, 3 * n_tune
        # divergences mean a step too large for the posterior's curvature: a higher target
        # acceptance (smaller steps) is the standard remedy; R-hat/ESS alone need only more tuning
        accept = RETRY_TARGET_ACCEPT if first["n_divergent"] or first_accept else None
        if progress:
            print(f"diagnostics failed ({diag['advice'].splitlines()[0] if diag['advice'] else ''}); retrying once "
                  f"with tune={n_tune}, draws={draws}" + (f", target_accept={accept}" if accept else "") + "...",
                  file=sys.stderr)
        idata, diag, table = _sample_diagnosed(model, draws, n_tune, chains, seed, sampler, progress, accept,
                                               adaptation, reuse)
        diag["retried"] = {"first": first, "tune": n_tune, "draws": draws, "asked": asked, "target_accept": accept}
    diag["sampling_seconds"] = round(time.time() - t0, 2)
    diag.setdefault("target_accept", first_accept)
    diag.setdefault("adaptation", adaptation or "diag")
    diag.update(_data_notes(d))
    diag["notes"] += _clock_effect_notes(d) + _correctness_notes(d) + notes
    return FitResult(idata=idata, data=d, diagnostics=diag, seed=seed, ci_prob=ci_prob, data_hash=digest, spec=spec,
                     n_draws=draws, chains=chains, tune=n_tune, sampler=sampler, _diag_table=table, _loo=loo,
                     episodes=episodes, steps=steps)


def _fit_auto_structure(data, spec: ModelSpec, run: dict) -> FitResult:
    """:func:`fit` with ``structure="auto"``: every applicable structure fitted, the chosen one returned."""
    from .choice import structure_choice_summary

    table, fits = compare_structures(data, spec.latency_family, ended=spec.ended, **run)
    res = fits[str(table.loc[table["chosen"], "structure"].iloc[0])]
    res._structure_loo = table
    if run["progress"]:
        print(structure_choice_summary(table), file=sys.stderr)
    return res


def compare_structures(data, latency_family: str = "normal", structures=None, ended: str = "read", **run):
    """Fit every structure of ``structures`` (default: :func:`.choice.applicable_structures`) to
    ``data`` with the latency family ``latency_family`` and :func:`fit_for_benchmarks`'s options
    ``run`` (``ended``: :class:`~rtanalysis.model.spec.ModelSpec`'s), and compare them by PSIS-LOO on the episodes' outcomes, the timed decisions' latencies
    and the silent decisions. Returns (the table of :func:`.choice.structure_table`, {name: FitResult})."""
    from .choice import applicable_structures, structure_table

    episodes, steps = as_frames(data)
    if structures is None:
        structures = applicable_structures(aggregate(episodes, steps, read_ended=ended == "read"), latency_family)
    unknown = [s for s in structures if s not in STRUCTURES]
    if unknown:
        raise UsageError(f"unknown structure(s) {unknown}; choose from {', '.join(STRUCTURES)}")
    fits = {}
    for name in (s for s in STRUCTURES if s in structures):
        if run.get("progress", True):
            print(f"structure {name}: fitting...", file=sys.stderr)
        fits[name] = fit_for_benchmarks((episodes, steps), ModelSpec(latency_family, name, ended), **run)
    return structure_table(fits), fits


def _correctness_notes(d: ModelData) -> list[str]:
    """With latency by correctness: the cells whose wrong-decision shift rests on the prior (no wrong or
    no correct labelled decision)."""
    if not d.latency_by_correctness:
        return []
    L = d.latency
    lacking = int(((L["q_wrong"] <= 0) | (L["q_wrong"] >= 1) | (L["n"] == 0)).sum())
    if not lacking:
        return []
    return [f"latency by correctness: {lacking} of {len(L)} latency cell(s) have no wrong or no correct labelled "
            "decision (or no labels): their wrong-minus-correct latency shift is the prior's, and their latency is "
            "taken as that of all their decisions"]


def _clock_effect_notes(d: ModelData) -> list[str]:
    """With clock effects: the models whose κ_m the data cannot identify (no paused or no timed episodes)."""
    if not d.clock_effects:
        return []
    e = d.episodes
    has = e.groupby("m")["timed"].agg(["any", "all"])
    lacking = [d.models[m] for m, r in has.iterrows() if r["all"] or not r["any"]]
    if not lacking:
        return []
    return [f"clock effects: {len(lacking)} model(s) ({', '.join(lacking[:5])}{', ...' if len(lacking) > 5 else ''}) "
            "were not run under both the paused and a timed clock: their timed-minus-paused capability effect is "
            "the prior's, so their timed capability and timing split rest on it (wide intervals); run them paused too"]


def _sample_diagnosed(model, draws, tune, chains, seed, sampler, progress, target_accept=None, adaptation=None,
                      reuse=None):
    """(idata, diagnostics with compile/sampling seconds, per-parameter table); ``reuse``: :func:`.sampler.sample_model`'s."""
    from .build import MAIN_PARAMS
    from .diagnostics import diagnose

    timings: dict = {}
    idata = sample_model(model, draws, tune, chains, seed, sampler, progress, timings, target_accept, adaptation,
                         reuse)
    names = [v for v in MAIN_PARAMS if v in idata["posterior"]]
    diag, table = diagnose(idata, names)
    diag.update(timings)
    return idata, diag, table


def _no_paused_note(d: ModelData) -> str:
    """What is identified without paused runs, and from which assumption."""
    n = len(d.episodes)
    labelled = int(d.episodes["labelled"].sum()) if "labelled" in d.episodes else 0
    implied = ("P(capable) is what the success of episodes without a logged miss implies, assuming that an "
               "agent's content does not depend on whether it was late")
    if labelled == n:
        how = ("every episode carries content labels (`correct_at_obs`), which show capability under time pressure "
               "directly")
    elif labelled:
        how = (f"{labelled} of {n} episodes carry content labels (`correct_at_obs`), which show capability under "
               f"time pressure directly; for the others {implied}")
    else:
        how = f"no episode carries content labels (`correct_at_obs`), so {implied}"
    return ("no paused runs: capability is never seen without time pressure; " + how
            + ". Read P(capable) as capability under the timed clock: an agent that would answer better with "
              "the environment paused (thinking longer) is counted as less capable, not less timely; run some "
              "episodes paused to tell the two apart")


def _survival_note(d: ModelData) -> str:
    """How episodes that say how they ended are read (the survival reading), and what it assumes."""
    e = d.episodes
    cut = e["ended_failure"].to_numpy(bool)
    kept = int(e["no_donor"].sum()) if "no_donor" in e else 0
    text = (f"{int(cut.sum())} of {len(e)} episodes say their failure ended them (`ended` = failure): each is "
            "read as having survived the decisions before its last and ended at the last (the survival "
            "reading), so its log's length is not taken for the episode's; P(capable), P(success) and the "
            "counterfactuals are over the lengths the episodes would have played, each such episode taking the "
            "length and windows of an episode of the same task (else task type) that reached its end and logged "
            "at least as many decisions")
    if kept:
        text += (f"; {kept} found no such episode and keep their logged length (too short: their P(capable) is "
                 "too high)")
    return text


def _data_notes(d: ModelData) -> dict:
    """What the data can and cannot separate, for the report: ``timing_separable`` (some episode ran
    under a timed clock), ``latency_uninformative_cells`` and plain-language ``notes``."""
    notes = []
    timed = bool(d.episodes["timed"].any())
    if not timed:
        notes.append("no timed clock: timing cannot be separated (every episode ran under the paused clock); "
                     "p_timely = 1 and share_timing = 0 by definition, only capability is estimated")
    if timed and d.episodes["timed"].all():
        notes.append(_no_paused_note(d))
    if d.survival:
        notes.append(_survival_note(d))
    flat = d.latency[~d.latency["informative"]] if "informative" in d.latency else d.latency.iloc[:0]
    # not capped: too few distinct values, repeated (or none at all)
    few, nd, n = flat["n_distinct"] < MIN_DISTINCT_LATENCIES, flat["n_distinct"], flat["n"]
    constant = flat[few & ((nd < n) | (n == 0))] if len(flat) else flat
    if len(constant):
        notes.append(f"{len(constant)} latency cell(s) have fewer than 3 distinct latencies, repeated (e.g. the "
                     "tick length logged for every decision): their P(miss) comes from the logged misses/fallbacks, "
                     "flagged latency_informative = False in the decomposition; their latency counterfactuals (λ, "
                     "as:<model>) keep that logged rate, so they say nothing about a change of latency")
    if len(flat) > len(constant):
        notes.append(f"{len(flat) - len(constant)} latency cell(s) have latencies piled up at the window close "
                     "(the harness cuts thinking off at the deadline and acts, e.g. a token budget): a latency "
                     "at the close is not a miss, so their P(miss) comes from the logged misses/fallbacks, "
                     "flagged latency_informative = False in the decomposition; their latency counterfactuals (λ, "
                     "as:<model>) keep that logged rate, so they say nothing about a change of latency")
    return {"timing_separable": timed, "latency_uninformative_cells": int(len(flat)), "notes": notes}


