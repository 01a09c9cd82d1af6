"""Simulation-based calibration (Talts et al. 2018) of the capability × timing model.

For each of ``n_sims`` draws θ from the prior, a dataset is generated *from the model itself* on a
fixed template structure (the template's models, task types, items, clocks, decisions per episode
and windows) and the model is fitted to it; the rank of θ among (thinned) posterior draws is
uniform on {0, …, L} for every scalar when the sampler and the derived quantities are right.

The generator is the model's own generative process for unlabelled logs: per decision, a log-latency
from the fitted family (``Normal(μ_umk, σ_umk)`` by default; Student-t or the two-mode mixture with
the family's shape parameters, by their quantile functions); under a timed clock a decision is
silent with probability π_m (the silence mode) or when its latency passes the window close (the
censor point the likelihood uses, so no action lands after the close); a miss is a silence or an
action before the window opens; the episode succeeds with probability ``P(capable) · (1 − f_k)^M``.
With clock effects (``clock_effects=True``) P(capable) moves by κ_m under a timed clock; with item
time intensities (``item_latency=True``) log-latency moves by the item's τ_i; with episode slowness (the normal
family's default) each episode's log-latencies share a shift of SD √r_k σ and scatter with SD √(1 − r_k) σ. Both hurdle indicators
come from their prior prevalences (:func:`.derived.param_draws` with ``prior=True``).

Why not ``simuk``: its SBC draws data with ``pm.sample_posterior_predictive`` of observed
variables, and this model's likelihood is written as potentials on aggregated tables (no observed
variable to draw), so the generator here is explicit.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

#: scalar parameters ranked (every element of a vector parameter is ranked separately)
SBC_PARAMS = ("a0", "c0", "s0", "length_cap", "sd_item_cap", "fatality", "always_fatal", "silence_prevalence",
              "model_cap", "type_cap", "model_lat", "type_lat",
              # present only in some structures: clock effects, the t family, the mixture's label-free
              # summaries, item time intensities (their SD and the difficulty-per-intensity slope β_k)
              "timed_cap", "nu", "slow_mode_share", "mode_gap", "sd_item_lat", "item_cap_per_lat", "latency_icc")
#: derived quantities ranked per timed row
SBC_DERIVED = ("p_timely", "share_timing", "p_capable")


@dataclass
class Template:
    """The fixed structure data are generated on: rtlog records (outcomes to be replaced) and the
    ModelData of the template (index maps, lengths)."""

    records: list[dict]
    data: object  # ModelData
    m: np.ndarray
    k: np.ndarray
    u: np.ndarray
    i: np.ndarray
    x: np.ndarray
    item_latency: bool = False  # the model has item time intensities τ_i (``fit(item_latency=True)``)


def template_from_design(design, seed: int = 0, clock_effects: bool = False, item_latency: bool = False) -> Template:
    """A template from a simulator design (its records, loaded and aggregated); ``clock_effects``: the
    tables of a fit with clock effects (the generator then moves timed capability by κ_m);
    ``item_latency``: a model with item time intensities (the generator shifts an item's log-latency by τ_i)."""
    from ...simulate import simulate
    from ..data import aggregate

    sim = simulate(design, seed=seed, labelled=False)
    lr = sim.load()
    d = aggregate(lr.episodes, lr.steps, clock_effects=clock_effects)
    recs = sim.records
    m = np.array([d.models.index(r["model"]) for r in recs])
    k = np.array([d.task_types.index(r["task_type"]) for r in recs])
    u = np.array([d.units.index(r["time_unit"]) for r in recs])
    i = np.array([d.items.index(r["task"]) if r.get("task") in d.items else -1 for r in recs])
    n = np.array([len(r["steps"]) for r in recs])
    x = np.round(np.log(n) - d.type_log_g[k], 12)
    return Template(recs, d, m, k, u, i, x, item_latency)


def _timed(clock: str) -> bool:
    from ...schema import TIMED_CLOCKS

    return clock in TIMED_CLOCKS


def generate(t: Template, p, rng: np.random.Generator) -> list[dict]:
    """rtlog records on the template's structure with outcomes drawn from the single parameter draw
    ``p`` (a :class:`.derived.ParamDraws` with one draw)."""
    from ..derived import capable_probability

    out = []
    pi = p.silence[0] if p.silence is not None else np.zeros(len(t.data.models))
    timed_rec = np.array([_timed(r["clock"]) for r in t.records])
    tau = np.zeros(len(t.i)) if p.item_lat is None else p.item_lat[0, t.i]  # item -1 (none): the 0 column
    cap = np.array([capable_probability(p, t.data, m, k, [i], [x], timed=[tm])[0, 0]
                    for m, k, i, x, tm in zip(t.m, t.k, t.i, t.x, timed_rec)])
    for e, rec in enumerate(t.records):
        m, k, u = t.m[e], t.k[e], t.u[e]
        timed = bool(timed_rec[e])
        mu, sd = p.mu[0, u, m, k] + tau[e], p.sigma[0, u, m, k]
        if p.latency_icc is not None:  # episode slowness: one shared shift, the rest within the episode
            icc = float(p.latency_icc[0, k])
            mu, sd = mu + np.sqrt(icc) * sd * rng.standard_normal(), sd * np.sqrt(1.0 - icc)
        fam, shape = p.dist_at(m)
        shape = {name: v[0, 0] for name, v in shape.items()}
        steps, misses, clock_t = [], 0, 0.0
        for s in rec["steps"]:
            lo, hi = s["window"]
            # capped at e^40: a Student-t with ν < 1 can draw log-latencies that overflow (a prior draw
            # that far out is silent under a timed clock anyway)
            lat = float(np.exp(min(fam.ppf(rng.random(), mu, sd, **shape), 40.0)))
            lat = max(round(lat, 4), 1e-4) if rec["time_unit"] == "s" else max(float(round(lat)), 1.0)
            silent = timed and (rng.random() < pi[m] or lat > hi)
            if silent:
                misses += 1
                steps.append({"t_obs": clock_t, "t_act": None, "window": [lo, hi]})
                clock_t += hi
                continue
            misses += int(timed and lat < lo)
            steps.append({"t_obs": clock_t, "t_act": round(clock_t + lat, 4), "latency": lat, "window": [lo, hi]})
            clock_t = round(clock_t + lat, 4)
        p_success = cap[e] * (1 - p.fatality[0, k]) ** misses
        out.append({**{kk: v for kk, v in rec.items() if kk != "steps"}, "success": bool(rng.random() < p_success),
                    "steps": steps})
    return out


def _load(records: list[dict]):
    from ...io import EpisodeSink

    sink = EpisodeSink()
    sink.open_file("<sbc>")
    for j, rec in enumerate(records, start=1):
        sink.add(rec, "<sbc>", j)
    return sink.finish()


def prior_draws(t: Template, n: int, seed: int, latency_family: str = "normal"):
    """(raw prior dataset, ParamDraws) of ``n`` prior draws on the template's model (with the template's
    clock effects, if any, and the latency family ``latency_family``)."""
    import pymc as pm

    from ..build import build_model
    from ..derived import param_draws
    from ..spec import ModelSpec

    # the default model's episode slowness (where the data allow it: ``build.has_episode_latency``)
    model = build_model(t.data, latency_family, item_latency=t.item_latency, episode_latency=ModelSpec().episode_effects)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Potentials.*")
        idata = pm.sample_prior_predictive(draws=n, model=model, random_seed=seed)
    prior = idata["prior"]
    return prior, param_draws(prior, t.data, seed=seed, prior=True)


def _flat(ds, name: str) -> np.ndarray:
    a = np.asarray(ds[name].values, dtype=float)
    return a.reshape(a.shape[0] * a.shape[1], -1)  # (draws, elements)


def _labels(ds, name: str) -> list[str]:
    v = ds[name]
    dims = [d for d in v.dims if d not in ("chain", "draw")]
    if not dims:
        return [name]
    import itertools

    coords = [list(map(str, v.coords[d].values)) for d in dims]
    return [f"{name}[{','.join(c)}]" for c in itertools.product(*coords)]


#: derived probabilities closer than this count as tied in a rank: a share of timing failures that is
#: 0 in float (a miss 40 SD away underflows) for the truth but 1e-20 in a posterior draw is not "smaller
#: than every draw" (measured: 12 of 93 ranks of one row at 0 before ties were broken at random)
DERIVED_TIE = 1e-12


def sbc_rank(sample: np.ndarray, truth, rng, tie: float = 0.0) -> np.ndarray:
    """Per column, the rank of ``truth`` among the ``sample`` rows (draws × columns): the draws below it,
    plus a uniform share of the draws tied with it (within ``tie``), as SBC requires for ties
    (Talts et al. 2018, §4.1)."""
    below = (sample < truth - tie).sum(axis=0)
    ties = (np.abs(sample - truth) <= tie).sum(axis=0)
    return below + rng.integers(0, ties + 1)


def one_sbc(t: Template, prior, p_all, j: int, draws: int, chains: int, thin: int, seed: int) -> dict:
    """Ranks of prior draw ``j`` among the thinned posterior of a fit to data generated from it (the fit
    has the prior's latency family and the template's clock effects and item time intensities)."""
    from ..fit import fit
    from ..spec import ModelSpec

    p = p_all.take([j])
    recs = generate(t, p, np.random.default_rng([seed, j]))
    spec = ModelSpec.from_parts(p.latency_family, clock_effects=t.data.clock_effects, item_latency=t.item_latency)
    res = fit(_load(recs), spec, draws=draws, chains=chains, seed=seed + j, progress=False, tune=None)
    post = res.idata["posterior"]
    rank_rng = np.random.default_rng([seed, j, 1])
    ranks, names = [], []
    for name in SBC_PARAMS:
        if name not in post or name not in prior:
            continue
        truth = _flat(prior, name)[j]
        sample = _flat(post, name)[::thin]
        ranks.extend(sbc_rank(sample, truth[None, :], rank_rng).tolist())
        names.extend(_labels(post, name))
    rows = res._deriver.rows
    timed = np.flatnonzero((rows["clock"] != "paused").to_numpy())
    true_d = res._deriver.compute(p)
    post_d = res._deriver.compute(res._params.take(np.arange(0, res._params.n, thin)))
    for q in SBC_DERIVED:
        for r in timed:
            ranks.append(int(sbc_rank(post_d[q][r][:, None], true_d[q][r, 0], rank_rng, DERIVED_TIE)[0]))
            names.append(f"{q}[{rows['model'].iloc[r]},{rows['task_type'].iloc[r]},{rows['clock'].iloc[r]}]")
    n_post = len(range(0, res._params.n, thin))
    return {"sim": j, "names": names, "ranks": ranks, "n_post": n_post, "ok": bool(res.diagnostics["ok"]),
            "divergences": int(res.diagnostics["n_divergent"])}


def run_sbc(design, n_sims: int, draws: int = 300, chains: int = 2, thin: int = 6, seed: int = 0,
            progress=None, latency_family: str = "normal", clock_effects: bool = False,
            item_latency: bool = False) -> pd.DataFrame:
    """SBC on ``design``'s structure: a long frame sim, parameter, rank, n_post (ranks in 0..n_post),
    fit_ok, divergences; ``latency_family``, ``clock_effects``, ``item_latency``: the model structure calibrated."""
    t = template_from_design(design, seed=seed, clock_effects=clock_effects, item_latency=item_latency)
    prior, p_all = prior_draws(t, n_sims, seed, latency_family)
    rows = []
    for j in range(n_sims):
        r = one_sbc(t, prior, p_all, j, draws, chains, thin, seed)
        rows.append(pd.DataFrame({"sim": j, "parameter": r["names"], "rank": r["ranks"], "n_post": r["n_post"],
                                  "fit_ok": r["ok"], "divergences": r["divergences"]}))
        if progress:
            progress(j, r)
    return pd.concat(rows, ignore_index=True)


def rank_uniformity(ranks: pd.DataFrame, bins: int | None = None) -> pd.DataFrame:
    """χ² test of uniform ranks per parameter: parameter, n, chi2, dof, p_value, p_adjusted
    (Holm across parameters), ``bins`` equal-width bins of 0..n_post (default: ~n/5, 2–20)."""
    out = []
    for name, g in ranks.groupby("parameter", sort=False):
        n_post = int(g["n_post"].iloc[0])
        b = bins or int(np.clip(len(g) // 5, 2, 20))
        counts = np.bincount(np.minimum(g["rank"].to_numpy() * b // (n_post + 1), b - 1), minlength=b)
        chi2, p = stats.chisquare(counts)
        out.append((name, len(g), float(chi2), b - 1, float(p)))
    f = pd.DataFrame(out, columns=["parameter", "n", "chi2", "dof", "p_value"])
    # Holm step-down: adjusted p of the i-th smallest = max over j <= i of (m − j + 1) p_(j)
    order = np.argsort(f["p_value"].to_numpy())
    m = len(f)
    adj = np.maximum.accumulate((m - np.arange(m)) * f["p_value"].to_numpy()[order])
    f.loc[f.index[order], "p_adjusted"] = np.minimum(adj, 1.0)
    return f
