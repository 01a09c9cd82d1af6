"""Fit speed: N vs 100×N episodes, nutpie vs PyMC NUTS, aggregated vs per-row likelihood, the CLI
on data/example. Prints ratios side by side. Run: .venv/bin/python benchmarks/bench_fit.py [--quick]"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))

import numpy as np  # noqa: E402

QUICK = "--quick" in sys.argv


def timed(f):
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


def fit_time(lr, **kw):
    from rtanalysis import fit

    opts = dict(draws=500, chains=2, seed=0, progress=False)
    opts.update(kw)
    return timed(lambda: fit(lr, **opts))


def per_row_model(lr):
    """The same capability × timing structure with one likelihood term per episode and decision."""
    import pymc as pm
    import pytensor.tensor as pt

    from rtanalysis.model.data import aggregate

    d = aggregate(lr.episodes, lr.steps)
    e = d.episodes
    st = lr.steps
    acted = st["latency"].notna().to_numpy()
    ep_m = pd_codes(st["model"], d.models)[acted]
    ep_k = pd_codes(st["task_type"], d.task_types)[acted]
    x = np.log(st["latency"].to_numpy()[acted])
    with pm.Model(coords={"model": d.models, "task_type": d.task_types}) as m:
        mu = pm.Normal("mu", 0, 2, dims=("model", "task_type"))
        ls = pm.Normal("ls", 0, 1, dims=("model", "task_type"))
        pm.Normal("x", mu[ep_m, ep_k], pt.exp(ls[ep_m, ep_k]), observed=x)
        eta = pm.Normal("eta", 0, 1.5, dims=("model", "task_type"))
        f = pm.Beta("f", 1, 1, dims="task_type")
        p = pm.math.sigmoid(eta[e["m"].to_numpy(), e["k"].to_numpy()]) * (1 - f[e["k"].to_numpy()]) ** e["M"].to_numpy()
        pm.Bernoulli("y", p=p, observed=e["y"].to_numpy())
    return m


def pd_codes(s, levels):
    import pandas as pd

    return pd.Categorical(s.astype(object), categories=levels).codes


def main():
    from rtanalysis.model.toy import toy_load

    rows = []
    small = toy_load(n_per_cell=20, seed=1, labelled=False)
    big = toy_load(n_per_cell=2000 if not QUICK else 200, seed=1, labelled=False)
    fit_time(small, draws=50)  # warm the compile cache
    t1, _ = fit_time(small)
    t2, _ = fit_time(big)
    rows.append((f"fit time, N vs {len(big.episodes) // len(small.episodes)}xN episodes", f"{len(small.episodes)} ep", t1, f"{len(big.episodes)} ep", t2))
    t3, _ = fit_time(small, sampler="pymc")
    rows.append(("sampler (N episodes)", "nutpie", t1, "pymc NUTS", t3))
    try:
        import numpyro  # noqa: F401
    except ImportError:
        print("note: numpyro/jax not installed: numpyro sampler skipped")
    # aggregated vs per-row at ~10^4 episodes
    import pymc as pm

    lr4 = toy_load(n_per_cell=1700 if not QUICK else 170, seed=2, labelled=False)
    t4, _ = fit_time(lr4)
    m = per_row_model(lr4)
    t5, _ = timed(lambda: pm.sample(draws=500, tune=500, chains=2, cores=2, random_seed=0, model=m,
                                    progressbar=False, nuts_sampler="nutpie"))
    rows.append((f"aggregated vs per-row ({len(lr4.episodes)} episodes)", "aggregated", t4, "per-row", t5))
    # CLI on the example, 4 chains x 1000 draws
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "rtanalysis.cli", "fit", "data/example", "--out", tmp, "--quiet"]
        t6, _ = timed(lambda: subprocess.run(cmd + ["--draws", "1000", "--chains", "4"], check=True,
                                             capture_output=True))
    rows.append(("rtanalysis fit data/example 4x1000 (warm cache)", "wall s", t6, "target", 60.0))
    print(f"{'benchmark':<52} {'A':>14} {'s':>8} {'B':>14} {'s':>8} {'B/A':>7}")
    for name, a, ta, b, tb in rows:
        print(f"{name:<52} {a:>14} {ta:8.1f} {b:>14} {tb:8.1f} {tb / ta:7.2f}")


if __name__ == "__main__":
    main()
