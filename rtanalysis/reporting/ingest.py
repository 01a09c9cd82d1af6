"""Ingest: logs → episodes/steps parquet (or a partitioned Parquet dataset), quarantine, counts and
the metrics tables in one folder.

The command ``rtanalysis ingest`` over these functions is :mod:`rtanalysis.reporting.ingest_cli`.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from ..adapters import load
from ..io import LoadResult
from ..io.arrow import write_parquet
from ..metrics import compute_all, write_metrics
from ..scale.dataset import is_dataset


def write_tables(result: LoadResult, out_dir: str | Path, dataset: bool = False) -> list[Path]:
    """Write ``episodes.parquet``, ``steps.parquet``, ``quarantine.jsonl`` and ``ingest.json``.

    ``dataset=True``: the episodes and steps go into a partitioned Parquet dataset instead
    (``episodes/model=…/``, ``steps/model=…/``, ``dataset.json``; see :mod:`rtanalysis.scale.dataset`)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if dataset:
        from ..scale.dataset import write_dataset

        paths = [write_dataset(result, out)]
    else:
        paths = [out / "episodes.parquet", out / "steps.parquet"]
        write_parquet(result.episodes, paths[0])
        write_parquet(result.steps, paths[1])
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
           dataset: bool = False, key_dtype: str = "str", **options):
    """Load ``paths``, write the tables and the metrics into ``out_dir``; return (result, metrics).

    ``key_dtype``: how the returned tables hold their text keys (:func:`rtanalysis.load`); the files
    written are the same either way.
    ``paths`` may be a dataset directory (``ingest --dataset``): it is read back, not re-validated.
    ``dataset=True`` writes the tables as a partitioned Parquet dataset."""
    write = True
    if is_dataset(paths):
        src = Path(paths[0] if isinstance(paths, (list, tuple)) else paths)
        result = load(src, key_dtype=key_dtype)
        write = src.resolve() != Path(out_dir).resolve()  # a dataset read into its own folder stays as it is
    else:
        result = load(paths, format=format, progress=progress, key_dtype=key_dtype, **options)
    if write:
        write_tables(result, out_dir, dataset=dataset)
    tables = compute_all(result.episodes, result.steps)
    write_metrics(tables, out_dir)
    return result, tables
