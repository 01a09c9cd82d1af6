"""``rtanalysis ingest``: the command over :func:`rtanalysis.reporting.ingest.ingest`."""

from __future__ import annotations

import sys

from ..adapters import FORMATS
from ..adapters.cli import add_cli_options, options_from_args
from ..errors import UsageError
from .ingest import ingest
from ..schema import COMMAND_KEY_DTYPE


def add_cli(sub) -> None:
    p = sub.add_parser("ingest", help="load logs into tidy tables, quarantine bad records, compute metrics",
                       description="Load trajectory logs (files or directories) and write episodes.parquet, "
                                   "steps.parquet, quarantine.jsonl, ingest.json and metrics_*.csv into --out.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="log files or directories (searched recursively)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory (created if missing)")
    p.add_argument("--format", default="auto", choices=["auto", *FORMATS], help="input format (default: detect)")
    p.add_argument("--progress", action="store_true", default=None,
                   help="force a progress bar (default: shown for large inputs)")
    scale = p.add_argument_group("scale (docs/user-guide/scale.md)")
    scale.add_argument("--dataset", action="store_true",
                       help="write episodes/ and steps/ as a Parquet dataset partitioned by model (instead of "
                            "episodes.parquet, steps.parquet); `fit DIR` and `report DIR` read it")
    where = scale.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None, metavar="N",
                       help="load on a local Dask cluster of N processes (implies --dataset; no metrics_*.csv)")
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="load on the Dask cluster at ADDRESS, e.g. tcp://host:8786 (implies --dataset; "
                            "--out must be a folder every worker sees)")
    add_cli_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    """Exit 0 when something was read; 1 (after writing the tables) when nothing could be."""
    try:  # readers raise ValueError for JSON options that do not parse, an unknown format or option
        options = options_from_args(args)
        if args.workers is not None or args.scheduler is not None:
            return _run_distributed(args, options)
        result, _ = ingest(args.paths, args.out, format=args.format, progress=args.progress,
                           dataset=args.dataset, key_dtype=COMMAND_KEY_DTYPE, **options)
    except ValueError as e:
        raise UsageError(str(e)) from e
    return _report(result, args.out)


def _run_distributed(args, options: dict) -> int:
    from ..scale.distributed import ingest_distributed, local_client

    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be >= 1")
    try:
        if args.scheduler:
            from dask.distributed import Client

            client = Client(args.scheduler, timeout=30)
        else:
            client = local_client(args.workers)
    except (OSError, TimeoutError) as e:
        raise UsageError(f"cannot reach the Dask scheduler {args.scheduler}: {e}") from e
    try:
        result = ingest_distributed(args.paths, args.out, client, format=args.format, **options)
    finally:
        client.close()
        if not args.scheduler:
            client.cluster.close()
    return _report(result.as_load_summary(), args.out, str(result))


def _report(result, out, line: str | None = None) -> int:
    print(f"{line or result}; tables in {out}")
    if result.n_read == 0:
        print("rtanalysis ingest: error: no records found in the given paths "
              "(rtlog files end in .jsonl or .jsonl.gz)", file=sys.stderr)
        return 1
    if result.n_accepted == 0:
        print("rtanalysis ingest: error: no record could be read; see quarantine.jsonl for the reasons",
              file=sys.stderr)
        return 1
    return 0
