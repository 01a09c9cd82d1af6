"""Ingest: logs → episodes/steps parquet, quarantine, counts and the metrics tables in one folder.

The command ``rtanalysis ingest`` over these functions is :mod:`rtanalysis.ingest_cli`.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from .adapters import load
from .load import LoadResult
from .metrics import compute_all, write_metrics


def write_tables(result: LoadResult, out_dir: str | Path) -> list[Path]:
    """Write ``episodes.parquet``, ``steps.parquet``, ``quarantine.jsonl`` and ``ingest.json``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "episodes.parquet", out / "steps.parquet", out / "quarantine.jsonl", out / "ingest.json"]
    result.episodes.to_parquet(paths[0], index=False)
    result.steps.to_parquet(paths[1], index=False)
    with open(paths[2], "wb") as fh:
        for row in result.quarantine.itertuples(index=False):
            fh.write(orjson.dumps({"file": row.file, "line": int(row.line), "field": row.field,
                                   "reason": row.reason, "raw": row.raw}) + b"\n")
    paths[3].write_text(json.dumps(result.summary(), indent=2) + "\n")
    return paths


def ingest(paths, out_dir: str | Path, format: str = "auto", progress: bool | None = None, **options):
    """Load ``paths``, write the tables and the metrics into ``out_dir``; return (result, metrics).

    Raises ``FileNotFoundError`` for a missing path and ``ValueError`` for an unknown format or
    option (see :func:`rtanalysis.adapters.load`); bad records are quarantined, not raised.
    """
    result = load(paths, format=format, progress=progress, **options)
    write_tables(result, out_dir)
    tables = compute_all(result.episodes, result.steps)
    write_metrics(tables, out_dir)
    return result, tables
