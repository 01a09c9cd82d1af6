"""Arrow storage shared by the loader's modules: the allocator, text arrays, the pandas ``str`` dtype."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .keys import code_dtype

_F64 = pa.float64()
# Arrow buffers come from the system allocator: builders (pa.array, take on text) grow their output
# by realloc, which glibc does in place (mremap) while the default mimalloc pool copies, making large
# conversions about 2x slower.
_POOL = pa.system_memory_pool()
_TEXT_ARROW = pa.large_string()  # the storage of pandas' "str" dtype
_TEXT = pd.StringDtype("pyarrow", na_value=np.nan)  # == schema "str"


def _text(values) -> pd.arrays.ArrowStringArray:
    """A pandas ``str`` array (Arrow large_string storage, NaN for missing) without per-value Python work."""
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = pa.array(values, type=_TEXT_ARROW, memory_pool=_POOL)
    return pd.arrays.ArrowStringArray(values, dtype=_TEXT)


def _category(values, rows: np.ndarray | None = None) -> pd.Categorical:
    """A pandas categorical of Arrow text ``values`` (taken at ``rows`` if given).

    Its categories are the distinct values present, sorted, so that sorting and comparing behave as
    on the text and every source of a table (loader, adapters, datasets) gives the same dtype. The
    steps table repeats each episode's keys on every decision; stored as codes the keys cost 1–4
    bytes a decision instead of their text (docs/reference/rtlog-v1.md, *The tables*).
    """
    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    distinct = pc.unique(values).drop_null()
    categories = pc.take(distinct, pc.array_sort_indices(distinct))
    codes = pc.index_in(values, value_set=categories).fill_null(-1).to_numpy(zero_copy_only=False)
    if rows is not None:
        codes = codes[rows]
        used = np.bincount(codes[codes >= 0], minlength=len(categories)) > 0
        if not used.all():  # e.g. episodes without decisions: drop their keys, renumber
            renumber = np.cumsum(used) - 1
            codes = np.where(codes >= 0, renumber[np.maximum(codes, 0)], -1)
            categories = categories.filter(pa.array(used))
    codes = codes.astype(code_dtype(len(categories) - 1), copy=False)
    return pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(pd.Index(_text(categories)), ordered=False))


#: rows turned from codes into text at a time when a table with categorical keys is written
PARQUET_CHUNK_ROWS = 262_144


def text_schema(frame: pd.DataFrame) -> pa.Schema:
    """The Arrow schema ``frame`` has with its categorical columns as text (``str``): files keep the
    text contract whatever the loader's ``key_dtype``, so every reader gets ``str`` from them."""
    cats = {c: "str" for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)}
    return pa.Schema.from_pandas(frame.iloc[:0].astype(cats), preserve_index=False)


def write_parquet(frame: pd.DataFrame, path) -> None:
    """``frame.to_parquet(path, index=False)``, the same file whether its keys are text or
    categorical; categorical keys are turned into text a chunk of rows at a time (bounded memory)."""
    import pyarrow.parquet as pq

    if not any(isinstance(d, pd.CategoricalDtype) for d in frame.dtypes):
        frame.to_parquet(path, index=False)
        return
    schema = text_schema(frame)
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, len(frame), PARQUET_CHUNK_ROWS):
            chunk = frame.iloc[start:start + PARQUET_CHUNK_ROWS]
            writer.write_table(pa.Table.from_pandas(chunk, preserve_index=False).cast(schema))
        if not len(frame):
            writer.write_table(schema.empty_table())
