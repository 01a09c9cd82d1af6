"""Item time intensities (``fit(item_latency=True)``): centred where the items' latencies dominate
their prior (``build.item_latency_dominated``, the rule now) against centred for every item with ≥ 20
decisions (the rule before), on every misspecification preset, unlabelled, one replicate: the
diagnostics gate at the first attempt (fixed tuning, no retry), max R-hat, min bulk / tail ESS,
divergences and sampling seconds, side by side.

Run:   .venv/bin/python benchmarks/item_latency_centring.py [--draws 500 --chains 4 --seed 0]
Prints the table and appends it to ``benchmarks/results/item_latency_centring.txt``.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _results import append_result  # noqa: E402


def one(preset: str, seed: int, draws: int, chains: int, rule: str) -> dict:
    from rtanalysis.model import build, fit
    from rtanalysis.simulate import simulate

    now = build.item_latency_dominated
    if rule == "before":  # every item with enough decisions centred, as before the rule
        build.item_latency_dominated = lambda d, per_item: np.ones(len(per_item), dtype=bool)
    try:
        lr = simulate(preset, seed=seed, labelled=False).load()
        t = time.time()
        res = fit(lr, draws=draws, chains=chains, seed=seed, tune=None, progress=False, item_latency=True)
    finally:
        build.item_latency_dominated = now
    d = res.diagnostics
    return dict(preset=preset, rule=rule, gate=bool(d["ok"]), max_rhat=round(d["max_rhat"], 4),
                min_ess_bulk=round(d["min_ess_bulk"]), min_ess_tail=round(d["min_ess_tail"]),
                divergences=int(d["n_divergent"]), seconds=round(time.time() - t, 1))


def main() -> None:
    from rtanalysis.simulate.presets import MISSPEC_PRESETS

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--draws", type=int, default=500)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    rows = [one(preset, args.seed, args.draws, args.chains, rule) for preset in MISSPEC_PRESETS
            if preset != "tick_latency"  # no informative latencies: item_latency falls back to the base model
            for rule in ("before", "now")]
    table = pd.DataFrame(rows)
    passed = table.groupby("rule")["gate"].agg(["sum", "size"])
    text = (f"item_latency=True, {args.chains} x {args.draws} draws, tune {args.draws} (no retry), seed {args.seed}, "
            f"unlabelled\n{table.to_string(index=False)}\n"
            f"gate passed: before {passed.loc['before', 'sum']} of {passed.loc['before', 'size']}, "
            f"now {passed.loc['now', 'sum']} of {passed.loc['now', 'size']}")
    append_result("item_latency_centring.txt", text)


if __name__ == "__main__":
    main()
