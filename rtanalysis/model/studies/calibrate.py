"""Calibration: simulate from a known design, fit, and measure interval coverage and error.

Scored: the decomposition (p_capable, p_timely, p_success, share_timing per row) and the
counterfactuals p_success at λ = 0.5 and 2 (``p_success@x0.5``, ``p_success@x2``) and with another
model's latency (``p_success@as``, pooled over the other models), against Monte Carlo truth that
keeps each decision's content and changes only its latency (:mod:`rtanalysis.simulate.misspec`).
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

KEYS = ["model", "task_type", "clock"]
#: the quantities whose posteriors are scored against the truth
CHECKED = ("p_capable", "p_timely", "p_success", "share_timing")
#: latency scales scored as counterfactuals
CF_LAMBDAS = (0.5, 2.0)
#: the counterfactual quantities scored with ``counterfactuals``
CF_QUANTITIES = ("p_success@x0.5", "p_success@x2", "p_success@as")


def _score_frame(m: pd.DataFrame, q: str, truth: str, est: str, label: str | None = None) -> pd.DataFrame:
    return pd.DataFrame({
        **{k: m[k] for k in KEYS}, "quantity": label or q, "truth": m[truth], "estimate": m[est],
        "lo": m[f"{est}_lo"], "hi": m[f"{est}_hi"],
        "covered": (m[f"{est}_lo"] <= m[truth]) & (m[truth] <= m[f"{est}_hi"]),
        "abs_error": (m[est] - m[truth]).abs()})


def score_fit(decomposition: pd.DataFrame, truth: pd.DataFrame) -> pd.DataFrame:
    """Per row and quantity: truth, estimate, interval, covered, abs_error."""
    m = decomposition.merge(truth, on=KEYS, suffixes=("", "_true"))
    return pd.concat([_score_frame(m, q, f"{q}_true", q) for q in CHECKED], ignore_index=True)


def score_counterfactuals(counterfactuals: pd.DataFrame, cf_truth: pd.DataFrame) -> pd.DataFrame:
    """Per counterfactual row: ``p_success@x<λ>`` (scenario ``scale``, λ ≠ 1) or ``p_success@as``
    (``as:<model>``) with truth, estimate, interval, covered, abs_error (and the scenario)."""
    keys = KEYS + ["scenario", "lambda"]
    m = counterfactuals.merge(cf_truth.rename(columns={"p_success": "p_success_true"}), on=keys)
    m = m[(m["scenario"] != "scale") | (m["lambda"] != 1.0)].reset_index(drop=True)
    labels = np.where(m["scenario"] == "scale", "p_success@x" + m["lambda"].map("{:g}".format), "p_success@as")
    out = _score_frame(m, "p_success", "p_success_true", "p_success")
    out["quantity"] = labels
    out["scenario"] = m["scenario"].to_numpy()
    return out


def _one_replicate(preset: str, r: int, seed: int, draws: int, chains: int, ci_prob: float, labelled: bool,
                   counterfactuals: bool, sim_overrides: dict, spec=None, on_fit=None):
    """(scores, diagnostics) of one simulated replicate's fit; ``on_fit(res)``, if given, also sees the
    :class:`~rtanalysis.model.result.FitResult` (a study that records more of the same fit)."""
    from ...simulate import simulate
    from ...simulate.misspec import counterfactual_truth
    from ..fit import fit

    sim = simulate(preset, seed=seed + r, labelled=labelled, **sim_overrides)
    res = fit(sim.load(), spec, draws=draws, chains=chains, seed=seed + r, ci_prob=ci_prob, progress=False, tune=None)
    if on_fit is not None:
        on_fit(res)
    s = score_fit(res.decomposition(), sim.truth)
    if counterfactuals:
        cf = res.counterfactuals(lambdas=(1.0, *CF_LAMBDAS), as_models=True)
        s = pd.concat([s, score_counterfactuals(cf, counterfactual_truth(sim, reps=200))], ignore_index=True)
    s["rep"] = r
    s["latency_family"] = res.spec.latency_family  # the one fitted (``auto`` chooses per replicate)
    s["structure"] = res.spec.structure
    return s, res.diagnostics


def calibrate(preset: str, reps: int = 5, seed: int = 0, draws: int = 500, chains: int = 4,
              ci_prob: float = 0.9, labelled: bool = True, progress: bool = False, counterfactuals: bool = True,
              return_scores: bool = False, **sim_overrides) -> pd.DataFrame:
    """Coverage of the ``ci_prob`` interval and mean absolute error per quantity over ``reps`` replicates
    (seeds ``seed``, ``seed+1``, ...). Returns a tidy frame: quantity, coverage, mae, n_cells, reps, the
    share of fits that passed the diagnostics, the worst R-hat and bulk ESS, the total divergences.
    Quantities: :data:`~rtanalysis.model.studies.calibrate.CHECKED` and, with ``counterfactuals``,
    :data:`~rtanalysis.model.studies.calibrate.CF_QUANTITIES`. ``return_scores``: also return the per-row
    scores (a second frame)."""
    from ...simulate import PRESETS
    from ...simulate.presets import MISSPEC_PRESETS

    if preset not in PRESETS and preset not in MISSPEC_PRESETS:
        raise KeyError(f"unknown preset {preset!r}; one of {sorted(PRESETS) + sorted(MISSPEC_PRESETS)}")
    scores, diagnostics = [], []
    for r in range(reps):
        s, diag = _one_replicate(preset, r, seed, draws, chains, ci_prob, labelled, counterfactuals, sim_overrides)
        scores.append(s)
        diagnostics.append(diag)
        if progress:
            print(f"calibrate {preset}: replicate {r + 1}/{reps} done", file=sys.stderr)
    s = pd.concat(scores, ignore_index=True)
    out = (s.groupby("quantity", sort=False)
           .agg(coverage=("covered", "mean"), mae=("abs_error", "mean"), n_cells=("covered", "size"))
           .reset_index())
    out.insert(0, "preset", preset)
    out["labelled"] = labelled
    out["ci_prob"] = ci_prob
    out["reps"] = reps
    out["fits_ok"] = float(np.mean([x["ok"] for x in diagnostics]))
    out["worst_rhat"] = max(x["max_rhat"] for x in diagnostics)
    out["worst_ess_bulk"] = min(x["min_ess_bulk"] for x in diagnostics)
    out["divergences"] = int(sum(x["n_divergent"] for x in diagnostics))
    return (out, s) if return_scores else out
