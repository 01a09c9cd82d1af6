"""Choosing the latency family (:mod:`.families`: normal, Student-t, two-mode mixture on the log
scale), compared by PSIS-LOO.

Every family is fitted to the same data — each cell's log-latencies as order statistics at fixed
quantile positions and the counts between them (:func:`.data.order_statistic_layout`, finer in the
tails) — by a latency-only model with the full model's latency structure and priors, so their
expected log predictive densities are comparable. Decisions between two kept order statistics of a
cell share one pointwise log-likelihood, so PSIS-LOO runs once per (cell, interval) weighted by its
count and once per kept order statistic; the standard errors are those of a sum over decisions.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from .data import ModelData
from .families import NAMES, family
from .sampler import sample_model

#: the columns of :func:`latency_loo`'s table
LOO_COLUMNS = ["family", "elpd_loo", "se", "p_loo", "max_pareto_k", "n_decisions", "shape", "elpd_diff", "se_diff",
               "chosen"]

#: a more complex family is chosen only when it beats every simpler one by more than this many
#: standard errors of the difference and by more than MIN_ELPD_DIFF (differences below ~4 are not
#: reliable; Sivula et al. 2022)
SE_MULTIPLIER = 2.0
MIN_ELPD_DIFF = 4.0


def latency_only_model(d: ModelData, name: str):
    """The latency part of :func:`.build.build_model` on the cells' latency order statistics alone."""
    import pymc as pm

    from .build import _data, binned_latency, informative_cells, latency_cells, latency_shape

    fam = family(name)
    coords = {"model": d.models, "task_type": d.task_types, "unit": d.units}
    with pm.Model(coords=coords) as model:
        L, mu, log_sigma, cell_m = latency_cells(d)
        shape = latency_shape(fam, d)
        terms, weights = binned_latency(d, mu, pm.math.exp(log_sigma), fam, shape, cell_m)
        pm.Deterministic("bin_logp", terms)
        keep = _data("lat_keep", informative_cells(L), "float64")[:, None]  # data, not a constant: one compile
        pm.Potential("latency_binned", pm.math.sum(weights * keep * terms))
    return model


def _psislw(ll: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """PSIS log weights (groups × draws) and Pareto k per column of ``ll`` (draws × groups). A column
    whose largest values are all equal (a chain that stopped moving) cannot be smoothed: it keeps its
    raw importance weights and k = inf, so the comparison reports it as unreliable."""
    from arviz_stats.base import array_stats

    # takes the log-likelihood itself (it negates internally); returns groups × draws log weights
    try:
        return array_stats.psislw(ll.T, r_eff=1.0, axis=-1)
    except ValueError:
        log_w, khat = -ll.T.copy(), np.full(ll.shape[1], np.inf)
        for j in range(ll.shape[1]):
            with contextlib.suppress(ValueError):
                w, k = array_stats.psislw(ll[:, j][None, :], r_eff=1.0, axis=-1)
                log_w[j], khat[j] = w[0], float(np.asarray(k).ravel()[0])
        return log_w, khat


def loo_pointwise(ll: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(elpd_loo, lpd, pareto k) per column of ``ll`` (draws × groups), by PSIS."""
    log_w, khat = _psislw(ll)
    log_w = log_w - logsumexp(log_w, axis=-1, keepdims=True)
    elpd = logsumexp(log_w + ll.T, axis=-1)
    lpd = logsumexp(ll.T, axis=-1) - np.log(ll.shape[0])
    return elpd, lpd, np.asarray(khat)


def weighted_se(w: np.ndarray, x: np.ndarray) -> float:
    """The standard error of Σ over observations of a pointwise quantity ``x`` held once per group of
    ``w`` identical observations: √(N · weighted variance), N = Σ w (Vehtari et al. 2017, eq. 23)."""
    n = w.sum()
    mean = (w * x).sum() / n
    return float(np.sqrt(n * (w * (x - mean) ** 2).sum() / n))


def latency_loo(d: ModelData, draws: int = 500, chains: int = 2, seed: int = 0, sampler: str = "nutpie",
                progress: bool = False) -> pd.DataFrame:
    """One row per family: elpd_loo, se, p_loo, elpd_diff and se_diff against the best, the largest
    Pareto k, the number of decisions, the shape parameters' posterior medians (``shape``) and ``chosen``."""
    from .build import informative_cells, latency_weights

    # as in the full model, a cell without spread stays out (its tied values: an unbounded density)
    counts = (latency_weights(d) * informative_cells(d.latency)[:, None]).ravel()
    keep = counts > 0
    if not keep.any():  # nothing to compare on (every cell a tick length or empty): an empty table
        return pd.DataFrame(columns=LOO_COLUMNS)
    w = counts[keep]
    n = w.sum()
    point, rows = {}, []
    for fam in NAMES:
        idata = sample_model(latency_only_model(d, fam), draws, draws, chains, seed, sampler, progress)
        post = idata["posterior"]
        ll = np.asarray(post["bin_logp"].values, dtype=float)
        ll = ll.reshape(-1, ll.shape[2] * ll.shape[3])[:, keep]
        elpd, lpd, khat = loo_pointwise(ll)
        point[fam] = elpd
        se = weighted_se(w, elpd)
        shape = ", ".join(f"{p}={np.median(post[p].values):.3g}" for p in family(fam).summaries)
        rows.append(dict(family=fam, elpd_loo=float((w * elpd).sum()), se=se, p_loo=float((w * (lpd - elpd)).sum()),
                         max_pareto_k=float(np.max(khat)), n_decisions=int(n), shape=shape))
    out = pd.DataFrame(rows)
    best = out["elpd_loo"].idxmax()
    diffs = [point[out.loc[best, "family"]] - point[f] for f in out["family"]]
    out["elpd_diff"] = out.loc[best, "elpd_loo"] - out["elpd_loo"]
    out["se_diff"] = [weighted_se(w, x) for x in diffs]
    out["chosen"] = out["family"] == choose_family(out)
    return out


#: PSIS-LOO is unreliable for a group whose Pareto k exceeds this (Vehtari et al. 2024)
MAX_RELIABLE_K = 0.7


def choice_sentence(t: pd.DataFrame, what: str, data: str, file: str) -> str:
    """The sentence both PSIS-LOO choices (latency family, structure) report: which ``what`` was
    chosen on ``data`` (written to ``file``), every candidate's elpd below the best with the SE of the
    difference, and the rule; ``t``: the comparison table indexed by candidate, with ``chosen``."""
    chosen = str(t.index[t["chosen"]][0])
    below = [f"{name} {t.loc[name, 'elpd_diff']:.1f}" + (f" (SE {t.loc[name, 'se_diff']:.1f})"
                                                           if t.loc[name, "elpd_diff"] > 0 else " (best)")
             for name in t.index]
    kind = what.split()[-1]
    return (f"The {what} ({chosen}) was chosen by PSIS-LOO on {data} (`{file}`; elpd below the best: "
            f"{', '.join(below)}; a more complex {kind} must beat the simpler ones by more than "
            f"max({MIN_ELPD_DIFF:g}, {SE_MULTIPLIER:g} SE)).")


def family_choice_summary(table: pd.DataFrame) -> str:
    """One sentence on the latency family's LOO choice for reports (:func:`choice_sentence`), with a
    warning when the chosen family's Pareto k makes the estimate unreliable."""
    t = table.set_index("family")
    chosen = str(t.index[t["chosen"]][0])
    text = choice_sentence(t, "latency family", "the log-latencies' order statistics", "latency_loo.csv")
    k = float(t.loc[chosen, "max_pareto_k"])
    if k > MAX_RELIABLE_K:
        text += (f" Its largest Pareto k is {k:.2f} (> {MAX_RELIABLE_K}): for some (cell, interval) groups the LOO "
                 "estimate is unreliable, so the ranking is approximate; compare the families' fits with the "
                 "latency checks (`--latency-family` normal, t, mixture).")
    return text


def choose_family(table: pd.DataFrame) -> str:
    """The simplest family (in the order of :data:`.families.NAMES`) whose elpd is within
    max(MIN_ELPD_DIFF, SE_MULTIPLIER × se of its difference) of the best's: a more complex family
    must be clearly better than every simpler one. An empty table (no informative latency cell): the
    first, ``normal``."""
    if not len(table):
        return NAMES[0]
    return choose_simplest(table.rename(columns={"family": "name"}), list(NAMES))


def choose_simplest(table: pd.DataFrame, order: list[str]) -> str:
    """Of ``table``'s rows (columns name, elpd_loo, se_diff), the first in ``order`` whose elpd is
    within max(MIN_ELPD_DIFF, SE_MULTIPLIER × se_diff) of the best's; the best when none is."""
    t = table.set_index("name")
    best = t["elpd_loo"].max()
    for name in (n for n in order if n in t.index):
        if best - t.loc[name, "elpd_loo"] <= max(MIN_ELPD_DIFF, SE_MULTIPLIER * float(t.loc[name, "se_diff"])):
            return name
    return str(t["elpd_loo"].idxmax())
