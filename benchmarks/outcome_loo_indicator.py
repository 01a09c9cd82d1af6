"""PSIS-LOO of the episodes' outcomes (``rtanalysis.model.structures``) with each task type's
always-fatal indicator drawn per draw (as the derived quantities draw it) against averaged out of the
importance ratio (Rao-Blackwellised, what ``outcome_loo`` does): the Pareto k of the episodes'
terms and the elpd, side by side, on one fit of ``clock_adaptive`` (unlabelled, clock effects).

Run:   .venv/bin/python benchmarks/outcome_loo_indicator.py [--seed 1 --draws 500 --chains 2]
Prints the comparison and appends it to ``benchmarks/results/outcome_loo_indicator.txt``.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))

import numpy as np  # noqa: E402
from _results import append_result  # noqa: E402


def main() -> None:
    from rtanalysis.model import fit
    from rtanalysis.model.compare import MAX_RELIABLE_K, loo_pointwise
    from rtanalysis.model.structures import episode_classes, outcome_log_likelihood
    from rtanalysis.simulate import simulate

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--draws", type=int, default=500)
    p.add_argument("--chains", type=int, default=2)
    args = p.parse_args()
    lr = simulate("clock_adaptive", seed=args.seed, labelled=False).load()
    res = fit(lr, draws=args.draws, chains=args.chains, seed=args.seed, tune=None, progress=False, clock_effects=True)
    classes, _ = episode_classes(res.data)
    n = classes["n"].to_numpy()
    drawn = loo_pointwise(outcome_log_likelihood(res._params, res.data, classes))  # fatality 1 where drawn on
    t = res.outcome_loo()  # Rao-Blackwellised (its draws thinned to LOO_MAX_DRAWS)
    rows = []
    for name, elpd, khat in (("indicator drawn", drawn[0], drawn[2]),
                             ("Rao-Blackwellised", t["elpd_loo"].to_numpy(), t["pareto_k"].to_numpy())):
        rows.append(f"{name:>18}: elpd_loo {float((n * elpd).sum()):9.2f}, max Pareto k {float(khat.max()):.2f}, "
                    f"episodes with k > {MAX_RELIABLE_K}: {int(n[khat > MAX_RELIABLE_K].sum())} of {int(n.sum())}")
    append_result("outcome_loo_indicator.txt",
                  f"clock_adaptive seed {args.seed}, unlabelled, clock_effects, {args.chains} x {args.draws} draws "
                  f"(gate {'passed' if res.diagnostics['ok'] else 'failed'})\n" + "\n".join(rows))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
