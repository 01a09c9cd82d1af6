"""How many draws leaderboard-scale data need (issue 13's "fewer default draws for data this
informative"): one ``leaderboard60`` dataset, the fit at several (draws, tune) per chain side by
side: sampling seconds, R-hat, bulk/tail ESS, divergences, whether the diagnostics gate passes, and
how far the decomposition moves from the default setting's (largest and mean |difference| of p_timely,
share_timing, p_capable posterior means in units of the default's posterior SD; the reference's
settings with another seed give the Monte Carlo noise floor of both).

    python benchmarks/bench_draws.py [--tasks 100 --seeds 3] [--settings 1000:1000 500:500 500:1000 1000:1000:1]

Results are appended to ``benchmarks/results/bench_draws.txt``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from _results import append_result, shift_in_sd

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))


def main(argv=None) -> int:
    import pandas as pd

    from rtanalysis.model import fit
    from rtanalysis.simulate import simulate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--settings", nargs="+", default=["1000:1000", "500:500", "500:1000"],
                    help="draws:tune[:seed] per chain (seed 0 by default); the first is the reference, and the "
                         "reference's draws and tune with another seed give the Monte Carlo noise floor of the shift")
    args = ap.parse_args(argv)
    lr = simulate("leaderboard60", seed=0, tasks=args.tasks, seeds=args.seeds).load()
    rows, ref = [], None
    for setting in args.settings:
        draws, tune, seed = (int(x) for x in (setting + ":0").split(":")[:3])
        t0 = time.perf_counter()
        res = fit(lr, draws=draws, chains=args.chains, seed=seed, progress=False, tune=tune)
        wall = time.perf_counter() - t0
        d = res.diagnostics
        dec = res.decomposition().set_index(["model", "task_type", "clock"])
        if ref is None:
            ref = dec
        rows.append({"draws": draws, "tune": tune, "seed": seed, "chains": args.chains, "fit_s": round(wall, 1),
                     "sampling_s": round(float(d.get("sampling_only_seconds", d.get("sampling_seconds", 0))), 1),
                     "max_rhat": round(d["max_rhat"], 4), "min_ess_bulk": round(d["min_ess_bulk"]),
                     "min_ess_tail": round(d["min_ess_tail"]), "divergences": d["n_divergent"], "ok": d["ok"],
                     **shift_in_sd(dec, ref)})
        print(rows[-1], file=sys.stderr, flush=True)
    table = pd.DataFrame(rows)
    base = table["sampling_s"].iloc[0]
    table["sampling_ratio"] = (table["sampling_s"] / base).round(2)
    text = (f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; leaderboard60 --tasks {args.tasks} --seeds "
            f"{args.seeds}: {len(lr.episodes):,} episodes, {len(lr.steps):,} decisions; load average "
            f"{tuple(round(x, 1) for x in os.getloadavg())}\n{table.to_string(index=False)}\n")
    append_result("bench_draws.txt", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
