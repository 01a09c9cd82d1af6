"""The tidy tables as a partitioned Parquet dataset (hive partitions by model).

Layout of a dataset directory ``DIR`` (written by ``rtanalysis ingest --dataset``)::

    DIR/dataset.json                          marker: layout version, parts, extra episode columns
    DIR/episodes/model=<name>/part-NNNNN.parquet
    DIR/steps/model=<name>/part-NNNNN.parquet
    DIR/quarantine.jsonl, DIR/ingest.json     as for every ingest

``<name>`` is percent-encoded (``openai/gpt-4o`` → ``openai%2Fgpt-4o``); every file also keeps the
``model`` column, so readers need no partition decoding. A *part* is what one loader call produced
(the whole input in one process; a batch of files on a Dask worker). Two hidden columns, ``_part``
and ``_row`` (position within the part), restore the loader's row order, so :func:`read_dataset`
returns exactly the tables that loading the logs gives.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .. import schema
from ..io import LoadResult
from ..io.arrow import text_schema

MARK = "dataset.json"
LAYOUT = "rtanalysis-dataset/1"
TABLES = ("episodes", "steps")
ORDER_COLUMNS = ("_part", "_row")
#: DuckDB settings for every query over a dataset: bounded memory, spill to disk beyond it
DEFAULT_MEMORY_LIMIT = "512MB"


def is_dataset(paths) -> bool:
    """True when ``paths`` is one directory holding a dataset written by :func:`write_dataset`."""
    if isinstance(paths, (list, tuple)):
        if len(paths) != 1:
            return False
        paths = paths[0]
    if not isinstance(paths, (str, os.PathLike)):
        return False
    return (Path(paths) / MARK).is_file()


def part_file(root, table: str, model: str, part: int) -> Path:
    return Path(root) / table / f"model={quote(model, safe='')}" / f"part-{part:05d}.parquet"


def remove_part(root, part: int) -> None:
    """Delete the files of one part (before it is written again)."""
    for table in TABLES:
        for f in (Path(root) / table).glob(f"model=*/part-{part:05d}.parquet"):
            f.unlink()


def write_part(result: LoadResult, root, part: int) -> dict[str, str]:
    """Write ``result``'s episodes and steps as part ``part`` of the dataset at ``root``.

    Returns the episode columns beyond the contract (the ``conditions`` keys) with their dtypes."""
    for table, frame in (("episodes", result.episodes), ("steps", result.steps)):
        _write_by_model(frame, root, table, part)
    return {c: str(result.episodes[c].dtype) for c in result.episodes.columns if c not in schema.EPISODE_COLUMNS}


def _write_by_model(frame: pd.DataFrame, root, table: str, part: int) -> None:
    if not len(frame):
        return
    t = pa.Table.from_pandas(frame, preserve_index=False)
    t = t.append_column("_part", pa.array(np.full(len(t), part, dtype=np.int32)))
    t = t.append_column("_row", pa.array(np.arange(len(t), dtype=np.int64)))
    # categorical keys are written as text, one model's rows at a time (files keep the text contract)
    text = text_schema(frame).append(t.schema.field("_part")).append(t.schema.field("_row"))
    enc = pc.dictionary_encode(t["model"]).combine_chunks()
    codes = enc.indices.to_numpy(zero_copy_only=False)
    for j, model in enumerate(enc.dictionary.to_pylist()):
        path = part_file(root, table, model, part)
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(t.filter(pa.array(codes == j)).cast(text), path)


def write_meta(root, n_parts: int, extra_columns: dict[str, str]) -> Path:
    path = Path(root) / MARK
    meta = {"layout": LAYOUT, "partitioning": "hive: model", "parts": n_parts,
            "order": list(ORDER_COLUMNS), "episode_extra_columns": extra_columns}
    path.write_text(json.dumps(meta, indent=2) + "\n")
    return path


def read_meta(root) -> dict:
    path = Path(root) / MARK
    meta = json.loads(path.read_text())
    if meta.get("layout") != LAYOUT:
        raise ValueError(f"{path}: unknown dataset layout {meta.get('layout')!r} (this version reads {LAYOUT!r})")
    return meta


def write_dataset(result: LoadResult, root) -> Path:
    """Write a whole :class:`~rtanalysis.LoadResult` as a one-part dataset under ``root`` (tables only; the
    quarantine and counts are written by :func:`rtanalysis.reporting.ingest.write_tables`)."""
    root = Path(root)
    for table in TABLES:
        if (root / table).exists():  # a stale dataset would mix with this one
            import shutil

            shutil.rmtree(root / table)
    extra = write_part(result, root, 0)
    return write_meta(root, 1, extra)


def table_glob(root, table: str) -> str | None:
    """The glob of a table's files, or None when the table has no file (no rows)."""
    base = Path(root) / table
    if not any(base.glob("model=*/*.parquet")):
        return None
    return str(base / "model=*" / "*.parquet").replace("'", "''")  # spliced into SQL as a string literal


def connect(memory_limit: str = DEFAULT_MEMORY_LIMIT, threads: int | None = None, temp_dir=None):
    """A DuckDB connection with bounded memory (spilling to ``temp_dir`` beyond it)."""
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET memory_limit = '{memory_limit}'")
    con.execute("SET preserve_insertion_order = false")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    if temp_dir is not None:
        con.execute("SET temp_directory = ?", [str(Path(temp_dir))])
    return con


def _text_types(t: pa.DataType):
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pd.StringDtype("pyarrow", na_value=np.nan)
    if pa.types.is_integer(t):
        return pd.Int64Dtype()
    if pa.types.is_boolean(t):
        return pd.BooleanDtype()
    return None


def _read_table(con, root, table: str, columns: dict[str, str]) -> pd.DataFrame:
    glob = table_glob(root, table)
    if glob is None:
        return schema.empty(columns)
    have = {r[0] for r in con.sql(f"DESCRIBE SELECT * FROM read_parquet('{glob}', union_by_name = true)").fetchall()}
    cols = ", ".join(f'"{c}"' if c in have else f'NULL AS "{c}"' for c in columns)
    t = con.sql(f"SELECT {cols} FROM read_parquet('{glob}', union_by_name = true) "
                f"ORDER BY _part, _row").to_arrow_table()
    frame = t.to_pandas(types_mapper=_text_types)
    return schema.conform(frame, columns)


def read_quarantine(root) -> pd.DataFrame:
    path = Path(root) / "quarantine.jsonl"
    rows = [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()] if path.exists() else []
    frame = pd.DataFrame(rows, columns=list(schema.QUARANTINE_COLUMNS))
    return schema.conform(frame, schema.QUARANTINE_COLUMNS)


def read_files(root) -> pd.DataFrame:
    path = Path(root) / "ingest.json"
    rows = json.loads(path.read_text())["files"] if path.exists() else []
    frame = pd.DataFrame(rows, columns=["path", "n_read", "n_accepted", "n_quarantined"])
    return frame.astype({"path": "str", "n_read": "int64", "n_accepted": "int64", "n_quarantined": "int64"})


def read_dataset(root, memory_limit: str = DEFAULT_MEMORY_LIMIT, key_dtype: str = "str") -> LoadResult:
    """The :class:`~rtanalysis.LoadResult` a dataset holds: the same tables, in the same row order and dtypes,
    as loading the original logs with the same ``key_dtype`` (all of it in memory: for the report;
    the model's aggregates need not, see :func:`rtanalysis.scale.aggregate_dataset`)."""
    root = Path(root)
    meta = read_meta(root)
    extra = {c: ("str" if d in ("str", "string") else d) for c, d in meta.get("episode_extra_columns", {}).items()}
    with connect(memory_limit) as con:
        episodes = _read_table(con, root, "episodes",
                               {**schema.with_key_dtype(schema.EPISODE_COLUMNS, key_dtype), **extra})
        steps = _read_table(con, root, "steps", schema.with_key_dtype(schema.STEP_COLUMNS, key_dtype))
    return LoadResult(episodes=episodes, steps=steps, quarantine=read_quarantine(root), files=read_files(root))
