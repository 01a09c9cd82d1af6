"""Vectorised simulation of a :class:`~rtanalysis.simulate.design.Design` and its exact truth.

Every random quantity is drawn for all decisions at once. Three independent streams come from
``numpy.random.default_rng(seed)``: the environment (items, steps per episode, windows: shared by
all models and clocks, which makes the design paired), the model × task-type effects, and the
outcomes (correctness, latency, silence, fatality). Truth is computed from the known probabilities
of the realised environment, never from the sampled outcomes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from .. import schema
from .design import QUANTUM, Design

_CLOCK_CODE = {c: i for i, c in enumerate(schema.CLOCKS)}
_NO_GIVE_UP = np.int64(2**62)
_MAX_QUANTA = 1e15  # latencies beyond this many quanta (astronomical tails) are clipped


def _environment(design: Design, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One row per (task type, task, seed) unit and one per environment decision of each unit."""
    cols: dict[str, list] = {k: [] for k in ("k", "task", "seed", "n_steps", "item", "order")}
    step_eff, win_idx = [], []
    for ki, (tt, r) in enumerate(zip(design.task_types, rng.spawn(len(design.task_types)))):
        n_t, n_s = design.n_tasks, design.seeds_per_task
        item = r.normal(0.0, design.sd_item, n_t)
        lo, hi = tt.steps_range
        n_steps = r.integers(lo, hi + 1, size=n_t * n_s)
        order = np.empty(n_t * n_s, dtype=np.int64)
        order[r.permutation(n_t * n_s)] = np.arange(n_t * n_s)  # rank in the coverage order
        total = int(n_steps.sum())
        step_eff.append(r.normal(0.0, design.sd_step, total))
        w = np.array([w[2] for w in tt.windows], dtype=float)
        win_idx.append(r.choice(len(w), size=total, p=w / w.sum()))
        cols["k"].append(np.full(n_t * n_s, ki))
        cols["task"].append(np.repeat(np.arange(n_t), n_s))
        cols["seed"].append(np.tile(np.arange(n_s), n_t))
        cols["n_steps"].append(n_steps)
        cols["item"].append(np.repeat(item, n_s))
        cols["order"].append(order)
    env = {k: np.concatenate(v) for k, v in cols.items()}
    env["start"] = np.r_[0, np.cumsum(env["n_steps"])[:-1]]
    env["step_eff"] = np.concatenate(step_eff)
    env["win_idx"] = np.concatenate(win_idx)
    return env


def _episodes(design: Design, env: dict) -> dict[str, np.ndarray]:
    """Episode table: clock × model × task type × its units (nested coverage subsets)."""
    units_of = [np.flatnonzero(env["k"] == ki) for ki in range(len(design.task_types))]
    parts = []
    for clock in design.clocks:
        for mi, m in enumerate(design.models):
            for ki, tt in enumerate(design.task_types):
                if clock not in design.clocks_for(tt):
                    continue
                u = units_of[ki]
                keep = int(np.ceil(m.coverage * len(u) - 1e-9))
                sel = np.sort(u[env["order"][u] < keep])
                parts.append((np.full(len(sel), _CLOCK_CODE[clock]), np.full(len(sel), mi), sel))
    clock, model, unit = (np.concatenate(x).astype(np.int64) for x in zip(*parts))
    return {"clock": clock, "model": model, "unit": unit, "k": env["k"][unit], "n_steps": env["n_steps"][unit]}


def _latency_cdf(x: np.ndarray, mu: np.ndarray, sigma: np.ndarray, df: float | None) -> np.ndarray:
    """P(latency <= x) for log latency = mu + sigma * (normal or Student-t)."""
    with np.errstate(divide="ignore"):
        z = (np.log(np.where(x > 0, x, 1.0)) - mu) / sigma
    p = special.ndtr(z) if df is None else special.stdtr(df, z)
    return np.where(x > 0, p, 0.0)


def _model_task_effects(design: Design, rng: np.random.Generator) -> np.ndarray:
    """Model × task-type effects on the logit of correctness: random, plus the design's fixed ones."""
    models, tts = design.models, design.task_types
    mk = rng.normal(0.0, design.sd_model_task, (len(models), len(tts)))
    m_index = {m.name: i for i, m in enumerate(models)}
    k_index = {t.name: i for i, t in enumerate(tts)}
    for (m, k), v in design.interactions.items():
        mk[m_index[m], k_index[k]] += v
    return mk


def _decision_index(env: dict, ep: dict) -> dict[str, np.ndarray]:
    """Per decision: its episode, step, environment decision, model, task type and clock."""
    n = ep["n_steps"]
    ep_start = np.r_[0, np.cumsum(n)[:-1]]
    d_ep = np.repeat(np.arange(len(n)), n)
    d_step = np.arange(int(n.sum())) - ep_start[d_ep]
    return {"ep_start": ep_start, "episode": d_ep, "step": d_step,
            "env": env["start"][ep["unit"][d_ep]] + d_step,
            "model": ep["model"][d_ep], "k": ep["k"][d_ep], "clock": ep["clock"][d_ep]}


def _task_type_quanta(design: Design) -> dict[str, np.ndarray]:
    """Windows, step ticks and give-up times per task type, in quanta of its time unit."""
    tts = design.task_types
    q_k = np.array([QUANTUM[t.time_unit] for t in tts])
    n_win = max(len(t.windows) for t in tts)
    w_open = np.zeros((len(tts), n_win), dtype=np.int64)
    w_close = np.zeros((len(tts), n_win), dtype=np.int64)
    for ki, t in enumerate(tts):
        for j, w in enumerate(t.windows):
            w_open[ki, j], w_close[ki, j] = round(w[0] / q_k[ki]), round(w[1] / q_k[ki])
    tick = np.array([round((t.tick or 0) / q_k[ki]) for ki, t in enumerate(tts)], dtype=np.int64)
    give_up = np.array([_NO_GIVE_UP if t.give_up is None else round(t.give_up / q_k[ki]) for ki, t in enumerate(tts)],
                       dtype=np.int64)
    return {"q": q_k, "open": w_open, "close": w_close, "tick": tick, "give_up": give_up}


def _decision_parameters(design: Design, env: dict, ep: dict, d: dict, mk: np.ndarray) -> dict[str, np.ndarray]:
    """The known probabilities and limits of every decision: P(correct), the latency's log-scale
    location and spread, its window (``open_q``/``close_q``), give-up time and silence probability."""
    models, tts = design.models, design.task_types
    m, k, c = d["model"], d["k"], d["clock"]
    tq = _task_type_quanta(design)
    difficulty = np.array([t.difficulty for t in tts])
    diff = env["item"][ep["unit"]][d["episode"]] + env["step_eff"][d["env"]]
    skill = np.array([x.skill for x in models])
    is_step = c == _CLOCK_CODE["step"]
    timed = c != _CLOCK_CODE["paused"]
    win = env["win_idx"][d["env"]]
    return {
        "p_correct": special.expit(skill[m] - difficulty[k] - mk[m, k] - diff),
        "mu": np.log([t.latency_median for t in tts])[k] + np.array([x.log_latency for x in models])[m]
        + design.latency_item_coef * diff,
        "sigma": np.array([t.latency_sd for t in tts])[k],
        "q": tq["q"][k],
        "is_step": is_step,
        "timed": timed,
        "open_q": np.where(is_step, 0, tq["open"][k, win]),
        "close_q": np.where(is_step, tq["tick"][k], tq["close"][k, win]),
        "tick_q": tq["tick"][k],
        "give_up_q": tq["give_up"][k],
        "silence": np.where(timed, np.array([x.silence for x in models])[m], 0.0),
        "fatality": np.array([t.fatality for t in tts])[k],
        "fallback_on": np.isin(c, [_CLOCK_CODE[x] for x in design.fallback_clocks]),
    }


def _draw_outcomes(design: Design, par: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Correctness, quantised latency, silence, early/late and fatal misses: one stream, fixed draw order."""
    n_dec = len(par["mu"])
    u_correct = rng.random(n_dec)
    z = rng.standard_normal(n_dec) if design.latency_df is None else rng.standard_t(design.latency_df, n_dec)
    u_silent = rng.random(n_dec)
    u_fatal = rng.random(n_dec)

    timed = par["timed"]
    lat_q = np.rint(np.minimum(np.exp(par["mu"] + par["sigma"] * z) / par["q"], _MAX_QUANTA)).astype(np.int64)
    silent = timed & ((u_silent < par["silence"]) | (lat_q > par["give_up_q"]))
    acted = ~silent
    early = timed & acted & (lat_q < par["open_q"])
    late = timed & acted & (lat_q > par["close_q"])
    fatal = (silent | early | late) & (u_fatal < par["fatality"])
    return {"correct": u_correct < par["p_correct"], "lat_q": lat_q, "silent": silent, "early": early,
            "late": late, "fatal": fatal, "fallback": late & par["fallback_on"]}


def _timing_probabilities(design: Design, par: dict) -> dict[str, np.ndarray]:
    """Exact decision-level timing probabilities on the logged (quantised) latency."""
    mu, sigma, q, gq, s, timed = par["mu"], par["sigma"], par["q"], par["give_up_q"], par["silence"], par["timed"]
    f_open = _latency_cdf((par["open_q"] - 0.5) * q, mu, sigma, design.latency_df)
    f_close = _latency_cdf((par["close_q"] + 0.5) * q, mu, sigma, design.latency_df)
    f_give = np.where(gq == _NO_GIVE_UP, 1.0, _latency_cdf((gq + 0.5) * q, mu, sigma, design.latency_df))
    p_silent = np.where(timed, s + (1 - s) * (1 - f_give), 0.0)
    p_early = np.where(timed, (1 - s) * f_open, 0.0)
    p_late = np.where(timed, (1 - s) * (f_give - f_close), 0.0)
    p_miss = p_silent + p_early + p_late
    return {"p_on_time": 1 - p_miss, "p_early": p_early, "p_late": p_late, "p_silent": p_silent,
            "p_no_fatal": 1 - par["fatality"] * p_miss}


def _observation_times(par: dict, out: dict, d: dict) -> np.ndarray:
    """Each decision's observation time in quanta from its episode's start.

    Ticks under step; otherwise the next observation follows the action (or the window close /
    give-up when there is none or a default action was played).
    """
    lat_q, fallback, acted = out["lat_q"], out["fallback"], ~out["silent"]
    wait = np.where(lat_q > par["give_up_q"], par["give_up_q"], par["close_q"])
    adv = np.where(par["is_step"], par["tick_q"],
                   np.where(acted & ~fallback, lat_q, np.where(fallback, par["close_q"], wait)))
    cs = np.cumsum(adv)
    ep_start = d["ep_start"]
    return cs - adv - (cs[ep_start] - adv[ep_start])[d["episode"]]


def simulate_arrays(design: Design, seed: int) -> dict:
    """All per-episode and per-decision arrays (latent and logged) of one simulation."""
    env_rng, eff_rng, out_rng = np.random.default_rng(seed).spawn(3)
    env = _environment(design, env_rng)
    ep = _episodes(design, env)
    mk = _model_task_effects(design, eff_rng)
    d = _decision_index(env, ep)
    par = _decision_parameters(design, env, ep, d, mk)
    out = _draw_outcomes(design, par, out_rng)
    prob = _timing_probabilities(design, par)

    ep_start = d["ep_start"]
    prod = np.multiply.reduceat
    ep_out = {
        **ep,
        "start": ep_start,
        "capable": np.logical_and.reduceat(out["correct"], ep_start),
        "fatal_miss": np.logical_or.reduceat(out["fatal"], ep_start),
        "p_capable": prod(par["p_correct"], ep_start),
        "p_timely": prod(prob["p_no_fatal"], ep_start),
        "p_success": prod(par["p_correct"] * prob["p_no_fatal"], ep_start),
        "task": env["task"][ep["unit"]],
        "seed": env["seed"][ep["unit"]],
    }
    ep_out["success"] = ep_out["capable"] & ~ep_out["fatal_miss"]
    dec = {
        "episode": d["episode"], "step": d["step"], "model": d["model"], "k": d["k"], "clock": d["clock"],
        **{name: par[name] for name in ("q", "p_correct", "mu", "sigma", "open_q", "close_q")},
        "t_obs_q": _observation_times(par, out, d),
        **{name: out[name] for name in ("correct", "lat_q", "silent", "early", "late", "fatal", "fallback")},
        **{name: prob[name] for name in ("p_on_time", "p_early", "p_late", "p_silent")},
    }
    return {"episodes": ep_out, "decisions": dec, "mk": mk}


def median_latency(mu: np.ndarray, sigma: np.ndarray, cell: np.ndarray, n_cells: int, df: float | None,
                   iters: int = 80) -> np.ndarray:
    """Median of each cell's latent latency distribution (a mixture over its decisions), by bisection."""
    # decisions sharing (cell, mu, sigma) contribute identically: bisect over the distinct ones
    order = np.lexsort((sigma, mu, cell))
    c_s, m_s, s_s = cell[order], mu[order], sigma[order]
    first = np.r_[True, (np.diff(c_s) != 0) | (np.diff(m_s) != 0) | (np.diff(s_s) != 0)]
    starts = np.flatnonzero(first)
    counts = np.diff(np.r_[starts, len(order)]).astype(float)
    ucell, umu, usd = c_s[starts], m_s[starts], s_s[starts]
    w = np.bincount(ucell, weights=counts, minlength=n_cells)
    lo = np.full(n_cells, np.inf)
    hi = np.full(n_cells, -np.inf)
    lo[w == 0] = hi[w == 0] = 0.0  # cells without decisions (not reported)
    np.minimum.at(lo, ucell, umu - 12 * usd)
    np.maximum.at(hi, ucell, umu + 12 * usd)
    for _ in range(iters):
        mid = (lo + hi) / 2
        z = (mid[ucell] - umu) / usd
        f = special.ndtr(z) if df is None else special.stdtr(df, z)
        below = np.bincount(ucell, weights=f * counts, minlength=n_cells) / np.maximum(w, 1) < 0.5
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return np.exp((lo + hi) / 2)


#: the columns of a simulation's ``truth`` table
TRUTH_COLUMNS = ["model", "task_type", "clock", "time_unit", "n_episodes", "n_decisions", "mean_steps",
                 "p_capable", "p_timely", "p_success", "share_timing", "p_timely_marginal", "p_correct",
                 "p_on_time", "p_early", "p_late", "p_silent", "median_latency"]


def truth_table(design: Design, arrays: dict) -> pd.DataFrame:
    """One row per model × task type × timed clock: the decomposition the model must recover.

    p_capable = E[P(all decisions correct)], p_success = E[P(all correct and no fatal miss)], both
    averaged over the cell's episodes (realised items); p_timely = P(no fatal miss | capable) =
    p_success / p_capable, so p_success = p_capable · p_timely exactly; share_timing =
    P(capable and fatal miss) / P(failure) = (p_capable − p_success) / (1 − p_success).
    p_timely_marginal = E[P(no fatal miss)] (equal to p_timely when capability and timing are
    independent across the cell's episodes; they are not when item difficulty drives latency or
    episodes differ in length). Decision columns average over the cell's decisions;
    median_latency is the median of the latent latency (in the task type's time unit).
    """
    ep, dec = arrays["episodes"], arrays["decisions"]
    n_m, n_k, n_c = len(design.models), len(design.task_types), len(schema.CLOCKS)
    ep_cell = (ep["model"] * n_k + ep["k"]) * n_c + ep["clock"]
    d_cell = (dec["model"] * n_k + dec["k"]) * n_c + dec["clock"]
    n_cells = n_m * n_k * n_c

    def mean(values, cell):
        return np.bincount(cell, weights=values, minlength=n_cells) / np.maximum(np.bincount(cell, minlength=n_cells), 1)

    n_ep = np.bincount(ep_cell, minlength=n_cells)
    n_dec = np.bincount(d_cell, minlength=n_cells)
    p_cap = mean(ep["p_capable"], ep_cell)
    p_suc = mean(ep["p_success"], ep_cell)
    cols = {
        "n_episodes": n_ep, "n_decisions": n_dec, "mean_steps": n_dec / np.maximum(n_ep, 1),
        "p_capable": p_cap, "p_timely": np.divide(p_suc, p_cap, out=np.ones(n_cells), where=p_cap > 0),
        "p_success": p_suc,
        "share_timing": np.divide(p_cap - p_suc, 1 - p_suc, out=np.zeros(n_cells), where=p_suc < 1),
        "p_timely_marginal": mean(ep["p_timely"], ep_cell),
        "p_correct": mean(dec["p_correct"], d_cell),
        "p_on_time": mean(dec["p_on_time"], d_cell), "p_early": mean(dec["p_early"], d_cell),
        "p_late": mean(dec["p_late"], d_cell), "p_silent": mean(dec["p_silent"], d_cell),
        "median_latency": median_latency(dec["mu"], dec["sigma"], d_cell, n_cells, design.latency_df),
    }
    idx = np.arange(n_cells)
    timed = np.isin(idx % n_c, [_CLOCK_CODE[c] for c in schema.TIMED_CLOCKS]) & (n_ep > 0)
    clock_rank = np.array([design.clocks.index(c) if c in design.clocks else n_c for c in schema.CLOCKS])
    rows = idx[timed]
    rows = rows[np.argsort(clock_rank[rows % n_c] * n_cells + rows // n_c, kind="stable")]
    out = pd.DataFrame({
        "model": [design.models[i].name for i in rows // (n_k * n_c)],
        "task_type": [design.task_types[i].name for i in (rows // n_c) % n_k],
        "clock": [schema.CLOCKS[i] for i in rows % n_c],
        "time_unit": [design.task_types[i].time_unit for i in (rows // n_c) % n_k],
        **{name: v[rows] for name, v in cols.items()},
    })
    return out[TRUTH_COLUMNS].astype({"n_episodes": "int64", "n_decisions": "int64"})
