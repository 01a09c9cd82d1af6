"""Convergence diagnostics over the model's main parameters (never hide a failed fit)."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: a fit is trusted only when all of these hold over the main parameters
THRESHOLDS = {"max_rhat": 1.01, "min_ess_bulk": 400, "min_ess_tail": 400, "max_divergent": 0}


def diagnostics_table(idata, var_names) -> pd.DataFrame:
    """Tidy per-parameter table: param, rhat, ess_bulk, ess_tail."""
    import arviz as az

    s = az.summary(idata, var_names=list(var_names), kind="diagnostics", round_to="none")
    s = s.reset_index().rename(columns={"index": "param", "r_hat": "rhat"})
    if "param" not in s.columns:
        s = s.rename(columns={s.columns[0]: "param"})
    return s[["param", "rhat", "ess_bulk", "ess_tail"]].astype({"rhat": float, "ess_bulk": float, "ess_tail": float})


def diagnose(idata, var_names) -> tuple[dict, pd.DataFrame]:
    """The diagnostics dict of a fit and its per-parameter table."""
    import arviz as az

    table = diagnostics_table(idata, var_names)
    ss = idata["sample_stats"]
    div = int(np.asarray(ss["diverging"].values).sum()) if "diverging" in ss else 0
    bfmi = []
    if "energy" in ss:  # E-BFMI per chain: mean squared energy change over the energy variance
        e = np.asarray(ss["energy"].values, dtype=float).reshape(int(ss.sizes["chain"]), -1)
        bfmi = [float(np.mean(np.diff(c) ** 2) / np.var(c)) if len(c) > 1 and np.var(c) > 0 else float("nan")
                for c in e]
    n_chains = int(idata["posterior"].sizes["chain"])
    max_rhat = float(table["rhat"].max()) if n_chains > 1 else float("nan")
    out = {
        "max_rhat": max_rhat,
        "min_ess_bulk": float(table["ess_bulk"].min()),
        "min_ess_tail": float(table["ess_tail"].min()),
        "n_divergent": div,
        "bfmi": bfmi,
        "thresholds": dict(THRESHOLDS),
    }
    # one chain cannot show non-convergence: R-hat is undefined, so such a fit is never "ok"
    out["ok"] = bool(
        n_chains > 1
        and np.isfinite(max_rhat) and max_rhat <= THRESHOLDS["max_rhat"]
        and out["min_ess_bulk"] >= THRESHOLDS["min_ess_bulk"]
        and out["min_ess_tail"] >= THRESHOLDS["min_ess_tail"]
        and div <= THRESHOLDS["max_divergent"]
    )
    return out, table
