"""Is a short tuning phase enough at leaderboard scale? The model fitted to ``leaderboard60`` at one
size with several tuning lengths side by side (4 chains x 1000 draws, seed 0), printing per chain
the final step size and the leapfrog steps of warm-up and draws, and the diagnostics gate.

    python benchmarks/bench_tune.py [--tasks 100 --seeds 32] [--tune 300 1000]
    python benchmarks/bench_tune.py --aggregates d.pkl --tune 300    # a pickled ModelData instead

The chains run on the cores side by side, so the slowest chain sets the wall clock: a chain whose
step size adapted small costs the whole fit. Results are appended to
``benchmarks/results/bench_tune.txt``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from _leaderboard import add_data_arguments, leaderboard_aggregates
from _results import append_result

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))



def main(argv=None) -> int:
    import numpy as np

    from rtanalysis.model.build import build_model
    from rtanalysis.model.fit import _sample_diagnosed

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_arguments(ap, seeds=32)
    ap.add_argument("--tune", type=int, nargs="+", default=[300, 1000])
    ap.add_argument("--draws", type=int, default=1000)
    args = ap.parse_args(argv)
    d, label = leaderboard_aggregates(args)
    label += f": {len(d.episodes):,} episodes"
    lines = [f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {label}; {len(d.cap_labelled):,} labelled "
             f"groups; 4 chains x {args.draws} draws, seed 0; load average {tuple(round(x, 1) for x in os.getloadavg())}",
             f"{'tune':>5} {'sampling s':>10} {'max R-hat':>9} {'min ESS':>8} {'div':>5} {'gate':>5}   per chain: "
             "final step size, warm-up / draw leapfrog steps"]
    for tune in args.tune:
        idata, diag, _ = _sample_diagnosed(build_model(d), args.draws, tune, 4, 0, "nutpie", False)
        warm, post = idata["warmup_sample_stats"], idata["sample_stats"]
        chains = [f"{float(np.asarray(post['step_size'])[c, -1]):.3f}: {int(np.asarray(warm['n_steps'])[c].sum()):,} / "
                  f"{int(np.asarray(post['n_steps'])[c].sum()):,}" for c in range(post.sizes["chain"])]
        lines.append(f"{tune:>5} {diag['sampling_only_seconds']:>10.1f} {diag['max_rhat']:>9.3f} "
                     f"{diag['min_ess_bulk']:>8.0f} {diag['n_divergent']:>5} {str(diag['ok']):>5}   " + "; ".join(chains))
        print(lines[-1], file=sys.stderr, flush=True)
    text = "\n".join(lines) + "\n"
    append_result("bench_tune.txt", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
