"""``rtanalysis report`` and ``rtanalysis demo``: options, checks, and the mapping of input errors
to the CLI's exit code."""

from __future__ import annotations

from pathlib import Path

from ..about import EXAMPLES
from ..errors import UsageError
from ..model.cli import add_fit_arguments, fit_options, spec_from_args
from ..model.fit import DEFAULT_CHAINS, DEFAULT_DRAWS
from .pipeline import run_report


def example_data_path(name: str = "example") -> Path:
    """The bundled example logs (shipped inside the package; see :func:`rtanalysis.example_data`)."""
    from ..about import example_data

    path = Path(str(example_data(name)))
    if not path.is_dir():
        raise UsageError(f"the bundled example data is missing from this installation ({path})")
    return path


def _add_report_options(p, out=None, draws=DEFAULT_DRAWS, chains=DEFAULT_CHAINS) -> None:
    if out is None:
        p.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    else:
        p.add_argument("--out", default=out, metavar="DIR", help=f"output folder (default {out})")
    add_fit_arguments(p, draws, chains)
    p.add_argument("--figures", default=None, metavar="DIR", help="also copy the figures into DIR")
    p.add_argument("--no-fit", action="store_true", help="observed metrics only: skip the model")
    p.add_argument("--quiet", action="store_true", help="no progress messages")


def add_cli(sub) -> None:
    p = sub.add_parser("report", help="ingest + metrics + fit + figures + tables + written report",
                       description="Run the whole analysis on trajectory logs and write figures/, tables/, "
                                   "report.md and report.html (plus the ingest and fit outputs) into --out.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="log files or directories")
    p.add_argument("--format", default="auto", help="input format (default: detect)")
    _add_report_options(p)
    p.set_defaults(func=_run)
    d = sub.add_parser("demo", help="the full report on the bundled example data",
                       description="Run `rtanalysis report` on a bundled example: the simulated benchmark "
                                   "with known truth (default), RealtimeGym runs or LLM Colosseum battles "
                                   "converted to rtlog.")
    d.add_argument("--example", choices=list(EXAMPLES), default="example",
                   help="which bundled example (default: example, the simulated benchmark)")
    _add_report_options(d, out="rtanalysis-demo", draws=None, chains=None)
    d.set_defaults(func=_run_demo)


#: the demo's sampling per example: a quicker fit of the large simulated example; the real examples
#: are small (seconds at the package's defaults), and fewer draws leave their prior-dominated
#: parameters (a model that never fell silent) short of the gate's tail ESS
DEMO_SAMPLING = {"example": (500, 2)}


def _report(args, paths, fmt: str = "auto") -> dict:
    spec = spec_from_args(args)
    options = fit_options(args)
    try:
        return run_report(paths, args.out, spec, figures_dir=args.figures, fit_model=not args.no_fit, format=fmt,
                          **options)
    except ValueError as e:  # unreadable input or an unknown format: a user error, not a crash
        raise UsageError(str(e)) from e


def _run(args) -> int:
    res = _report(args, args.paths, args.format)
    print(f"report written: {res['markdown']}, {res['html']} ({len(res['figures']) // 2} figures, "
          f"{len(res['tables']) // 3} tables)")
    return 0


def _run_demo(args) -> int:
    draws, chains = DEMO_SAMPLING.get(args.example, (DEFAULT_DRAWS, DEFAULT_CHAINS))
    args.draws = draws if args.draws is None else args.draws
    args.chains = chains if args.chains is None else args.chains
    res = _report(args, [example_data_path(args.example)])
    print(f"demo report written: {res['markdown']}, {res['html']}")
    return 0
