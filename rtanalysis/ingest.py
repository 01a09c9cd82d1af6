"""``rtanalysis ingest``: logs → episodes/steps parquet, quarantine, counts and metrics tables."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import orjson

from .load import LoadResult


def write_tables(result: LoadResult, out_dir: str | Path, dataset: bool = False) -> list[Path]:
    """Write ``episodes.parquet``, ``steps.parquet``, ``quarantine.jsonl`` and ``ingest.json``.

    ``dataset=True``: the episodes and steps go into a partitioned Parquet dataset instead
    (``episodes/model=…/``, ``steps/model=…/``, ``dataset.json``; see :mod:`rtanalysis.scale.dataset`)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if dataset:
        from .scale.dataset import write_dataset

        paths = [write_dataset(result, out)]
    else:
        paths = [out / "episodes.parquet", out / "steps.parquet"]
        result.episodes.to_parquet(paths[0], index=False)
        result.steps.to_parquet(paths[1], index=False)
    paths += write_quarantine_and_counts(result.quarantine, result.summary(), out)
    return paths


def write_quarantine_and_counts(quarantine, summary: dict, out: Path) -> list[Path]:
    """``quarantine.jsonl`` (one bad record a line) and ``ingest.json`` (the counts, per file)."""
    paths = [out / "quarantine.jsonl", out / "ingest.json"]
    with open(paths[0], "wb") as fh:
        for row in quarantine.itertuples(index=False):
            fh.write(orjson.dumps({"file": row.file, "line": int(row.line), "field": row.field,
                                   "reason": row.reason, "raw": row.raw}) + b"\n")
    paths[1].write_text(json.dumps(summary, indent=2) + "\n")
    return paths


def ingest(paths, out_dir: str | Path, format: str = "auto", progress: bool | None = None,
           dataset: bool = False, **options):
    """Load ``paths``, write the tables and the metrics into ``out_dir``; return (result, metrics).

    ``paths`` may be a dataset directory (``ingest --dataset``): it is read back, not re-validated.
    ``dataset=True`` writes the tables as a partitioned Parquet dataset."""
    from . import load
    from .metrics import compute_all, write_metrics
    from .scale.dataset import is_dataset

    write = True
    if is_dataset(paths):
        src = Path(paths[0] if isinstance(paths, (list, tuple)) else paths)
        result = load(src)
        write = src.resolve() != Path(out_dir).resolve()  # a dataset read into its own folder stays as it is
    else:
        result = load(paths, format=format, progress=progress, **options)
    if write:
        write_tables(result, out_dir, dataset=dataset)
    tables = compute_all(result.episodes, result.steps)
    write_metrics(tables, out_dir)
    return result, tables


def _format_choices() -> list[str]:
    try:
        from .adapters import FORMATS
    except ModuleNotFoundError:
        return ["auto", "rtlog"]
    return ["auto", *FORMATS]


def add_cli(sub) -> None:
    p = sub.add_parser("ingest", help="load logs into tidy tables, quarantine bad records, compute metrics",
                       description="Load trajectory logs (files or directories) and write episodes.parquet, "
                                   "steps.parquet, quarantine.jsonl, ingest.json and metrics_*.csv into --out.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="log files or directories (searched recursively)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory (created if missing)")
    p.add_argument("--format", default="auto", choices=_format_choices(), help="input format (default: detect)")
    p.add_argument("--progress", action="store_true", default=None,
                   help="force a progress bar (default: shown for large inputs)")
    scale = p.add_argument_group("scale (docs/scale.md)")
    scale.add_argument("--dataset", action="store_true",
                       help="write episodes/ and steps/ as a Parquet dataset partitioned by model (instead of "
                            "episodes.parquet, steps.parquet); `fit DIR` and `report DIR` read it")
    where = scale.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None, metavar="N",
                       help="load on a local Dask cluster of N processes (implies --dataset; no metrics_*.csv)")
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="load on the Dask cluster at ADDRESS, e.g. tcp://host:8786 (implies --dataset; "
                            "--out must be a folder every worker sees)")
    try:
        from .adapters.cli import add_cli_options
    except ModuleNotFoundError:
        pass
    else:
        add_cli_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from .cli import CLIError

    try:
        from .adapters.cli import options_from_args
    except ModuleNotFoundError:
        options = {}
    else:
        try:
            options = options_from_args(args)
        except ValueError as e:
            raise CLIError(str(e)) from e
    if args.workers is not None or args.scheduler is not None:
        return _run_distributed(args, options)
    try:
        result, _ = ingest(args.paths, args.out, format=args.format, progress=args.progress,
                           dataset=args.dataset, **options)
    except (FileNotFoundError, ValueError) as e:
        raise CLIError(str(e)) from e
    return _report(result, args.out)


def _run_distributed(args, options: dict) -> int:
    from .cli import CLIError
    from .scale.distributed import ingest_distributed, local_client

    if args.workers is not None and args.workers < 1:
        raise CLIError("--workers must be >= 1")
    try:
        if args.scheduler:
            from dask.distributed import Client

            client = Client(args.scheduler, timeout=30)
        else:
            client = local_client(args.workers)
    except (OSError, TimeoutError) as e:
        raise CLIError(f"cannot reach the Dask scheduler {args.scheduler}: {e}") from e
    try:
        result = ingest_distributed(args.paths, args.out, client, format=args.format, **options)
    except (FileNotFoundError, ValueError) as e:
        raise CLIError(str(e)) from e
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
