"""``rtanalysis fit`` and ``rtanalysis calibrate``, and the model's options shared with ``report``
and ``demo`` (:func:`~rtanalysis.model.cli.add_fit_arguments`,
:func:`~rtanalysis.model.cli.spec_from_args`)."""

from __future__ import annotations

import sys

from ..metrics import DEFAULT_CI_PROB
from .fit import DEFAULT_CHAINS, DEFAULT_DRAWS
from .spec import AUTO, LATENCY_FAMILIES, PARTS, STRUCTURES, ModelSpec


def add_fit_arguments(p, draws: int | None = DEFAULT_DRAWS, chains: int | None = DEFAULT_CHAINS) -> None:
    """The sampling options and the model's spec, as every command that fits takes them: the
    latency family, ``--structure`` and one flag per structure part (from :data:`.spec.PARTS`)."""
    p.add_argument("--draws", type=int, default=draws,
                   help=f"posterior draws per chain (default {draws if draws is not None else 'per example'})")
    p.add_argument("--chains", type=int, default=chains,
                   help=f"chains (default {chains if chains is not None else 'per example'})")
    p.add_argument("--tune", type=tune_arg, default="auto",
                   help="tuning steps per chain, or auto (default): = draws, and if the diagnostics gate fails, once "
                        "more with 3x tuning and 2x draws (and target_accept 0.95 after divergences)")
    p.add_argument("--seed", type=int, default=0, help="random seed: same inputs + seed give identical tables")
    p.add_argument("--ci-prob", dest="ci_prob", type=float, default=DEFAULT_CI_PROB,
                   help=f"probability of every interval in figures, tables and text (default {DEFAULT_CI_PROB})")
    model = p.add_argument_group("the model (rtanalysis.ModelSpec)")
    model.add_argument("--latency-family", default="normal", choices=LATENCY_FAMILIES,
                       help="log-latency normal (default), Student-t, a two-mode mixture (fast and reasoning modes), "
                            "or auto: the best by PSIS-LOO (writes latency_loo.csv)")
    model.add_argument("--structure", default=None, choices=(AUTO,) + STRUCTURES,
                       help="the model's structure by name (instead of its parts' flags below), or auto: fit every "
                            "structure the data can tell apart and keep the simplest that PSIS-LOO on the episodes' "
                            "outcomes, the timed decisions' latencies and the silent decisions cannot beat "
                            "(writes structure_loo.csv)")
    for name, part in PARTS.items():
        model.add_argument("--" + name.replace("_", "-"), dest=name, action="store_true",
                           help=part.summary + ("; normal latency family only" if part.normal_only else ""))
    model.add_argument("--ignore-ended", dest="ended", action="store_const", const="ignore", default="read",
                       help="read every log as the whole episode, whatever its `ended` field says (the model before "
                            "the survival reading, for comparison); by default an episode that says its failure "
                            "ended it is read as ending at its last logged decision")
    model.add_argument("--no-episode-effects", dest="episode_effects", action="store_false",
                       help="take an episode's decisions as independent given their cell (the model before episode "
                            "slowness, for comparison); by default they share a slowness, a random intercept on "
                            "log-latency whose share of the variance is estimated per task type (normal latency "
                            "family without item time intensities or latency by correctness)")


def spec_from_args(args) -> ModelSpec:
    """The :class:`~rtanalysis.ModelSpec` of :func:`add_fit_arguments`' options; checks the sampling options too
    (a :class:`~rtanalysis.errors.UsageError`, exit status 2, for any that is out of range)."""
    from ..errors import UsageError
    from ..metrics.intervals import check_ci_prob

    if args.draws < 1 or args.chains < 1:
        raise UsageError("--draws and --chains must be >= 1")
    check_ci_prob(args.ci_prob, "--ci-prob")
    return ModelSpec.from_parts(args.latency_family, args.structure, getattr(args, "ended", "read"),
                                getattr(args, "episode_effects", True), **{name: getattr(args, name) for name in PARTS})


def fit_options(args) -> dict:
    """:func:`.fit.fit`'s keyword arguments from :func:`add_fit_arguments`' options."""
    return dict(draws=args.draws, chains=args.chains, tune=args.tune, seed=args.seed, ci_prob=args.ci_prob,
                progress=not args.quiet)


def add_cli(subparsers) -> None:
    p = subparsers.add_parser("fit", help="fit the capability × timing model; write the decomposition",
                              description="Fit the hierarchical capability × timing model to rtlog files "
                                          "and write decomposition.csv, counterfactuals.csv, "
                                          "diagnostics.json and posterior.nc.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="log files or directories")
    p.add_argument("--out", required=True, help="output directory")
    add_fit_arguments(p)
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
    c.add_argument("--ci-prob", dest="ci_prob", type=float, default=0.9)
    c.add_argument("--unlabelled", action="store_true")
    c.set_defaults(func=_calibrate)


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
    from ..errors import NoDataError
    from ..schema import COMMAND_KEY_DTYPE
    from .fit import fit

    spec = spec_from_args(args)
    lr = load(args.paths, key_dtype=COMMAND_KEY_DTYPE)
    if len(lr.episodes) == 0:
        raise NoDataError(f"no usable episodes in {' '.join(args.paths)} ({lr.n_quarantined} quarantined)")
    if not args.quiet:
        print(str(lr), file=sys.stderr)
    res = fit(lr, spec, **fit_options(args))
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
        from .choice import structure_choice_summary

        print(structure_choice_summary(res.structure_loo()))
    print(f"wrote {out}/decomposition.csv, counterfactuals.csv, diagnostics.json, posterior.nc"
          + (", structure_loo.csv" if res.structure_loo() is not None else ""))
    return 0


def _calibrate(args) -> int:
    from ..errors import UsageError
    from .studies.calibrate import calibrate

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
