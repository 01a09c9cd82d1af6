"""Calibration: simulate from a known design, fit, and measure interval coverage and error."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

KEYS = ["model", "task_type", "clock"]
CHECKED = ("p_capable", "p_timely", "p_success", "share_timing")


def score_fit(decomposition: pd.DataFrame, truth: pd.DataFrame) -> pd.DataFrame:
    """Per row and quantity: truth, estimate, interval, covered, abs_error."""
    m = decomposition.merge(truth, on=KEYS, suffixes=("", "_true"))
    parts = []
    for q in CHECKED:
        parts.append(pd.DataFrame({
            **{k: m[k] for k in KEYS}, "quantity": q, "truth": m[f"{q}_true"], "estimate": m[q],
            "lo": m[f"{q}_lo"], "hi": m[f"{q}_hi"],
            "covered": (m[f"{q}_lo"] <= m[f"{q}_true"]) & (m[f"{q}_true"] <= m[f"{q}_hi"]),
            "abs_error": (m[q] - m[f"{q}_true"]).abs()}))
    return pd.concat(parts, ignore_index=True)


def calibrate(preset: str, reps: int = 5, seed: int = 0, draws: int = 500, chains: int = 4,
              interval: float = 0.9, labelled: bool = True, progress: bool = False, **sim_overrides) -> pd.DataFrame:
    """Coverage of the ``interval`` and mean absolute error per quantity over ``reps`` replicates
    (seeds ``seed``, ``seed+1``, ...). Returns a tidy frame: quantity, coverage, mae, n_cells, reps, the
    share of fits that passed the diagnostics, the worst R-hat and bulk ESS, the total divergences."""
    from ..simulate import PRESETS, simulate
    from .fit import fit

    if preset not in PRESETS:
        raise KeyError(f"unknown preset {preset!r}; one of {sorted(PRESETS)}")
    scores, diagnostics = [], []
    for r in range(reps):
        sim = simulate(preset, seed=seed + r, labelled=labelled, **sim_overrides)
        res = fit(sim.load(), draws=draws, chains=chains, seed=seed + r, interval=interval, progress=False)
        s = score_fit(res.decomposition(), sim.truth)
        s["rep"] = r
        scores.append(s)
        diagnostics.append(res.diagnostics)
        if progress:
            print(f"calibrate {preset}: replicate {r + 1}/{reps} done", file=sys.stderr)
    s = pd.concat(scores, ignore_index=True)
    out = (s.groupby("quantity", sort=False)
           .agg(coverage=("covered", "mean"), mae=("abs_error", "mean"), n_cells=("covered", "size"))
           .reset_index())
    out.insert(0, "preset", preset)
    out["labelled"] = labelled
    out["interval"] = interval
    out["reps"] = reps
    out["fits_ok"] = float(np.mean([x["ok"] for x in diagnostics]))
    out["worst_rhat"] = max(x["max_rhat"] for x in diagnostics)
    out["worst_ess_bulk"] = min(x["min_ess_bulk"] for x in diagnostics)
    out["divergences"] = int(sum(x["n_divergent"] for x in diagnostics))
    return out
