"""Parameterisation and mass-matrix adaptation, side by side, on ``leaderboard60`` (issue 13 §1:
where the sampling time goes, measured): for each variant, the log-density + gradient time, NUTS'
step size and leapfrog steps per draw, sampling seconds, the worst bulk ESS (all main parameters and
``sd_item_cap``) and ESS per second.

Variants: item effects per item centred or non-centred by their number of episodes (the default,
``build.ITEM_CENTRED_MIN_EPISODES``) vs all non-centred (the former model); nutpie's diagonal mass
matrix (the default) vs its low-rank adaptation.

    .venv/bin/python benchmarks/bench_params.py [--tasks 100 --seeds 3] [--draws 200 --chains 2]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))

VARIANTS = {  # name: (items all non-centred?, nutpie options)
    "items by count, diag": (False, {}),
    "items non-centred, diag": (True, {}),
    "items by count, low_rank": (False, {"adaptation": "low_rank"}),
}


def gradient_ms(model, n: int = 50) -> float:
    import numpy as np
    import pytensor
    import pytensor.tensor as pt

    logp = model.logp()
    f = pytensor.function(model.value_vars, [logp] + pt.grad(logp, model.value_vars), trust_input=True)
    ip = model.initial_point()
    args = [np.asarray(ip[v.name]) for v in model.value_vars]
    f(*args)
    t = time.perf_counter()
    for _ in range(n):
        f(*args)
    return (time.perf_counter() - t) / n * 1000


def variant(d, non_centred: bool, options: dict, draws: int, chains: int) -> dict:
    import numpy as np

    from rtanalysis.model import build
    from rtanalysis.model.diagnostics import diagnose
    from rtanalysis.model.sampler import compile_model_c, sample_chains

    saved = build.ITEM_CENTRED_MIN_EPISODES
    build.ITEM_CENTRED_MIN_EPISODES = 10**12 if non_centred else saved
    try:
        model = build.build_model(d)
    finally:
        build.ITEM_CENTRED_MIN_EPISODES = saved
    grad = gradient_ms(model)
    compiled = compile_model_c(model)
    t = time.perf_counter()
    idata = sample_chains(compiled, draws=draws, tune=draws, chains=chains, seed=0, options=options)
    seconds = time.perf_counter() - t
    ss = idata["sample_stats"]
    names = [v for v in build.MAIN_PARAMS if v in idata["posterior"]]
    diag, table = diagnose(idata, names)
    item_ess = table.loc[table["param"].astype(str).str.startswith("sd_item_cap"), "ess_bulk"].min()
    return {"grad_ms": grad, "step_size": float(np.asarray(ss["step_size"]).mean()),
            "n_steps": float(np.asarray(ss["n_steps"]).mean()), "sampling_s": seconds,
            "min_ess": diag["min_ess_bulk"], "item_sd_ess": float(item_ess), "max_rhat": diag["max_rhat"],
            "ess_per_s": diag["min_ess_bulk"] / seconds}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--chains", type=int, default=2)
    args = ap.parse_args(argv)
    from rtanalysis.model.data import aggregate
    from rtanalysis.simulate import simulate

    lr = simulate("leaderboard60", seed=0, tasks=args.tasks, seeds=args.seeds).load()
    d = aggregate(lr.episodes, lr.steps)
    print(f"# leaderboard60 --tasks {args.tasks} --seeds {args.seeds}: {len(lr.episodes)} episodes, "
          f"{d.summary()['labelled_groups']} labelled groups, {len(d.items)} items; "
          f"{args.chains} chains x {args.draws} draws ({args.draws} tuning); load average {os.getloadavg()[0]:.1f}")
    print(f"{'variant':28s} {'grad ms':>8s} {'step':>6s} {'steps':>6s} {'sample s':>9s} {'min ESS':>8s} "
          f"{'sd_item ESS':>12s} {'R-hat':>6s} {'ESS/s':>7s}")
    rows = {}
    for name, (nc, opts) in VARIANTS.items():
        r = rows[name] = variant(d, nc, opts, args.draws, args.chains)
        print(f"{name:28s} {r['grad_ms']:8.2f} {r['step_size']:6.3f} {r['n_steps']:6.1f} {r['sampling_s']:9.1f} "
              f"{r['min_ess']:8.0f} {r['item_sd_ess']:12.0f} {r['max_rhat']:6.3f} {r['ess_per_s']:7.2f}", flush=True)
    base = rows["items by count, diag"]["ess_per_s"]
    print("ratios of ESS/s to the default: " + ", ".join(f"{k} {v['ess_per_s'] / base:.2f}x" for k, v in rows.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
