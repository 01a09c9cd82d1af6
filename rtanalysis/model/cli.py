"""``rtanalysis fit`` and ``rtanalysis calibrate`` subcommands."""

from __future__ import annotations

import sys

from .families import NAMES as FAMILY_NAMES
from .structures import STRUCTURES


def add_cli(subparsers) -> None:
    p = subparsers.add_parser("fit", help="fit the capability × timing model; write the decomposition",
                              description="Fit the hierarchical capability × timing model to rtlog files "
                                          "and write decomposition.csv, counterfactuals.csv, "
                                          "diagnostics.json and posterior.nc.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="log files or directories")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--tune", type=tune_arg, default="auto",
                   help="tuning steps per chain, or auto (default): = draws, and if the diagnostics gate "
                        "fails, once more with 3x tuning and 2x draws (and target_accept 0.95 after divergences)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ci-prob", "--interval", dest="ci_prob", type=float, default=0.95,
                   help="probability of every posterior interval (default 0.95)")
    p.add_argument("--latency-family", default="normal", choices=("auto",) + FAMILY_NAMES,
                   help="log-latency Normal (default), Student-t, a two-mode mixture, or auto: the best by "
                        "PSIS-LOO (writes latency_loo.csv)")
    add_structure_argument(p)
    p.add_argument("--sampler", default="nutpie", choices=("nutpie", "pymc", "numpyro"),
                   help="NUTS implementation (numpyro needs the bench extra: jax, numpyro)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=_fit)

    c = subparsers.add_parser("calibrate", help="simulate a design, fit it repeatedly, report coverage and error",
                              description="Simulate from a design preset (rtanalysis.simulate), fit each "
                                          "replicate and report interval coverage and mean absolute error "
                                          "per quantity.")
    c.add_argument("--preset", required=True)
    c.add_argument("--reps", type=int, default=5)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--out", default=None, help="directory for calibration.csv")
    c.add_argument("--draws", type=int, default=500)
    c.add_argument("--chains", type=int, default=4)
    c.add_argument("--ci-prob", "--interval", dest="ci_prob", type=float, default=0.9)
    c.add_argument("--unlabelled", action="store_true")
    c.set_defaults(func=_calibrate)


#: the structure flags (:data:`.structures.STRUCTURES` options), shared by ``fit`` and ``report``
STRUCTURE_FLAGS = {
    "item_latency": "give each item (task id) a time intensity on log-latency, for data where hard items are also "
                    "slow (the latency_by_item check flags that); normal latency family only",
    "clock_effects": "let each model's capability differ under timed clocks (vs paused) and fit latency to timed "
                     "decisions only, for agents that think less when the clock runs (the success-rate check flags "
                     "the timed rows); needs paused runs of the same models",
    "latency_by_correctness": "labelled data: give content-wrong decisions their own log-latency shift per model x "
                              "task type, so timing and the latency counterfactuals use the correct decisions' "
                              "latency (thinking longer helps: the latency_by_correctness check flags it); normal "
                              "latency family, without --item-latency",
}


def add_structure_argument(p) -> None:
    """The structure flags and --structure, shared by ``fit`` and ``report``."""
    for name, text in STRUCTURE_FLAGS.items():
        p.add_argument("--" + name.replace("_", "-"), action="store_true", help=text)
    p.add_argument("--structure", default=None, choices=("auto",) + tuple(STRUCTURES),
                   help="the model's structure by name (instead of --item-latency / --clock-effects / "
                        "--latency-by-correctness), or auto: fit "
                        "every structure the data can tell apart and keep the simplest that PSIS-LOO on the episodes' "
                        "outcomes, the timed decisions' latencies and the silent decisions cannot beat (writes structure_loo.csv)")


def structure_options(args) -> dict:
    """The structure flags as :func:`.fit.fit` options."""
    return {name: bool(getattr(args, name)) for name in STRUCTURE_FLAGS}


def check_structure_args(args) -> None:
    """--structure names the structure the flags would: not both; auto needs a fixed family."""
    from ..errors import UsageError

    if args.structure and any(structure_options(args).values()):
        raise UsageError("give --structure or --item-latency / --clock-effects / --latency-by-correctness, not both")
    if args.latency_by_correctness and (args.item_latency or args.latency_family != "normal"):
        raise UsageError("--latency-by-correctness needs --latency-family normal and no --item-latency")
    if args.structure == "auto" and args.latency_family == "auto":
        raise UsageError("--structure auto needs a fixed --latency-family (choose the family first with "
                         "--latency-family auto, then compare structures with it)")


def tune_arg(text: str):
    import argparse

    if text == "auto":
        return text
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--tune must be a whole number >= 0 or 'auto', got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"--tune must be >= 0, got {value}")
    return value


def _fit(args) -> int:
    from ..adapters import load
    from ..errors import NoDataError, UsageError
    from ..schema import COMMAND_KEY_DTYPE
    from .fit import fit

    if args.draws < 1 or args.chains < 1:
        raise UsageError("--draws and --chains must be >= 1")
    if not 0 < args.ci_prob < 1:
        raise UsageError(f"--ci-prob must be in (0, 1), got {args.ci_prob}")
    check_structure_args(args)
    lr = load(args.paths, key_dtype=COMMAND_KEY_DTYPE)
    if len(lr.episodes) == 0:
        raise NoDataError(f"no usable episodes in {' '.join(args.paths)} ({lr.n_quarantined} quarantined)")
    if not args.quiet:
        print(str(lr), file=sys.stderr)
    res = fit(lr, draws=args.draws, chains=args.chains, tune=args.tune, seed=args.seed, ci_prob=args.ci_prob,
              latency_family=args.latency_family, sampler=args.sampler, progress=not args.quiet,
              structure=args.structure, **structure_options(args))
    out = res.to_dir(args.out)
    d = res.diagnostics
    status = "ok" if d["ok"] else "NOT CONVERGED (see diagnostics.json; do not report these numbers)"
    print(f"diagnostics: {status}; max R-hat {d['max_rhat']:.3f}, min bulk ESS {d['min_ess_bulk']:.0f}, "
          f"min tail ESS {d['min_ess_tail']:.0f}, divergences {d['n_divergent']}")
    if d.get("retried"):
        print(f"(retried once with tune={d['retried']['tune']}, draws={d['retried']['draws']} after a failed gate)")
    if d.get("advice"):
        print(d["advice"])
    for note in d.get("notes", []):
        print(f"note: {note}")
    if res.structure_loo() is not None:
        from .structures import choice_summary

        print(choice_summary(res.structure_loo()))
    print(f"wrote {out}/decomposition.csv, counterfactuals.csv, diagnostics.json, posterior.nc"
          + (", structure_loo.csv" if res.structure_loo() is not None else ""))
    return 0


def _calibrate(args) -> int:
    from ..errors import UsageError
    from .calibrate import calibrate

    try:
        table = calibrate(args.preset, reps=args.reps, seed=args.seed, draws=args.draws, chains=args.chains,
                          ci_prob=args.ci_prob, labelled=not args.unlabelled, progress=True)
    except KeyError as e:
        raise UsageError(str(e)) from None
    print(table.to_string(index=False))
    if args.out:
        from pathlib import Path

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        table.to_csv(out / "calibration.csv", index=False)
        print(f"wrote {out}/calibration.csv")
    return 0
