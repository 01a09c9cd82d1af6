"""Where NUTS starts (issue 13 §1: the sampler profiled): each chain from its jittered initial point
(PyMC's ``support_point`` + jitter, the former start) against the same point moved
``INIT_OPTIMISE_STEPS`` L-BFGS iterations uphill (``rtanalysis.model.sampler.towards_mode``, the
default), side by side on one ``leaderboard60`` dataset at the defaults (``fit``, 4 chains × 1000
draws, tune "auto"): sampling seconds and their ratio, leapfrog steps (gradients) in warm-up and in
the draws per chain, step sizes, R-hat, bulk/tail ESS, divergences, retries, and how far the
decomposition moves (largest and mean |difference| of p_capable, p_timely, share_timing posterior
means in units of the reference's posterior SD; a second seed of the reference gives the Monte Carlo
noise floor of that shift).

    python benchmarks/bench_init.py [--tasks 100 --seeds 3] [--settings 0 100 0:1]

``--settings``: init steps[:seed]; the first is the reference. Appends to
``benchmarks/results/bench_init.txt``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from _results import append_result, shift_in_sd

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))


def per_chain(idata, group: str) -> str:
    import numpy as np

    if group not in idata.children:
        return "-"
    return "/".join(str(int(v)) for v in np.asarray(idata[group]["n_steps"]).sum(axis=1))


def main(argv=None) -> int:
    import numpy as np
    import pandas as pd

    from rtanalysis.model import fit, sampler
    from rtanalysis.simulate import simulate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--settings", nargs="+", default=["0", "100", "0:1"])
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    lr = simulate("leaderboard60", seed=0, tasks=args.tasks, seeds=args.seeds).load()
    print(f"simulated and loaded in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    rows, ref = [], None
    default = sampler.INIT_OPTIMISE_STEPS
    for setting in args.settings:
        steps, seed = (int(x) for x in (setting + ":0").split(":")[:2])
        sampler.INIT_OPTIMISE_STEPS = steps
        try:
            res = fit(lr, draws=args.draws, chains=args.chains, seed=seed, progress=False)
        finally:
            sampler.INIT_OPTIMISE_STEPS = default
        d, idata = res.diagnostics, res.idata
        dec = res.decomposition().set_index(["model", "task_type", "clock"])
        if ref is None:
            ref = dec
        steps_size = np.asarray(idata["sample_stats"]["step_size"]).mean(axis=1)
        rows.append({"init_steps": steps, "seed": seed,
                     "sampling_s": round(float(d.get("sampling_only_seconds", d["sampling_seconds"])), 1),
                     "warmup_grads": per_chain(idata, "warmup_sample_stats"),
                     "draw_grads": per_chain(idata, "sample_stats"),
                     "step_size": "/".join(f"{s:.2f}" for s in steps_size),
                     "max_rhat": round(d["max_rhat"], 4), "min_ess_bulk": round(d["min_ess_bulk"]),
                     "min_ess_tail": round(d["min_ess_tail"]), "divergences": d["n_divergent"],
                     "retried": bool(d.get("retried", False)), "ok": d["ok"],
                     **shift_in_sd(dec, ref)})
        print(rows[-1], file=sys.stderr, flush=True)
    table = pd.DataFrame(rows)
    table["sampling_ratio"] = (table["sampling_s"] / table["sampling_s"].iloc[0]).round(2)
    text = (f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; leaderboard60 --tasks {args.tasks} --seeds "
            f"{args.seeds}: {len(lr.episodes):,} episodes, {len(lr.steps):,} decisions; {args.chains} chains x "
            f"{args.draws} draws; load average {tuple(round(x, 1) for x in os.getloadavg())}\n"
            f"{table.to_string(index=False)}\n")
    append_result("bench_init.txt", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
