"""``rtanalysis ingest``: the command over :func:`rtanalysis.ingest.ingest`."""

from __future__ import annotations

import sys

from .adapters import FORMATS
from .adapters.cli import add_cli_options, options_from_args
from .errors import UsageError
from .ingest import ingest


def add_cli(sub) -> None:
    p = sub.add_parser("ingest", help="load logs into tidy tables, quarantine bad records, compute metrics",
                       description="Load trajectory logs (files or directories) and write episodes.parquet, "
                                   "steps.parquet, quarantine.jsonl, ingest.json and metrics_*.csv into --out.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="log files or directories (searched recursively)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory (created if missing)")
    p.add_argument("--format", default="auto", choices=["auto", *FORMATS], help="input format (default: detect)")
    p.add_argument("--progress", action="store_true", default=None,
                   help="force a progress bar (default: shown for large inputs)")
    add_cli_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    """Exit 0 when something was read; 1 (after writing the tables) when nothing could be."""
    try:  # readers raise ValueError for JSON options that do not parse, an unknown format or option
        options = options_from_args(args)
        result, _ = ingest(args.paths, args.out, format=args.format, progress=args.progress, **options)
    except ValueError as e:
        raise UsageError(str(e)) from e
    print(f"{result}; tables in {args.out}")
    if result.n_read == 0:
        print("rtanalysis ingest: error: no records found in the given paths "
              "(rtlog files end in .jsonl or .jsonl.gz)", file=sys.stderr)
        return 1
    if result.n_accepted == 0:
        print("rtanalysis ingest: error: no record could be read; see quarantine.jsonl for the reasons",
              file=sys.stderr)
        return 1
    return 0
