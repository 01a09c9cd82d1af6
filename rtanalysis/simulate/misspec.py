"""Misspecified generators: data that break the fitted model's assumptions, with Monte Carlo truth.

The base engine (:func:`.engine.simulate_arrays`) draws data from the model the package fits. A
:class:`Misspec` changes how outcomes are drawn on top of the same environment (items, decision
counts, windows), so the logs stay valid rtlog v1 and the truth keeps the package's definitions:

* ``speed_accuracy``: logit P(correct) rises by ``speed_accuracy`` per SD of the decision's own
  log-latency deviation (thinking longer helps);
* ``bimodal``: with probability ``mode_share`` a decision takes the reasoning mode, log-latency +
  ``mode_shift``;
* ``clock_adaptive``: under timed clocks the agent thinks less: log-latency + ``timed_log_latency``
  and logit P(correct) + ``timed_skill`` (both < 0);
* ``tick_latency``: under the step clock the log records every latency as the tick length
  (RealtimeGym seconds mode); only the fallback flag carries the timing.

The regime real benchmarks live in (composable fields, any ``kind`` may set them):

* ``truncate``: the log ends at the fatal decision (a fatal miss, or a wrong action that is fatal
  with probability ``wrong_fatality``); an episode that survives logs every decision of its natural
  length. With ``wrong_fatality < 1`` a wrong action that is not fatal is survived, so "capable"
  means "no fatal wrong action with unlimited time" (with 1, "every decision right", as elsewhere).
  ``log_ended`` writes the episode field ``ended`` (``failure`` / ``horizon``);
* ``episode_ability`` / ``episode_slowness``: per-episode logit and log-latency effects, bivariate
  normal with correlation ``episode_rho`` (one value, or one per model: < 0 means a hard state makes
  the agent slower *and* more often wrong for the whole episode), redrawn in every replicate;
* ``latency_overhead``: a fixed part of every latency (× the task type's median): latency =
  overhead + exp(log-normal), the shape of "a request overhead plus tokens over throughput".

Presets that the base design already expresses (item difficulty slowing the agent, Student-t
tails, give-up times, partial fatality) use ``kind="none"`` and the design's own fields; their
truth comes from the same Monte Carlo so every misspecification preset has the same columns.

Truth (:func:`mc_truth`): per episode, the outcome process is re-run ``reps`` times on the realised
environment with common random numbers; every scenario (λ = 1, λ ∈ ``lambdas``, ``as:<model>``)
uses the same uniforms, so a counterfactual keeps each decision's content (its correctness draw,
its mode) and changes only its latency (× λ, or the other model's log-latency offset and silence).
Windows, give-up times and the number of decisions are not changed by latency. A "both" failure
(wrong and late) counts as capability; p_timely = p_success / p_capable.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
from scipy import special

from .. import schema
from .design import QUANTUM, Design
from .engine import TRUTH_COLUMNS, simulate_arrays

KINDS = ("none", "speed_accuracy", "bimodal", "clock_adaptive", "tick_latency", "truncated", "episode_effects",
         "llm_latency", "realistic")
#: latency scales scored as counterfactuals (besides λ = 1 and ``as:<model>``)
LAMBDAS = (0.5, 2.0)
#: the columns of the counterfactual truth frame
COUNTERFACTUAL_TRUTH_COLUMNS = ["model", "task_type", "clock", "scenario", "lambda", "p_success"]
_CLOCK = {c: i for i, c in enumerate(schema.CLOCKS)}
_NO_GIVE_UP = np.int64(2**62)
_MAX_QUANTA = 1e15


@dataclass(frozen=True)
class Misspec:
    """How a misspecified preset departs from the fitted model (see the module docstring)."""

    kind: str = "none"
    speed_accuracy: float = 0.0
    mode_share: float = 0.0
    mode_shift: float = 0.0
    timed_log_latency: float = 0.0
    timed_skill: float = 0.0
    truncate: bool = False
    wrong_fatality: float = 1.0
    log_ended: bool = False
    episode_ability: float = 0.0
    episode_slowness: float = 0.0
    episode_rho: float | tuple[float, ...] = 0.0
    latency_overhead: float = 0.0
    note: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"misspec: kind: unknown {self.kind!r} (known: {', '.join(KINDS)})")
        if not 0 <= self.mode_share < 1:
            raise ValueError("misspec: mode_share: must be in [0, 1)")
        if not 0 <= self.wrong_fatality <= 1:
            raise ValueError("misspec: wrong_fatality: must be in [0, 1]")
        if self.episode_ability < 0 or self.episode_slowness < 0 or self.latency_overhead < 0:
            raise ValueError("misspec: episode_ability/episode_slowness/latency_overhead: must be >= 0")
        if not all(-1 < r < 1 for r in np.atleast_1d(self.episode_rho)):
            raise ValueError("misspec: episode_rho: must be in (-1, 1)")

    @property
    def episode_effects(self) -> bool:
        return self.episode_ability > 0 or self.episode_slowness > 0


@dataclass
class _Context:
    """The fixed environment of one simulation, per decision (arrays of length n_dec)."""

    design: Design
    spec: Misspec
    dec: dict
    ep: dict
    speed: np.ndarray
    silence: np.ndarray
    fatality: np.ndarray
    give_up_q: np.ndarray
    tick_q: np.ndarray
    overhead: np.ndarray
    rho: np.ndarray

    @classmethod
    def of(cls, design: Design, spec: Misspec, arrays: dict) -> "_Context":
        tts = design.task_types
        q = np.array([QUANTUM[t.time_unit] for t in tts])
        gq = np.array([_NO_GIVE_UP if t.give_up is None else round(t.give_up / q[i]) for i, t in enumerate(tts)],
                      dtype=np.int64)
        tick = np.array([round((t.tick or 0) / q[i]) for i, t in enumerate(tts)], dtype=np.int64)
        rho = np.broadcast_to(np.asarray(spec.episode_rho, dtype=float), (len(design.models),))
        return cls(design, spec, arrays["decisions"], arrays["episodes"],
                   np.array([m.log_latency for m in design.models]), np.array([m.silence for m in design.models]),
                   np.array([t.fatality for t in tts]), gq, tick,
                   spec.latency_overhead * np.array([t.latency_median for t in tts]), rho)

    @cached_property
    def timed(self) -> np.ndarray:
        return self.dec["clock"] != _CLOCK["paused"]

    @cached_property
    def logit(self) -> np.ndarray:
        """Content logit per decision, with the timed-clock shift of ``clock_adaptive``."""
        p = np.clip(self.dec["p_correct"], 1e-15, 1 - 1e-15)
        return special.logit(p) + self.spec.timed_skill * self.timed

    @cached_property
    def starts(self) -> np.ndarray:
        return self.ep["start"]


def _uniforms(rng: np.random.Generator, shape: tuple, df: float | None, n_ep: int = 0,
              extra: bool = False) -> dict[str, np.ndarray]:
    """The random numbers behind one replicate of every decision (shared by all scenarios);
    ``extra``: also the wrong-action fatality uniforms and two normals per episode (its state), drawn
    after the others so that the base mechanisms keep their stream."""
    U = {"correct": rng.random(shape),
         "z": rng.standard_normal(shape) if df is None else rng.standard_t(df, shape),
         "mode": rng.random(shape), "silent": rng.random(shape), "fatal": rng.random(shape)}
    if extra:
        U["wrong_fatal"] = rng.random(shape)
        U["episode"] = rng.standard_normal((*shape[:-1], 2, n_ep))
    return U


def _episode_state(ctx: _Context, U: dict) -> tuple[np.ndarray | float, np.ndarray | float]:
    """(logit shift, log-latency shift) per decision from its episode's state: ability a and
    slowness s, sd ``episode_ability`` / ``episode_slowness``, correlation ρ of the episode's model."""
    s = ctx.spec
    if not s.episode_effects:
        return 0.0, 0.0
    z1, z2 = U["episode"][..., 0, :], U["episode"][..., 1, :]
    rho = ctx.rho[ctx.ep["model"]]
    ability = s.episode_ability * z1
    slowness = s.episode_slowness * (rho * z1 + np.sqrt(1 - rho**2) * z2)
    e = ctx.dec["episode"]
    return ability[..., e], slowness[..., e]


def _outcomes(ctx: _Context, U: dict, lam: float = 1.0, lat_model: np.ndarray | None = None) -> dict:
    """Outcomes of every decision for uniforms ``U`` (arrays (..., n_dec)): latency × ``lam`` and
    taken from model ``lat_model`` (per decision), content unchanged."""
    d, s = ctx.dec, ctx.spec
    m = d["model"] if lat_model is None else lat_model
    ability, slowness = _episode_state(ctx, U)
    mu = d["mu"] - ctx.speed[d["model"]] + ctx.speed[m] + s.timed_log_latency * ctx.timed + slowness
    if s.mode_share > 0:
        mu = mu + s.mode_shift * (U["mode"] < s.mode_share)
    # λ scales the whole latency, the fixed overhead included (a faster machine or provider)
    latency = lam * (ctx.overhead[d["k"]] + np.exp(mu + d["sigma"] * U["z"]))
    lat_q = np.rint(np.minimum(latency / d["q"], _MAX_QUANTA)).astype(np.int64)
    # content: the decision's own latency deviation at λ = 1 (a counterfactual keeps the content)
    correct = U["correct"] < special.expit(ctx.logit + ability + s.speed_accuracy * U["z"])
    wrong_fatal = ~correct & (U["wrong_fatal"] < s.wrong_fatality if "wrong_fatal" in U else True)
    timed = ctx.timed
    gq = ctx.give_up_q[d["k"]]
    silent = timed & ((U["silent"] < np.where(timed, ctx.silence[m], 0.0)) | (lat_q > gq))
    acted = ~silent
    early = timed & acted & (lat_q < d["open_q"])
    late = timed & acted & (lat_q > d["close_q"])
    fatal = (silent | early | late) & (U["fatal"] < ctx.fatality[d["k"]])
    return {"latency": latency, "lat_q": lat_q, "correct": correct, "silent": silent, "early": early, "late": late,
            "fatal": fatal, "wrong_fatal": wrong_fatal}


def _episode_reduce(o: dict, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(capable, no fatal miss) per episode, along the last axis: capable = no fatal wrong action
    (every decision right where every wrong action is fatal)."""
    capable = ~np.logical_or.reduceat(o["wrong_fatal"], starts, axis=-1)
    no_fatal = ~np.logical_or.reduceat(o["fatal"], starts, axis=-1)
    return capable, no_fatal


def _scenarios(design: Design, lambdas) -> list[tuple[str, float, int | None]]:
    out = [("scale", 1.0, None)] + [("scale", float(lam), None) for lam in lambdas if lam != 1.0]
    return out + [(f"as:{m.name}", 1.0, j) for j, m in enumerate(design.models)]


def _mc_sums(ctx: _Context, reps: int, seed: int, lambdas, chunk: int = 50) -> dict:
    """Monte Carlo sums over ``reps`` replicates: per scenario, episodes capable / success; at λ = 1
    also no-fatal-miss per episode and correct / early / late / silent per decision, and a sample of
    latent latencies (for medians)."""
    rng = np.random.default_rng([seed, 12])
    scen = _scenarios(ctx.design, lambdas)
    n_ep, n_dec = len(ctx.starts), len(ctx.dec["model"])
    sums = {"capable": np.zeros(n_ep), "no_fatal": np.zeros(n_ep),
            "success": {sc[:2]: np.zeros(n_ep) for sc in scen},
            **{k: np.zeros(n_dec) for k in ("correct", "early", "late", "silent")}, "latency": []}
    done = 0
    while done < reps:
        r = min(chunk, reps - done)
        U = _uniforms(rng, (r, n_dec), ctx.design.latency_df, n_ep, _extra(ctx.spec))
        for name, lam, other in scen:
            lat_model = None if other is None else np.full(n_dec, other)
            o = _outcomes(ctx, U, lam, lat_model)
            capable, no_fatal = _episode_reduce(o, ctx.starts)
            sums["success"][(name, lam)] += (capable & no_fatal).sum(axis=0)
            if (name, lam) == ("scale", 1.0):
                sums["capable"] += capable.sum(axis=0)
                sums["no_fatal"] += no_fatal.sum(axis=0)
                for k in ("correct", "early", "late", "silent"):
                    sums[k] += o[k].sum(axis=0)
                if done == 0:
                    sums["latency"] = o["latency"][: min(r, 20)]
        done += r
    return sums


def _cells(design: Design, ep: dict) -> list[tuple[int, int, int, np.ndarray]]:
    """(model, task type, clock code, episode indices) of every timed cell with episodes, in the
    order of :func:`.engine.truth_table` (clock order of the design, then model, then task type)."""
    out = []
    for clock in design.clocks:
        if clock not in schema.TIMED_CLOCKS:
            continue
        for mi in range(len(design.models)):
            for ki in range(len(design.task_types)):
                e = np.flatnonzero((ep["model"] == mi) & (ep["k"] == ki) & (ep["clock"] == _CLOCK[clock]))
                if len(e):
                    out.append((mi, ki, _CLOCK[clock], e))
    return out


def mc_truth(design: Design, spec: Misspec, arrays: dict, reps: int = 400, seed: int = 0,
             lambdas=LAMBDAS) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(truth, counterfactual truth, per-episode probabilities) by Monte Carlo over ``reps`` re-runs
    of every episode on its realised environment. ``truth`` has
    :data:`~rtanalysis.simulate.engine.TRUTH_COLUMNS`; the counterfactual frame has
    :data:`~rtanalysis.simulate.misspec.COUNTERFACTUAL_TRUTH_COLUMNS` (scenario ``scale`` at λ = 1 and
    ``lambdas``, ``as:<model>`` for every other model)."""
    ctx = _Context.of(design, spec, arrays)
    S = _mc_sums(ctx, reps, seed, lambdas)
    ep, dec = ctx.ep, ctx.dec
    p_cap, p_suc = S["capable"] / reps, S["success"][("scale", 1.0)] / reps
    d_ep = dec["episode"]
    rows, cf = [], []
    for mi, ki, ci, e in _cells(design, ep):
        tt = design.task_types[ki]
        ds = np.flatnonzero(np.isin(d_ep, e))
        pc, ps = p_cap[e].mean(), p_suc[e].mean()
        rates = {k: S[k][ds].mean() / reps for k in ("correct", "early", "late", "silent")}
        lat = S["latency"][:, ds]
        keys = (design.models[mi].name, tt.name, schema.CLOCKS[ci])
        rows.append((*keys, tt.time_unit, len(e), len(ds), len(ds) / len(e), pc, ps / pc if pc > 0 else 1.0, ps,
                     (pc - ps) / (1 - ps) if ps < 1 else 0.0, S["no_fatal"][e].mean() / reps, rates["correct"],
                     1 - rates["early"] - rates["late"] - rates["silent"], rates["early"], rates["late"],
                     rates["silent"], float(np.median(lat)) if lat.size else np.nan))
        for (name, lam), v in S["success"].items():
            if name != f"as:{design.models[mi].name}":
                cf.append((*keys, name, lam, v[e].mean() / reps))
    truth = pd.DataFrame(rows, columns=TRUTH_COLUMNS).astype({"n_episodes": "int64", "n_decisions": "int64"})
    cft = pd.DataFrame(cf, columns=COUNTERFACTUAL_TRUTH_COLUMNS)
    return truth, cft, {"p_capable": p_cap, "p_success": p_suc, "p_timely": S["no_fatal"] / reps}


def _extra(spec: Misspec) -> bool:
    """The spec needs the extra random numbers (so the older presets keep their exact stream)."""
    return spec.truncate or spec.wrong_fatality < 1 or spec.episode_effects


def _log_outcomes(ctx: _Context, rng: np.random.Generator) -> dict:
    """One logged draw of every decision, with the clock times and fallback flags the records need."""
    d, design = ctx.dec, ctx.design
    o = _outcomes(ctx, _uniforms(rng, (len(d["model"]),), design.latency_df, len(ctx.starts), _extra(ctx.spec)))
    c = d["clock"]
    is_step = c == _CLOCK["step"]
    fallback = o["late"] & np.isin(c, [_CLOCK[x] for x in design.fallback_clocks])
    acted = ~o["silent"]
    tick = ctx.tick_q[d["k"]]
    gq = ctx.give_up_q[d["k"]]
    lat_q = o["lat_q"]
    # clock times as in the engine: ticks under step; else the next observation follows the action
    wait = np.where(lat_q > gq, gq, d["close_q"])
    adv = np.where(is_step, tick, np.where(acted & ~fallback, lat_q, np.where(fallback, d["close_q"], wait)))
    cs = np.cumsum(adv)
    starts = ctx.starts
    t_obs_q = cs - adv - (cs[starts] - adv[starts])[d["episode"]]
    logged = np.where(is_step & (ctx.spec.kind == "tick_latency"), tick, lat_q)
    return {**o, "fallback": fallback, "t_obs_q": t_obs_q, "logged_lat_q": logged}


def simulate_misspec_arrays(design: Design, spec: Misspec, seed: int, reps: int = 400):
    """(arrays in the engine's layout with the misspecified outcomes, truth, counterfactual truth)."""
    arrays = simulate_arrays(design, seed)
    ctx = _Context.of(design, spec, arrays)
    o = _log_outcomes(ctx, np.random.default_rng([seed, 11]))
    dec = dict(arrays["decisions"])
    dec.update({k: o[k] for k in ("correct", "silent", "early", "late", "fatal", "fallback", "t_obs_q")})
    dec["lat_q"] = o["logged_lat_q"]
    truth, cft, per_ep = mc_truth(design, spec, arrays, reps=reps, seed=seed)
    ep = dict(arrays["episodes"])
    ep["capable"], no_fatal = _episode_reduce(o, ctx.starts)
    ep["fatal_miss"] = ~no_fatal
    ep["success"] = ep["capable"] & no_fatal
    ep.update(per_ep)
    # the decision-level exact probabilities of the base engine do not hold here: drop them
    for k in ("p_on_time", "p_early", "p_late", "p_silent"):
        dec[k] = np.full(len(dec["model"]), np.nan)
    exact_content = spec.speed_accuracy == 0 and not spec.episode_effects
    dec["p_correct"] = special.expit(ctx.logit) if exact_content else np.full(len(dec["model"]), np.nan)
    if spec.log_ended:
        ep["ended"] = np.where(ep["success"], "horizon", "failure")
    if spec.truncate:
        ep, dec = _truncate(ep, dec, o["fatal"] | o["wrong_fatal"])
    return {**arrays, "episodes": ep, "decisions": dec}, truth, cft


def _truncate(ep: dict, dec: dict, fatal: np.ndarray) -> tuple[dict, dict]:
    """The logs of episodes that end at their fatal decision: each episode keeps its decisions up to
    and including the first fatal one (all of them when it survived). ``n_steps`` becomes the logged
    length; the natural one stays as ``n_steps_natural`` (the truth is over the natural length)."""
    e = dec["episode"]
    first = np.full(len(ep["start"]), np.iinfo(np.int64).max)
    np.minimum.at(first, e[fatal], dec["step"][fatal])
    keep = dec["step"] <= first[e]
    dec = {k: v[keep] for k, v in dec.items()}
    ep = dict(ep)
    ep["n_steps_natural"] = ep["n_steps"]
    ep["n_steps"] = np.bincount(dec["episode"], minlength=len(ep["start"])).astype(np.int64)
    ep["start"] = np.r_[0, np.cumsum(ep["n_steps"])[:-1]].astype(np.int64)
    return ep, dec


def counterfactual_truth(sim, reps: int = 400, lambdas=LAMBDAS) -> pd.DataFrame:
    """p_success at λ = 1, ``lambdas`` and ``as:<model>`` of any :class:`~rtanalysis.simulate.Simulation` (a
    misspecified one returns its own; a well-specified one is re-run by Monte Carlo with ``kind="none"``)."""
    own = getattr(sim, "counterfactual_truth", None)
    if own is not None:
        return own
    return mc_truth(sim.design, Misspec(), sim.arrays, reps=reps, seed=sim.seed, lambdas=lambdas)[1]
