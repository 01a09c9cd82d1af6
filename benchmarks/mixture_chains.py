"""Do the mixture family's chains agree? Per chain, the posterior means of each model's label-free
slow-mode share and mode gap on the ``bimodal`` preset, with the fit's worst R-hat and divergences
(docs/model.md, "Latency family": the earlier, labelled forms of the mixture left a chain in a
mirror-image basin).

    .venv/bin/python benchmarks/mixture_chains.py [--seeds 100 103] [--chains 4 --draws 400] \
        > benchmarks/results/mixture_chains.txt
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))


def main(argv=None) -> int:
    import numpy as np

    from rtanalysis.model import fit
    from rtanalysis.simulate import simulate

    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="*", default=[100, 103])
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--draws", type=int, default=400)
    args = ap.parse_args(argv)
    for seed in args.seeds:
        res = fit(simulate("bimodal", seed=seed, labelled=False).load(), draws=args.draws, chains=args.chains,
                  seed=seed, progress=False, tune=None, latency_family="mixture")
        post = res.idata["posterior"]
        d = res.diagnostics
        print(f"bimodal seed {seed}: {args.chains} chains x {args.draws} draws, worst R-hat {d['max_rhat']:.3f}, "
              f"divergences {d['n_divergent']} (truth: slow-mode share 0.3, gap 1.4 / 0.5 = 2.8 within-mode SDs)")
        for name in ("slow_mode_share", "mode_gap"):
            per_chain = np.asarray(post[name].mean("draw")).round(2).tolist()
            print(f"  {name} per chain (rows) x model (columns):\n" + "\n".join(f"    {list(r)}" for r in per_chain))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
