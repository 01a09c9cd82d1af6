"""Prior sensitivity (power-scaling, arviz_stats) of share_timing and p_timely on the bundled example,
its cost, and the diagnostic's noise floor at this number of draws; and p_silent (one definition: the
share of windowed decisions logged with no action) against the observed share and the truth.

    .venv/bin/python benchmarks/prior_sensitivity_example.py [--draws 1000 --chains 4] [--fit-dir DIR]

Prints: fit seconds, prior_sensitivity() seconds (graph build + cached compile + per-draw
evaluation + psense), the table, the noise floor (sensitivity of 50 independent N(0, 1) draws per
draw: a quantity the prior cannot move) and the p_silent comparison per timed row.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))


def main() -> None:
    import numpy as np
    import pandas as pd

    from rtanalysis import load
    from rtanalysis.model.build import build_model
    from rtanalysis.model.sensitivity import (
        log_prior_likelihood,
        power_scaling,
        sensitivity_tree,
    )
    from rtanalysis.report.pipeline import load_or_fit

    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--fit-dir", default="/tmp/rtanalysis_example_fit")
    a = ap.parse_args()
    pd.set_option("display.width", 200)
    lr = load("data/example")
    t0 = time.time()
    res = load_or_fit(lr, a.fit_dir, draws=a.draws, chains=a.chains, seed=0)
    print(f"fit (or cached fit): {time.time() - t0:.1f} s; diagnostics ok={res.diagnostics['ok']}")
    t0 = time.time()
    ps = res.prior_sensitivity()
    print(f"prior_sensitivity(): {time.time() - t0:.1f} s for {res.idata['posterior'].sizes['draw']} draws x "
          f"{res.idata['posterior'].sizes['chain']} chains")
    print(ps.round(3).to_string(index=False))
    print("flagged:", int(ps["flag"].sum()), "of", len(ps))
    lp, ll = log_prior_likelihood(build_model(res.data, res.latency_family), res.idata["posterior"])
    noise = np.random.default_rng(0).normal(size=(50, lp.size))
    rows = pd.DataFrame({"model": "noise", "task_type": "noise", "clock": "wall"}, index=range(50))
    floor = power_scaling(sensitivity_tree({"noise": noise}, lp, ll), rows)
    for c in ("prior_sensitivity", "likelihood_sensitivity"):
        q = floor[c].quantile([0.5, 0.95, 1.0]).round(3).tolist()
        print(f"noise floor {c}: median {q[0]}, p95 {q[1]}, max {q[2]}")
    silence_table(res)


def silence_table(res) -> None:
    """Fitted p_silent (mean, 95 % interval) vs the observed no-action share and the truth per timed row."""
    import pandas as pd

    keys = ["model", "task_type", "clock"]
    st = res.steps
    w = st[st["window_close"].notna() & (st["clock"].astype(str) != "paused")]
    obs = (w.assign(**{k: w[k].astype(str) for k in keys}).groupby(keys)["no_action"]
           .agg(observed="mean", n="size").reset_index())
    dec = res.decomposition()[keys + ["p_silent", "p_silent_lo", "p_silent_hi", "p_late"]]
    t = dec.merge(obs, on=keys)
    truth = pd.read_csv("data/example/truth.csv")
    if "p_silent" in truth:
        t = t.merge(truth[keys + ["p_silent"]].rename(columns={"p_silent": "truth"}), on=keys, how="left")
    inside = (t["p_silent_lo"] <= t["observed"]) & (t["observed"] <= t["p_silent_hi"])
    print(t.round(4).to_string(index=False))
    print(f"observed no-action share inside the 95% interval of p_silent: {int(inside.sum())} of {len(t)} rows")
    if "truth" in t:
        cov = (t["p_silent_lo"] <= t["truth"]) & (t["truth"] <= t["p_silent_hi"])
        print(f"truth inside the 95% interval of p_silent: {int(cov.sum())} of {len(t)} rows")


if __name__ == "__main__":
    main()
