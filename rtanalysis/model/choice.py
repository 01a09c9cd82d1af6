"""Choosing the model's structure by PSIS-LOO on the episodes' outcomes and the decisions' latencies.

The structures (:data:`.spec.STRUCTURES`, simplest first, made of the parts of :data:`.spec.PARTS`) are the
base model; item time intensities paired with item difficulty (``item_latency``); a
timed-minus-paused capability effect per model, with latency fitted to timed decisions only
(``clock_effects``); both; for labelled data, a log-latency shift of content-wrong decisions per model ×
task type (``latency_by_correctness``), alone or with clock effects. Each is fitted to the same data and scored on the observations they all
model, one pointwise log-likelihood term per observation:

* **each episode's outcome** (:func:`outcome_log_likelihood`): unlabelled, log P(y | P(capable),
  misses M, fatality), p = P(capable)·(1 − f_k)^M (the leak ε after a miss in an always-fatal type);
  labelled, log P(capable) + log P(y | capable, M) when capable, log(1 − P(capable)) when not. These
  sum to the model's ``success`` and ``capable_labelled`` potentials given the always-fatal
  indicators (a test checks it). The potentials marginalise each task type's indicator, which ties a
  type's episodes together; given the parameters and the indicators the episodes are independent, so
  PSIS-LOO runs on the augmented posterior (Vehtari, Gelman & Gabry 2017), with the indicator averaged
  out of each importance ratio (Rao-Blackwellised: a drawn indicator's noise alone gave Pareto k > 0.7).
  Episodes alike in model, task type, item, length, clock, misses and outcome share one term: PSIS runs
  once per such class;
* **each timed decision's log-latency** (:func:`latency_log_likelihood`, normal latency family): log
  N(x | μ + τ_i + δ_mk·w, σ) (w = 1 for a content-wrong decision, 0 for a correct one, the cell's wrong
  share for an unlabelled one; δ = 0 without latency by correctness) for acted decisions under a timed clock in informative cells — the decisions every
  structure's latency likelihood holds (``clock_effects`` leaves paused latencies out; the others'
  posteriors still learn from them, which a leave-one-out comparison allows). These sum to the
  ``latency_obs`` (+ ``latency_item_obs``, ``latency_wrong_obs``) potentials on those decisions (a test checks it).

* **each silent decision** (:func:`silent_log_likelihood`, any latency family): under a timed
  clock with a window, no action: log[π_m + (1 − π_m)·S(g | μ + τ_i, σ)] when the model has a
  no-answer mode, log S(g | μ + τ_i, σ) when not (g its censor point, S the family's survival
  function) — the censored half of the ``silence_hurdle`` potential. Item time intensities move S, so
  silences tell the structures apart too. The mode indicator ties a model's silences together as the
  always-fatal one ties a type's episodes; it is averaged out of the importance ratio in the same
  way, with P(mode | θ, data) (:func:`.derived.silence_mode_probability`). Decisions alike in cell,
  item and censor point share one PSIS run. The acted decisions' factor 1 − π_m under the mode is
  left out: it is a function of π_m alone, the same in every structure.

Under episode slowness (the default) a decision's latency and silence terms are its marginal ones (σ the
total SD, the slowness integrated out): each decision predicted without its episode's others, the same
form whichever structure is fitted, so structures with and without the slowness compare on equal terms.

With the t or mixture family the acted latencies are not compared (their likelihood is on each cell's
order statistics, not one term per decision; the latency family itself is chosen first, on the order
statistics, by :mod:`.compare`): the outcomes and the silences are.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
from scipy.special import expit, log_expit

from .compare import (MAX_RELIABLE_K, MIN_ELPD_DIFF, SE_MULTIPLIER, choice_sentence, choose_simplest, loo_pointwise,
                      weighted_se)
from .data import ModelData
from .derived import ParamDraws
from .families import at_model
from .priors import LEAK
from .spec import STRUCTURES, parts_of

LOG_2PI = float(np.log(2 * np.pi))
#: the columns of :func:`structure_table`'s table (:func:`~rtanalysis.model.fit.compare_structures`)
STRUCTURE_LOO_COLUMNS = ["structure", "elpd_loo", "se", "p_loo", "elpd_outcomes", "elpd_latency", "elpd_silent",
                         "max_pareto_k", "n_high_k", "n_episodes", "n_decisions", "n_silent", "elpd_diff", "se_diff",
                         "diagnostics_ok", "chosen"]
#: the columns of ``ModelData.censored`` that fix a silent decision's term (whatever the structure)
SILENT_COLUMNS = ["m", "k", "u", "i", "log_close"]
#: the episode columns that fix an episode's outcome term (whatever the structure)
CLASS_COLUMNS = ["m", "k", "i", "x", "timed", "M", "labelled", "capable", "y"]
#: ... and, where episodes say how they ended, what the survival reading needs (``data._episode_ends``)
SURVIVAL_COLUMNS = ["survival", "ended_failure", "xp", "hp", "miss_last", "right_last"]
#: draws PSIS-LOO uses at most (evenly spaced): its Monte Carlo error is small by 1,000 draws (Vehtari
#: et al. 2024) and its cost is draws × observations, observations being every timed decision
LOO_MAX_DRAWS = 1000
#: observations per block of a log-likelihood matrix (draws × observations): bounds its memory
CLASS_BLOCK = 2048


def loo_draws(n: int) -> np.ndarray:
    """The draws PSIS-LOO uses: at most :data:`LOO_MAX_DRAWS`, evenly spaced over the chains' draws."""
    return np.unique(np.linspace(0, n - 1, min(n, LOO_MAX_DRAWS)).round().astype(np.int64))


def episode_classes(d: ModelData) -> tuple[pd.DataFrame, np.ndarray]:
    """(classes, each episode's class): the distinct :data:`CLASS_COLUMNS` of ``d.episodes`` with
    their count ``n``. Not capable unlabelled episodes are unknown: ``capable`` only counts where labelled."""
    ends = [c for c in SURVIVAL_COLUMNS if c in d.episodes]
    e = d.episodes[CLASS_COLUMNS + ends].copy()
    if "survival" in e:  # the survival reading: the episode's own success term, labels aside (as in the model)
        e["labelled"] = e["labelled"] & ~e["survival"]
    e["capable"] = e["capable"] & e["labelled"]
    codes, uniques = pd.MultiIndex.from_frame(e).factorize()
    classes = uniques.to_frame(index=False, name=list(e.columns))
    classes["n"] = np.bincount(codes, minlength=len(classes))
    return classes, codes.astype(np.int64)


def outcome_log_likelihood(p: ParamDraws, d: ModelData, classes: pd.DataFrame, p_always=None) -> np.ndarray:
    """(draws, classes) log-likelihood of one episode of each class (module docstring), at the draws
    ``p``. Without ``p_always``: given ``p.fatality`` (1 where a type's always-fatal indicator is
    drawn on). With ``p_always`` (draws, task types), P(always fatal | parameters, data), the
    indicator is averaged out of the importance ratio (Rao-Blackwellised): ``p.fatality`` is the
    graded fatality and the term is −log(π/p_fatal + (1 − π)/p_graded), whose posterior mean of
    exp(−term) is the same leave-one-out ratio without the noise of a drawn indicator (that noise,
    a few draws in the other branch, made Pareto k > 0.7 for most failures after a miss)."""
    if p_always is not None:
        graded = outcome_log_likelihood(p, d, classes)
        fatal = outcome_log_likelihood(replace(p, fatality=np.ones_like(p.fatality)), d, classes)
        pi = np.clip(p_always[:, classes["k"].to_numpy(np.int64)], 0.0, 1.0)
        with np.errstate(divide="ignore"):
            return -np.logaddexp(np.log(pi) - fatal, np.log1p(-pi) - graded)
    m, k, i = (classes[c].to_numpy(np.int64) for c in ("m", "k", "i"))
    x, M = classes["x"].to_numpy(float), classes["M"].to_numpy(float)
    timed = classes["timed"].to_numpy(float)
    labelled, capable, y = (classes[c].to_numpy(bool) for c in ("labelled", "capable", "y"))
    # item -1 (no task id) takes the appended 0 of p.item, as in the model
    logit = p.eta[:, m, k] + p.item[:, i] + d.type_offset[k]
    if p.timed_cap is not None:
        logit = logit + p.timed_cap[:, m] * timed
    log_sig = log_expit(logit)
    expo = np.exp(d.type_log_g[k] + p.length[:, k] * x)
    log_cap = np.minimum(expo * log_sig, -1e-12)
    f = p.fatality[:, k]
    always = f >= 1.0
    with np.errstate(divide="ignore"):
        graded = M * np.log1p(-np.minimum(f, 1.0 - 1e-16))
    ended = _ended_by_failure(p, d, classes, k, log_sig, log_cap, f, always)
    # unlabelled: success given the misses; an always-fatal type lets a miss through only by the leak
    log_p = np.minimum(log_cap + np.where(always, np.where(M > 0, np.log(LEAK), 0.0), graded), -1e-12)
    unl = np.where(y, log_p, _log1mexp(log_p))
    # labelled: capable or not, and a capable episode's success given its misses
    keep = np.where(always, (M == 0).astype(float), np.exp(graded))
    p_ok = LEAK + (1 - 2 * LEAK) * keep
    lab = np.where(capable, log_cap + np.where(y, np.log(p_ok), np.log1p(-p_ok)), _log1mexp(log_cap))
    out = np.where(labelled, lab, unl)
    return out if ended is None else np.where(classes["ended_failure"].to_numpy(bool), ended, out)


def _ended_by_failure(p: ParamDraws, d: ModelData, classes, k, log_sig, log_cap, f, always):
    """(draws, classes) log-likelihood of an episode that its failure ended, as :func:`.build._ended_by_failure`
    writes it (None where no class is one): the decisions before the last survived, the last did not."""
    if "ended_failure" not in classes or not classes["ended_failure"].any():
        return None
    hp = classes["hp"].to_numpy(float)
    ml = classes["miss_last"].to_numpy(float)
    timing_seen = (ml * classes["right_last"].to_numpy(float)) > 0  # labelled right and missed: died of timing
    Mp = classes["M"].to_numpy(float) - ml
    log_prev = hp * np.exp(d.type_log_g[k] + p.length[:, k] * classes["xp"].to_numpy(float)) * log_sig
    log_q = np.minimum(log_cap - log_prev, -1e-12)
    with np.errstate(divide="ignore"):
        log1m_f = np.log1p(-np.minimum(f, 1.0 - 1e-16))
        survived = np.where(always, np.where(Mp > 0, np.log(LEAK), 0.0), Mp * log1m_f)
        died = np.where(timing_seen, log_q + np.log(f),
                        _log1mexp(np.minimum(log_q + ml * np.where(always, -1000.0, log1m_f), -1e-12)))
    return log_prev + survived + died


def _log1mexp(a: np.ndarray) -> np.ndarray:
    """log(1 − exp(a)) for a < 0, accurate at both ends."""
    return np.where(a > -np.log(2), np.log(-np.expm1(a)), np.log1p(-np.exp(a)))


def outcome_loo(posterior, p: ParamDraws, d: ModelData) -> pd.DataFrame:
    """Per episode class (:func:`episode_classes`): its columns, ``n``, and one episode's ``elpd_loo``,
    ``lpd`` (log pointwise predictive density in sample) and PSIS ``pareto_k``; ``p``: the fit's
    draws of ``posterior``, whose graded fatality and P(always fatal) replace the drawn indicator
    (:func:`outcome_log_likelihood`)."""
    from .derived import _flat

    classes, _ = episode_classes(d)
    keep = loo_draws(p.n)
    graded = replace(p, fatality=_flat(posterior, "fatality")).take(keep)
    p_always = expit(_flat(posterior, "always_fatal_log_odds"))[keep]
    elpd, lpd, khat = _blocked_loo(lambda rows: outcome_log_likelihood(graded, d, classes.iloc[rows], p_always),
                                   len(classes))
    return classes.assign(elpd_loo=elpd, lpd=lpd, pareto_k=khat)


def timed_latencies(episodes: pd.DataFrame, steps: pd.DataFrame) -> pd.DataFrame:
    """The decisions whose log-latency the structures are compared on: acted, under a timed clock, in
    latency cells that are informative among timed decisions (what every structure's latency
    likelihood holds; ``clock_effects`` leaves the paused ones out). Columns m, k, u, i (codes as in
    :func:`.data.aggregate`), x (log-latency, floored as there) and w (1 content-wrong, 0 correct, the
    cell's wrong share without a label: :func:`.data.wrong_weights`)."""
    from .data import _episode_frame, _log_latencies, _step_arrays, aggregate, cell_index_of, cell_rows, wrong_weights

    ep = episodes.reset_index(drop=True)
    e, levels = _episode_frame(ep)
    S = _step_arrays(ep, steps, e)
    obs = _log_latencies(S, len(levels["units"]), timed_only=True)
    cells = aggregate(episodes, steps, clock_effects=True).latency
    sel = S["acted"] & S["timed"]  # the decisions of ``obs``, in order
    obs["w"] = wrong_weights(S["wrong"][sel], S["unl"][sel], cell_rows(cell_index_of(cells), obs), len(cells))[0]
    informative = cells.loc[cells["informative"], ["m", "k", "u"]] if "informative" in cells else cells[["m", "k", "u"]]
    return obs.merge(informative, on=["m", "k", "u"])[["m", "k", "u", "i", "x", "w"]].reset_index(drop=True)


def latency_log_likelihood(p: ParamDraws, obs: pd.DataFrame) -> np.ndarray:
    """(draws, decisions) log density of each decision's log-latency, log N(x | μ + τ_i + δ_mk·w, σ) (the
    normal family; τ_i = 0 without item time intensities, δ = 0 without latency by correctness): the
    per-decision terms whose sum is the model's ``latency_obs`` (+ ``latency_item_obs``,
    ``latency_wrong_obs``) potential on these decisions."""
    u, m, k, i = (obs[c].to_numpy(np.int64) for c in ("u", "m", "k", "i"))
    mu = p.mu[:, u, m, k] + (0.0 if p.item_lat is None else p.item_lat[:, i])
    if p.wrong_lat is not None:
        mu = mu + p.wrong_lat[:, m, k] * obs["w"].to_numpy(float)
    z = (obs["x"].to_numpy(float) - mu) / p.sigma[:, u, m, k]
    return -np.log(p.sigma[:, u, m, k]) - 0.5 * LOG_2PI - 0.5 * z**2


def silent_log_likelihood(p: ParamDraws, groups: pd.DataFrame, pi: np.ndarray, p_mode: np.ndarray,
                          d: ModelData | None = None) -> np.ndarray:
    """(draws, groups) log-likelihood of one silent decision of each row of ``groups`` (columns
    :data:`SILENT_COLUMNS`: cell, item, log censor point) at the draws ``p`` (its μ, σ, item time
    intensities and latency family), with the mode indicator averaged out of the importance ratio:
    ``pi`` (draws, models) the no-answer probabilities π_m as sampled (not zeroed by a drawn
    indicator), ``p_mode`` (draws, models) P(mode | θ, data). With ``p_mode`` 1 (0) it is the term
    with (without) the mode, log[π + (1 − π)·S(g)] (log S(g)). With latency by correctness S(g) is the
    cell's mixture of correct and wrong decisions (``d``'s wrong shares; ``groups`` then has ``cell``)."""
    from .derived import censored_log_sf

    u, m, k, i = (groups[c].to_numpy(np.int64) for c in ("u", "m", "k", "i"))
    fam = p.family
    cells = groups["cell"].to_numpy(np.int64) if p.wrong_lat is not None else None
    log_s = censored_log_sf(fam, groups["log_close"].to_numpy(float)[None, :], p.mu[:, u, m, k] + p.item_shift(i),
                            p.sigma[:, u, m, k], at_model(fam, p.shape, m), d, cells, k, m, p.wrong_lat)
    with np.errstate(divide="ignore"):
        with_mode = np.logaddexp(np.log(pi[:, m]), np.log1p(-pi[:, m]) + log_s)
        q = np.clip(p_mode[:, m], 0.0, 1.0)
        return -np.logaddexp(np.log(q) - with_mode, np.log1p(-q) - log_s)


def silent_loo(posterior, p: ParamDraws, d: ModelData) -> pd.DataFrame:
    """Per group of silent decisions (``d.censored``: :data:`SILENT_COLUMNS` and ``count``): one
    decision's ``elpd_loo``, ``lpd`` and PSIS ``pareto_k`` (:func:`silent_log_likelihood`); ``p``: the
    fit's draws of ``posterior``. A fit without the hurdle's parameters has no mode (π = 0)."""
    from .derived import _flat, silence_mode_probability

    groups = d.censored[SILENT_COLUMNS + ["cell", "count"]].reset_index(drop=True)
    keep = loo_draws(p.n)
    q = p.take(keep)
    pi, prevalence = _flat(posterior, "silence"), _flat(posterior, "silence_prevalence")
    if pi is None or prevalence is None:
        pi = p_mode = np.zeros((len(keep), len(d.models)))
    else:
        pi, prevalence = pi[keep], prevalence[keep]
        p_mode = silence_mode_probability(q.mu, q.sigma, q.family, q.shape, pi, prevalence, d, q.item_lat,
                                          q.wrong_lat, q.latency_icc)
    elpd, lpd, khat = _blocked_loo(lambda rows: silent_log_likelihood(q, groups.iloc[rows], pi, p_mode, d),
                                   len(groups))
    return groups.assign(elpd_loo=elpd, lpd=lpd, pareto_k=khat)


def _blocked_loo(log_lik, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(elpd_loo, lpd, Pareto k) of ``n`` observations whose (draws, block) log-likelihood
    ``log_lik(slice)`` gives, :data:`CLASS_BLOCK` columns at a time (bounded memory)."""
    parts = [loo_pointwise(log_lik(slice(s, s + CLASS_BLOCK))) for s in range(0, n, CLASS_BLOCK)]
    return tuple(np.concatenate([part[j] for part in parts]) if parts else np.zeros(0) for j in range(3))


def loo_summary(elpd: np.ndarray, lpd: np.ndarray, khat: np.ndarray) -> dict:
    """elpd_loo, its se, p_loo, the largest Pareto k and how many exceed :data:`.compare.MAX_RELIABLE_K`,
    over observations (one entry each)."""
    return dict(elpd_loo=float(elpd.sum()), se=weighted_se(np.ones(len(elpd)), elpd), p_loo=float((lpd - elpd).sum()),
                max_pareto_k=float(khat.max()) if len(khat) else np.nan, n_high_k=int((khat > MAX_RELIABLE_K).sum()))


def applicable_structures(d: ModelData, latency_family: str = "normal") -> list[str]:
    """The structures ``d`` can tell apart: item time intensities need items with informative
    latencies and the normal family; clock effects need a model run both paused and timed; latency by
    correctness needs the normal family and labelled episodes both with and without a wrong decision."""
    from .build import has_item_latency_data

    e = d.episodes
    both_clocks = bool(e.groupby("m")["timed"].agg(lambda s: s.any() and not s.all()).any())
    items = latency_family == "normal" and has_item_latency_data(d)
    labelled, capable = e["labelled"].to_numpy(bool), e["capable"].to_numpy(bool)
    labels = latency_family == "normal" and bool((labelled & capable).any() and (labelled & ~capable).any())
    possible = {"item_latency": items, "clock_effects": both_clocks, "latency_by_correctness": labels}
    return [name for name in STRUCTURES if all(possible[part] for part in parts_of(name))]


def structure_table(fits: dict) -> pd.DataFrame:
    """One row per fitted structure (``fits``: name -> FitResult on the same data, in
    :data:`~rtanalysis.model.spec.STRUCTURES` order): :func:`loo_summary` over the episodes' outcomes and,
    when every fit has the normal latency family, the timed decisions' log-latencies
    (:func:`timed_latencies`), with each part's elpd; elpd_diff and se_diff (paired over observations) against
    the best; the fit's ``diagnostics_ok`` and ``chosen`` (:func:`choose_structure`)."""
    first = next(iter(fits.values()))
    normal = all(res.spec.latency_family == "normal" for res in fits.values())
    obs = timed_latencies(first.episodes, first.steps) if normal else None
    silent_groups = first.data.censored[SILENT_COLUMNS].reset_index(drop=True)
    rows, pointwise = [], {}
    for name, res in fits.items():
        t = res.outcome_loo()
        of = episode_classes(res.data)[1]
        parts = {"outcomes": tuple(t[c].to_numpy()[of] for c in ("elpd_loo", "lpd", "pareto_k"))}
        if obs is not None:
            p = res._params.take(loo_draws(res._params.n))
            parts["latency"] = _blocked_loo(lambda cols: latency_log_likelihood(p, obs.iloc[cols]), len(obs))
        silent = res.silent_loo()
        if not silent[SILENT_COLUMNS].equals(silent_groups):  # every structure sees the same silences
            raise ValueError(f"structure {name}: its silent decisions differ from {next(iter(fits))}'s; "
                             "structures can only be compared on the same data")
        per_decision = np.repeat(np.arange(len(silent)), silent["count"].to_numpy(np.int64))
        parts["silent"] = tuple(silent[c].to_numpy()[per_decision] for c in ("elpd_loo", "lpd", "pareto_k"))
        elpd, lpd, khat = (np.concatenate([part[j] for part in parts.values()]) for j in range(3))
        pointwise[name] = elpd
        rows.append(dict(structure=name, **loo_summary(elpd, lpd, khat), elpd_outcomes=float(parts["outcomes"][0].sum()),
                         elpd_latency=float(parts["latency"][0].sum()) if obs is not None else np.nan,
                         elpd_silent=float(parts["silent"][0].sum()), n_episodes=len(of),
                         n_decisions=0 if obs is None else len(obs), n_silent=len(per_decision),
                         diagnostics_ok=bool(res.diagnostics["ok"])))
    out = pd.DataFrame(rows)
    best = out.loc[out["elpd_loo"].idxmax(), "structure"]
    out["elpd_diff"] = out["elpd_loo"].max() - out["elpd_loo"]
    out["se_diff"] = [weighted_se(np.ones(len(pointwise[best])), pointwise[best] - pointwise[s])
                      for s in out["structure"]]
    out["chosen"] = out["structure"] == choose_structure(out)
    return out[STRUCTURE_LOO_COLUMNS]


def choose_structure(table: pd.DataFrame) -> str:
    """The simplest structure (in :data:`~rtanalysis.model.spec.STRUCTURES` order) whose elpd is within
    max(MIN_ELPD_DIFF, SE_MULTIPLIER × se of its difference) of the best's, among fits that passed the
    diagnostics gate (all of them when none did; the differences and their SEs stay those against the best of
    all)."""
    ok = table[table["diagnostics_ok"]] if table["diagnostics_ok"].any() else table
    return choose_simplest(ok.rename(columns={"structure": "name"}), list(STRUCTURES))


def structure_choice_summary(table: pd.DataFrame) -> str:
    """One sentence on the structure choice for reports (:func:`.compare.choice_sentence`), with what
    the failed fits and unreliable Pareto k mean for it."""
    t = table.set_index("structure")
    chosen = str(t.index[t["chosen"]][0])
    data = ["the episodes' outcomes"] + (["the timed decisions' latencies"] if t["n_decisions"].max() else []) + (
        ["the silent decisions"] if t.get("n_silent", pd.Series([0])).max() else [])
    parts = data[0] if len(data) == 1 else ", ".join(data[:-1]) + " and " + data[-1]
    text = choice_sentence(t, "model structure", parts, "structure_loo.csv")
    failed = [s for s in t.index if not t.loc[s, "diagnostics_ok"]]
    if len(failed) == len(t):
        text += (" No structure's fit passed the diagnostics gate, so the comparison is between unconverged fits: "
                 "rerun with more tuning and draws before relying on it.")
    elif failed:
        text += f" Fits that failed the diagnostics gate were not chosen: {', '.join(failed)}."
        best = str(t["elpd_loo"].idxmax())
        if best in failed and t.loc[chosen, "elpd_diff"] > max(MIN_ELPD_DIFF, SE_MULTIPLIER * t.loc[chosen, "se_diff"]):
            text += (f" The best elpd was {best}'s, clearly ahead of the chosen one, but its fit did not converge: "
                     f"rerun with more tuning and draws (--tune, --draws) to compare {best} properly.")
    high = int(t.loc[chosen, "n_high_k"])
    if high:
        n = int(t.loc[chosen, "n_episodes"] + t.loc[chosen, "n_decisions"] + t.loc[chosen].get("n_silent", 0))
        text += (f" For {high} of its {n} observations Pareto k > {MAX_RELIABLE_K}: their leave-one-out estimates are "
                 "unreliable (an item or cell seen a few times only), so the differences are approximate.")
    return text
