"""Simulation-based calibration study (``rtanalysis.model.studies.sbc``): prior draws on a small design
(2 models × 2 task types, paused + wall, 4 tasks × 3 seeds = 12 episodes per cell), data generated
from the model, one fit per draw (2 chains × 200 draws, thinned to 100), ranks of the main
parameters and of p_timely / share_timing / p_capable of every timed row.

Run:   .venv/bin/python studies/sbc_study.py run --sims 200 --ranks studies/results/sbc_ranks.csv
       .venv/bin/python studies/sbc_study.py summary --ranks studies/results/sbc_ranks.csv \
           --out studies/results/sbc_uniformity.csv --plot docs/img/sbc_ranks.png
``run`` appends each fit's ranks as it finishes (restartable: finished sims are skipped).
Other model structures: ``run --clock-effects`` (κ_m ranked too), ``run --item-latency`` (sd_item_lat and
β_k too) and ``run --latency-family t|mixture`` (ν, or the mixture's label-free slow_mode_share and
mode_gap, too); give each its own ``--ranks``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _common import summary_to  # noqa: E402


def sbc_design():
    from rtanalysis.simulate.presets import _MS_BASE

    return _MS_BASE.with_(name="sbc", models=_MS_BASE.models[:2], tasks=4, seeds=3)


def run(args) -> None:
    from rtanalysis.model.studies.sbc import one_sbc, prior_draws, template_from_design

    t = template_from_design(sbc_design(), seed=args.seed, clock_effects=args.clock_effects,
                             item_latency=args.item_latency)
    prior, p_all = prior_draws(t, args.sims, args.seed, args.latency_family)
    done = set(pd.read_csv(args.ranks)["sim"]) if os.path.exists(args.ranks) else set()
    for j in range(*(args.only or (0, args.sims))):
        if j in done:
            continue
        t0 = time.time()
        r = one_sbc(t, prior, p_all, j, args.draws, args.chains, args.thin, args.seed)
        f = pd.DataFrame({"sim": j, "parameter": r["names"], "rank": r["ranks"], "n_post": r["n_post"],
                          "fit_ok": r["ok"], "divergences": r["divergences"], "seconds": round(time.time() - t0, 1)})
        f.to_csv(args.ranks, mode="a", header=not os.path.exists(args.ranks), index=False)
        print(f"{time.strftime('%H:%M:%S')} sim {j} {f['seconds'].iloc[0]}s ok={r['ok']} div={r['divergences']}",
              file=sys.stderr, flush=True)


def plot(ranks: pd.DataFrame, path: str, label: str = "") -> None:
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(ranks["parameter"]))
    cols = 6
    rows = int(np.ceil(len(names) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(2.4 * cols, 1.8 * rows), squeeze=False)
    n_post = int(ranks["n_post"].iloc[0])
    bins = 10
    for ax, name in zip(axes.flat, names):
        r = ranks.loc[ranks["parameter"] == name, "rank"]
        ax.hist(r, bins=np.linspace(0, n_post + 1, bins + 1), color="#4C72B0")
        n = len(r)
        lo, hi = (np.array([0.005, 0.995]) * 0 + np.array(
            __import__("scipy.stats", fromlist=["binom"]).binom.ppf([0.005, 0.995], n, 1 / bins)))
        ax.axhspan(lo, hi, color="0.85", zorder=0)
        ax.set_title(name, fontsize=7)
        ax.tick_params(labelsize=6)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fig.suptitle(f"SBC rank histograms{label} ({ranks['sim'].nunique()} prior draws; band: 99% per bin under uniformity)",
                 fontsize=9)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=110)


def summary(args) -> pd.DataFrame:
    from rtanalysis.model.studies.sbc import rank_uniformity

    ranks = pd.read_csv(args.ranks)
    u = rank_uniformity(ranks, bins=10)
    print(f"{ranks['sim'].nunique()} SBC fits; fits passing diagnostics {ranks.groupby('sim')['fit_ok'].first().mean():.2f}; "
          f"divergences {int(ranks.groupby('sim')['divergences'].first().sum())}")
    print(u.round(4).to_string(index=False))
    print(f"smallest Holm-adjusted p: {u['p_adjusted'].min():.4f}")
    if args.out:
        u.round(5).to_csv(args.out, index=False)
    if args.plot:
        plot(ranks, args.plot, f", {args.label}" if args.label else "")
    return u


def main(argv=None):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--sims", type=int, default=200)
    r.add_argument("--draws", type=int, default=200)
    r.add_argument("--chains", type=int, default=2)
    r.add_argument("--thin", type=int, default=4)
    r.add_argument("--seed", type=int, default=2026)
    r.add_argument("--ranks", default="studies/results/sbc_ranks.csv")
    r.add_argument("--latency-family", default="normal", choices=("normal", "t", "mixture"))
    r.add_argument("--clock-effects", action="store_true")
    r.add_argument("--item-latency", action="store_true")
    r.add_argument("--only", type=int, nargs=2, metavar=("START", "STOP"),
                   help="only prior draws START..STOP-1 (to split one study across processes)")
    r.set_defaults(func=run)
    s = sub.add_parser("summary")
    s.add_argument("--ranks", default="studies/results/sbc_ranks.csv")
    s.add_argument("--out", default="studies/results/sbc_uniformity.csv")
    s.add_argument("--plot", default="docs/img/sbc_ranks.png")
    s.add_argument("--label", default="", help="the model structure, for the plot's title")
    s.set_defaults(func=summary)
    args = ap.parse_args(argv)
    with summary_to(Path(args.out).with_suffix(".txt") if args.cmd == "summary" else None):
        args.func(args)


if __name__ == "__main__":
    main()
