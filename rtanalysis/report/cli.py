"""``rtanalysis report`` and ``rtanalysis demo``: options, checks, and the mapping of input errors
to the CLI's exit code."""

from __future__ import annotations

from pathlib import Path

from ..metrics import DEFAULT_CI_PROB
from ..model import DEFAULT_CHAINS, DEFAULT_DRAWS
from ..model.cli import add_structure_argument, check_structure_args, structure_options, tune_arg
from ..model.families import NAMES as FAMILY_NAMES
from .pipeline import run_report


def _cli_error(msg: str):
    from ..errors import UsageError

    return UsageError(msg)


def example_data_path(name: str = "example") -> Path:
    """The bundled example logs (shipped inside the package; see :func:`rtanalysis.example_data`)."""
    from ..about import example_data

    path = Path(str(example_data(name)))
    if not path.is_dir():
        raise _cli_error(f"the bundled example data is missing from this installation ({path})")
    return path


def _add_fit_options(p, out=None, draws=DEFAULT_DRAWS, chains=DEFAULT_CHAINS) -> None:
    if out is None:
        p.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    else:
        p.add_argument("--out", default=out, metavar="DIR", help=f"output folder (default {out})")
    p.add_argument("--draws", type=int, default=draws, help=f"posterior draws per chain (default {draws})")
    p.add_argument("--chains", type=int, default=chains, help=f"chains (default {chains})")
    p.add_argument("--tune", type=tune_arg, default="auto",
                   help="tuning steps per chain, or auto (default): = draws, and once more with 3x tuning and "
                        "2x draws if the diagnostics gate fails")
    p.add_argument("--seed", type=int, default=0, help="random seed: same inputs + seed give identical tables")
    p.add_argument("--ci-prob", "--interval", dest="ci_prob", type=float, default=DEFAULT_CI_PROB,
                   help=f"probability of every interval in figures, tables and text (default {DEFAULT_CI_PROB})")
    p.add_argument("--latency-family", default="normal", choices=("auto",) + FAMILY_NAMES,
                   help="log-latency family: normal (default), t, mixture (fast and reasoning modes), or auto "
                        "(chosen by LOO)")
    add_structure_argument(p)
    p.add_argument("--figures", default=None, metavar="DIR", help="also copy the figures into DIR")
    p.add_argument("--no-fit", action="store_true", help="observed metrics only: skip the model")
    p.add_argument("--quiet", action="store_true", help="no progress messages")


def add_cli(sub) -> None:
    p = sub.add_parser("report", help="ingest + metrics + fit + figures + tables + written report",
                       description="Run the whole analysis on trajectory logs and write figures/, tables/, "
                                   "report.md and report.html (plus the ingest and fit outputs) into --out.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="log files or directories")
    p.add_argument("--format", default="auto", help="input format (default: detect)")
    _add_fit_options(p)
    p.set_defaults(func=_run)
    d = sub.add_parser("demo", help="the full report on the bundled example data",
                       description="Run `rtanalysis report` on a bundled example: the simulated benchmark "
                                   "with known truth (default), or RealtimeGym runs converted to rtlog.")
    d.add_argument("--example", choices=["example", "realtimegym"], default="example",
                   help="which bundled example (default: example, the simulated benchmark)")
    _add_fit_options(d, out="rtanalysis-demo", draws=500, chains=2)
    d.set_defaults(func=_run_demo)


def _check_args(args) -> None:
    if args.draws < 1 or args.chains < 1:
        raise _cli_error("--draws and --chains must be positive")
    if not 0 < args.ci_prob < 1:
        raise _cli_error("--ci-prob (--interval) must be between 0 and 1")
    check_structure_args(args)


def _report(args, paths, fmt: str = "auto") -> dict:
    _check_args(args)
    try:
        return run_report(paths, args.out, draws=args.draws, chains=args.chains, seed=args.seed,
                          ci_prob=args.ci_prob, figures_dir=args.figures, fit_model=not args.no_fit,
                          progress=not args.quiet, format=fmt, tune=args.tune,
                          latency_family=args.latency_family, structure=args.structure, **structure_options(args))
    except ValueError as e:  # unreadable input or an unknown format: a user error, not a crash
        raise _cli_error(str(e)) from e


def _run(args) -> int:
    res = _report(args, args.paths, args.format)
    print(f"report written: {res['markdown']}, {res['html']} ({len(res['figures']) // 2} figures, "
          f"{len(res['tables']) // 3} tables)")
    return 0


def _run_demo(args) -> int:
    res = _report(args, [example_data_path(args.example)])
    print(f"demo report written: {res['markdown']}, {res['html']}")
    return 0
