"""Fit speed, side by side: N vs 100×N episodes, nutpie vs PyMC NUTS, aggregated vs per-row likelihood
at 10^4 and 10^5 episodes, and the CLI on data/example. Prints seconds and ratios.

    .venv/bin/python benchmarks/bench_fit.py [--quick] [--skip-per-row-1e5] [--episode-effects-only]

``--episode-effects-only``: only the fit at the package's defaults with independent decisions against the
same with episode slowness (``ModelSpec(episode_effects=True)``), on ``leaderboard60`` at 9.6k and 10^5
episodes (the survival issue's speed budget: at most 2x, and 10^5 episodes in at most 5 min).

numpyro is compared when the ``bench`` extra is installed (``pip install -e '.[bench]'``).
The per-row baseline is the same model with the same priors and the same sampler, its likelihood
written as one term per decision and episode (``fit_for_benchmarks(..., per_row=True)``); both fits also report how
far apart their decompositions are (the posteriors must agree up to Monte Carlo error).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))

import numpy as np  # noqa: E402


def timed(f):
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


def fit_time(lr, **kw):
    from rtanalysis.model.fit import fit_for_benchmarks

    opts = dict(draws=500, chains=2, seed=0, progress=False, tune=None)
    opts.update(kw)
    return timed(lambda: fit_for_benchmarks(lr, **opts))


def tree_size(res) -> float:
    st = res.idata["sample_stats"]
    return float(st["n_steps"].mean()) if "n_steps" in st else float("nan")


def max_gap(a, b, q="p_success"):
    """Largest |difference| of a decomposition quantity between two fits, in posterior SDs of a."""
    da, db = a.decomposition(), b.decomposition()
    sd = (da[f"{q}_hi"] - da[f"{q}_lo"]) / 3.92
    return float(((da[q] - db[q]).abs() / sd.clip(lower=1e-9)).max())


def main(argv=None):
    from rtanalysis.model.studies.toy import toy_load

    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip-per-row-1e5", action="store_true")
    ap.add_argument("--episode-effects-only", action="store_true")
    args = ap.parse_args(argv)
    rows = []

    def row(name, a, ta, b, tb, note=""):
        rows.append((name, a, ta, b, tb, note))
        print(f"  {name}: {a} {ta:.1f} s, {b} {tb:.1f} s, ratio {tb / ta:.2f} {note}", file=sys.stderr, flush=True)

    if args.episode_effects_only:
        episode_effects_rows(row, args.quick)
        return print_rows(rows)

    cells = 12  # toy design: 3 models × 2 task types × 2 clocks
    small = toy_load(n_per_cell=20, seed=1, labelled=False)
    fit_time(small, draws=50)  # warm the compile cache
    big = toy_load(n_per_cell=200 if args.quick else 2000, seed=1, labelled=False)
    t1, r1 = fit_time(small)
    t2, r2 = fit_time(big)
    row(f"fit, N vs {len(big.episodes) // len(small.episodes)}xN episodes (2x500)", f"{len(small.episodes)} ep", t1,
        f"{len(big.episodes)} ep", t2, "target <= 1.5")
    row("  the same, NUTS only", f"{len(small.episodes)} ep", r1.diagnostics["sampling_only_seconds"],
        f"{len(big.episodes)} ep", r2.diagnostics["sampling_only_seconds"],
        f"mean tree size {tree_size(r1):.0f} vs {tree_size(r2):.0f} leapfrog steps")
    t3, r3 = fit_time(small, sampler="pymc")
    row("sampler, same model (2x500)", "nutpie", t1, "pymc NUTS", t3, f"gap {max_gap(r1, r3):.2f} SD")

    sizes = [10_000] if args.quick or args.skip_per_row_1e5 else [10_000, 100_000]
    for n_ep in sizes:
        lr = toy_load(n_per_cell=n_ep // cells, seed=2, labelled=False)
        opts = dict(draws=300, tune=300)
        fit_time(lr, per_row=True, draws=20, tune=20)  # same graph, cached; warm-up excluded
        ta, ra = fit_time(lr, **opts)
        tb, rb = fit_time(lr, per_row=True, **opts)
        row(f"aggregated vs per-row, {len(lr.episodes)} episodes, {len(lr.steps)} decisions (2x300)",
            "aggregated", ta, "per-row", tb, f"end to end; gap {max_gap(ra, rb):.2f} SD")
        sa, sb = (r.diagnostics.get("sampling_only_seconds", np.nan) for r in (ra, rb))
        row(f"  the same, NUTS only (graph set-up {ra.diagnostics.get('compile_seconds', np.nan):.0f} s excluded)",
            "aggregated", sa, "per-row", sb, "target >= 10 at 1e4")

    if not args.quick:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "rtanalysis.cli", "fit", "data/example", "--out", tmp, "--quiet",
                   "--draws", "1000", "--chains", "4"]
            t6, _ = timed(lambda: subprocess.run(cmd, check=True, capture_output=True))
        row("rtanalysis fit data/example 4x1000 (warm cache)", "wall s", t6, "target", 60.0)

    try:
        import numpyro  # noqa: F401
    except ImportError:
        print("note: numpyro/jax not installed (pip install -e '.[bench]'): numpyro not compared", file=sys.stderr)
    else:  # last: once JAX has started, nutpie's chains no longer fork (sampler._jax_started)
        fit_time(small, sampler="numpyro", draws=20)  # JAX traces and compiles on first use
        t4, r4 = fit_time(small, sampler="numpyro")
        row("sampler, same model (2x500)", "nutpie", t1, "numpyro", t4, f"gap {max_gap(r1, r4):.2f} SD")

    episode_effects_rows(row, args.quick)
    print_rows(rows)


def episode_effects_rows(row, quick: bool) -> None:
    """Independent decisions against episode slowness, each at the package's defaults (4 x 1000 draws, the
    gate and its retry), on leaderboard60 at its own size (9.6k episodes) and at 10^5 (warm caches)."""
    from rtanalysis.model.fit import DEFAULT_CHAINS, DEFAULT_DRAWS
    from rtanalysis.model.spec import ModelSpec
    from rtanalysis.simulate import simulate

    sizes = [{"tasks": 4, "seeds": 1}] if quick else [{}, {"tasks": 100, "seeds": 3}]
    for size in sizes:
        lr = simulate("leaderboard60", seed=0, **size).load()
        for ee in (False, True):  # warm PyTensor's compile cache for both graphs
            fit_time(lr, spec=ModelSpec(episode_effects=ee), draws=20, tune=20)
        opts = dict(draws=DEFAULT_DRAWS, chains=DEFAULT_CHAINS, tune="auto")
        (ta, ra), (tb, rb) = (fit_time(lr, spec=ModelSpec(episode_effects=ee), **opts) for ee in (False, True))
        retried = ", ".join(f"{n} {'retried' if 'retried' in r.diagnostics else 'first try'}"
                            for n, r in (("independent", ra), ("slowness", rb)))
        row(f"defaults, leaderboard60 {len(lr.episodes)} episodes", "independent", ta, "slowness", tb,
            f"target <= 2; {retried}")
        sa, sb = (r.diagnostics.get("sampling_only_seconds", np.nan) for r in (ra, rb))
        row("  the same, NUTS only", "independent", sa, "slowness", sb,
            f"mean tree size {tree_size(ra):.0f} vs {tree_size(rb):.0f} leapfrog steps")


def print_rows(rows) -> None:
    print(f"{'benchmark':<78} {'A':>11} {'s':>7} {'B':>11} {'s':>7} {'B/A':>7}  note")
    for name, a, ta, b, tb, note in rows:
        print(f"{name:<78} {a:>11} {ta:7.1f} {b:>11} {tb:7.1f} {tb / ta:7.2f}  {note}")


if __name__ == "__main__":
    main()
