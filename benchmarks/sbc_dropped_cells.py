"""Why the clock-effects SBC failed before the constant-latency rule changed (docs/model.md, SBC).

Regenerates the data of every prior draw of ``sbc_study.py run --clock-effects`` (same seed and design)
and counts, per draw, the latency cells the old rule left out of the likelihood as "constant": fewer
than 3 distinct acted latencies, repeated or not (``n_distinct < 3``, ``n > 0``). Under clock effects
only timed decisions enter the latency tables, so a cell where most decisions were silent keeps one or
two acted latencies, the fast ones; leaving them out lets μ drift up. Prints how the rank of
``type_lat[fast]`` is distributed in draws with and without such a cell (ranks file of the old run).

    .venv/bin/python benchmarks/sbc_dropped_cells.py --ranks benchmarks/results/sbc_ranks_clock_effects_old_rule.csv
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from _results import append_result  # noqa: E402
from sbc_study import sbc_design  # noqa: E402


def main(argv=None) -> str:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="benchmarks/results/sbc_ranks_clock_effects_old_rule.csv")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--parameter", default="type_lat[fast]")
    args = ap.parse_args(argv)
    from rtanalysis.model.data import aggregate
    from rtanalysis.model.sbc import _load, generate, prior_draws, template_from_design

    ranks = pd.read_csv(args.ranks)
    sims = sorted(ranks["sim"].unique())
    t = template_from_design(sbc_design(), seed=args.seed, clock_effects=True)
    _, p_all = prior_draws(t, len(sims), args.seed)
    dropped = []
    for j in sims:
        lr = _load(generate(t, p_all.take([j]), np.random.default_rng([args.seed, j])))
        L = aggregate(lr.episodes, lr.steps, clock_effects=True).latency
        dropped.append(int(((L["n_distinct"] < 3) & (L["n"] > 0)).sum()))
    f = pd.DataFrame({"sim": sims, "dropped": dropped}).merge(
        ranks.loc[ranks["parameter"] == args.parameter, ["sim", "rank", "n_post"]], on="sim")
    low = f["rank"] <= 0.1 * f["n_post"]
    high = f["rank"] >= 0.9 * f["n_post"]
    lines = [f"{args.ranks}: {len(f)} prior draws; rank of {args.parameter} in the bottom / top tenth "
             f"(about 0.10 each under uniformity)"]
    for name, sel in (("with a cell the old rule dropped", f["dropped"] > 0), ("without", f["dropped"] == 0)):
        lines.append(f"  {name:<34} {int(sel.sum()):4d} draws   bottom {low[sel].mean():.2f}   top {high[sel].mean():.2f}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    append_result("sbc_dropped_cells.txt", main())
