"""What NUTS's warm-up does from each start (issue 13 §1, the sampler profiled): the model fitted to
``leaderboard60`` aggregates from PyMC's jittered initial point and from that point moved uphill
(``sampler.towards_mode``), side by side, printing per chain the log-density at the jittered and the
actual start, the warm-up leapfrog steps, how many warm-up draws hit the maximum tree depth (1,023
steps), the smallest warm-up step size, and the log-density the draws settle at.

    python benchmarks/warmup_trace.py --aggregates d.pkl [--draws 300 --chains 2]
    python benchmarks/warmup_trace.py --tasks 100 --seeds 3

Appends to ``benchmarks/results/warmup_trace.txt``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time

from _leaderboard import add_data_arguments, leaderboard_aggregates
from _results import append_result

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))


def main(argv=None) -> int:
    import numpy as np

    from rtanalysis.model import build, sampler

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_arguments(ap)
    ap.add_argument("--draws", type=int, default=300, help="draws and tuning steps per chain")
    ap.add_argument("--chains", type=int, default=2)
    args = ap.parse_args(argv)
    d, label = leaderboard_aggregates(args)
    lines = [f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {label}: {len(d.episodes):,} episodes; "
             f"{args.chains} chains x {args.draws} draws ({args.draws} tuning), seed 0; load average "
             f"{tuple(round(x, 1) for x in os.getloadavg())}",
             f"{'start':12s} {'chain':>5s} {'logp jittered':>14s} {'logp start':>12s} {'warm-up steps':>13s} "
             f"{'draws at 1023':>13s} {'min step':>9s} {'logp of draws':>14s} {'sampling s (all chains, one core)':>10s}"]
    model = build.build_model(d)
    jittered = sampler.compile_model_c(model, init_steps=0)
    logp = jittered._make_logp_func()
    for name, steps in (("jittered", 0), ("moved uphill", sampler.INIT_OPTIMISE_STEPS)):
        compiled = sampler.compile_model_c(model, init_steps=steps)
        starts = []  # (log-density at the jittered point, at the start) of each chain, in order

        def recorded(seed, make=compiled._make_initial_points):
            x = make(seed)
            starts.append((float(logp(jittered._make_initial_points(seed))[0]), float(logp(x)[0])))
            return x

        compiled = dataclasses.replace(compiled, _make_initial_points=recorded)
        t = time.perf_counter()
        # one chain after another in this process, so that the starts are recorded here
        idata = sampler.sample_chains(compiled, draws=args.draws, tune=args.draws, chains=args.chains, seed=0,
                                      cores=1)
        seconds = time.perf_counter() - t
        warm, post = idata["warmup_sample_stats"], idata["sample_stats"]
        for c in range(args.chains):
            n_steps = np.asarray(warm["n_steps"])[c]
            lines.append(f"{name:12s} {c:5d} {starts[c][0]:14.4g} {starts[c][1]:12.4g} {int(n_steps.sum()):13,d} "
                         f"{int((n_steps >= 1023).sum()):13d} {float(np.asarray(warm['step_size'])[c].min()):9.2g} "
                         f"{float(np.median(np.asarray(post['logp'])[c])):14.5g} {seconds:10.1f}")
    append_result("warmup_trace.txt", "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
