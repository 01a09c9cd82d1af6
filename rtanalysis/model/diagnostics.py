"""Convergence diagnostics over the model's main parameters (never hide a failed fit)."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: a fit is trusted only when all of these hold over the main parameters
THRESHOLDS = {"max_rhat": 1.01, "min_ess_bulk": 400, "min_ess_tail": 400, "max_divergent": 0}


def diagnostics_table(idata, var_names) -> pd.DataFrame:
    """Tidy per-parameter table: param, rhat, ess_bulk, ess_tail."""
    import arviz as az

    # a parameter that is constant by construction (a zero-sum effect over one model) has no R-hat or
    # ESS: NaN, skipped by the gate, without numpy's divide warnings reaching the user
    with np.errstate(divide="ignore", invalid="ignore"):
        s = az.summary(idata, var_names=list(var_names), kind="diagnostics", round_to="none")
    s = s.reset_index().rename(columns={"index": "param", "r_hat": "rhat"})
    if "param" not in s.columns:
        s = s.rename(columns={s.columns[0]: "param"})
    return s[["param", "rhat", "ess_bulk", "ess_tail"]].astype({"rhat": float, "ess_bulk": float, "ess_tail": float})


def diagnose(idata, var_names) -> tuple[dict, pd.DataFrame]:
    """The diagnostics dict of a fit and its per-parameter table."""

    table = diagnostics_table(idata, var_names)
    ss = idata["sample_stats"]
    div = int(np.asarray(ss["diverging"].values).sum()) if "diverging" in ss else 0
    bfmi = []
    if "energy" in ss and int(ss.sizes.get("draw", 0)) > 1:  # E-BFMI per chain, ArviZ 1's estimate
        from arviz_stats import bfmi as arviz_bfmi

        with np.errstate(divide="ignore", invalid="ignore"):
            bfmi = [float(x) for x in np.ravel(arviz_bfmi(idata)["energy"].values)]
    n_chains = int(idata["posterior"].sizes["chain"])
    max_rhat = float(table["rhat"].max()) if n_chains > 1 else float("nan")
    out = {
        "max_rhat": max_rhat,
        "min_ess_bulk": float(table["ess_bulk"].min()),
        "min_ess_tail": float(table["ess_tail"].min()),
        "n_divergent": div,
        "bfmi": bfmi,
        "n_chains": n_chains,
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
    out["failed_params"] = failing_parameters(table)["param"].astype(str).head(20).tolist()
    out["advice"] = advice(out, table)
    return out, table


def failing_parameters(table: pd.DataFrame) -> pd.DataFrame:
    """Rows of the per-parameter table that fail the R-hat or ESS thresholds, worst first, with the
    parameter's base name (``model_cap[lb-03]`` → ``model_cap``) in ``group``."""
    t = THRESHOLDS
    bad = table[(table["rhat"] > t["max_rhat"]) | (table["ess_bulk"] < t["min_ess_bulk"])
                | (table["ess_tail"] < t["min_ess_tail"])].copy()
    bad["group"] = bad["param"].astype(str).str.replace(r"\[.*$", "", regex=True)
    return bad.sort_values(["rhat", "ess_bulk"], ascending=[False, True])


def advice(diag: dict, table: pd.DataFrame) -> str:
    """What failed and what to try, in a few lines (empty when the fit passed): the CLI and the report
    print it under a failed gate."""
    if diag.get("ok"):
        return ""
    lines = []
    bad = failing_parameters(table)
    if len(bad):
        worst = bad.groupby("group", sort=False).agg(n=("param", "size"), rhat=("rhat", "max"),
                                                     ess=("ess_bulk", "min"), tail=("ess_tail", "min"))
        parts = [f"{g} ({int(r['n'])} value{'s' if r['n'] > 1 else ''}: max R-hat {r['rhat']:.3f}, "
                 f"min bulk ESS {r['ess']:.0f}, min tail ESS {r['tail']:.0f})" for g, r in worst.head(6).iterrows()]
        lines.append("failed: " + "; ".join(parts))
        lines.append("try: more tuning and draws (fit(..., tune='auto') retries once with 3x tuning and 2x draws; "
                     "CLI --tune auto, or --tune 3000 --draws 2000); more chains give R-hat more power")
        if set(worst.index) & {"sd_item_cap", "z_item_cap"}:
            lines.append("item effects mix slowly when items have few episodes each: more draws, or fit "
                         "without task ids (no item effects)")
        if set(worst.index) & {"fatality", "always_fatal"}:
            lines.append("timing fatality is weakly identified when few episodes miss a window: its interval "
                         "is wide; the other quantities may still be usable once the rest converges")
    if diag.get("n_divergent", 0) > 0:
        lines.append(f"{diag['n_divergent']} divergent transitions: the posterior has a funnel or a sharp edge; "
                     "smaller steps help (tune='auto' retries with target_accept 0.95), otherwise check cells "
                     "where every episode succeeds or fails, or fit more episodes per task type")
    bfmi = [b for b in diag.get("bfmi", []) if b == b]
    if bfmi and min(bfmi) < 0.3:
        lines.append(f"low E-BFMI ({min(bfmi):.2f}): heavy-tailed energy, usually a hierarchical scale; "
                     "longer tuning helps the mass matrix")
    if int(diag.get("n_chains", 2)) < 2:
        lines.append("one chain cannot show convergence: use chains >= 2 (default 4)")
    return "\n".join(lines)
