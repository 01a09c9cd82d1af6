"""What a fit is made from: the episodes and steps frames (from a LoadResult, frames or paths) and
their hash, which every output records and :meth:`.result.FitResult.from_dir` checks."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pandas as pd


def as_frames(data):
    """(episodes, steps) from a LoadResult, a pair of frames, or path(s) to load."""
    if hasattr(data, "episodes") and hasattr(data, "steps"):
        return data.episodes, data.steps
    if isinstance(data, tuple) and len(data) == 2 and all(isinstance(x, pd.DataFrame) for x in data):
        return data
    if isinstance(data, (str, os.PathLike, list)):
        from ..adapters import load

        lr = load(data)
        return lr.episodes, lr.steps
    raise TypeError(f"fit() needs a LoadResult, (episodes, steps) frames or path(s); got {type(data).__name__}")


#: rows per piece when hashing a text column (bounds the memory of its str copy)
HASH_CHUNK_ROWS = 1_000_000


def _column_digest(col: pd.Series) -> bytes:
    """Row hashes of one column. Numbers and booleans as float64 (NaN for missing), so the same
    values hash alike whatever the dtype a loader gave them (int64, Int64, boolean, float); the rest
    as text, a piece at a time."""
    numeric = (pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col)
               or (col.dtype == object and pd.api.types.infer_dtype(col, skipna=True)
                   in ("boolean", "integer", "floating", "mixed-integer-float")))
    if numeric:
        values = col.astype("Float64").to_numpy(dtype="float64", na_value=np.nan)
        return pd.util.hash_array(values).tobytes()
    return b"".join(pd.util.hash_pandas_object(col.iloc[i:i + HASH_CHUNK_ROWS].astype(str), index=False)
                    .to_numpy().tobytes() for i in range(0, len(col), HASH_CHUNK_ROWS))


#: columns added to the tables after reports recorded hashes: hashed only where some value is given, so
#: the same logs keep the hash they had
HASH_IF_GIVEN = ("no_action_cause", "ended")


def data_hash(episodes: pd.DataFrame, steps: pd.DataFrame) -> str:
    """sha256 of the episodes and steps frames sorted by their keys (independent of file order),
    column by column: no copy of a whole frame (at 10^6 episodes a str copy of the steps held
    gigabytes and took minutes)."""
    h = hashlib.sha256()
    ekeys = ["run_id", "episode_id"]
    for frame, keys in ((episodes, ekeys), (steps, ekeys + ["step"])):
        keys = [k for k in keys if k in frame.columns]
        order = (frame[keys].reset_index(drop=True).sort_values(keys, kind="stable").index.to_numpy() if keys
                 else np.arange(len(frame)))
        columns = [c for c in frame.columns if c not in ("source_file", "source_line")
                   and not (c in HASH_IF_GIVEN and frame[c].isna().all())]
        h.update(",".join(map(str, columns)).encode())
        for c in columns:
            h.update(_column_digest(frame[c].iloc[order].reset_index(drop=True)))
    return h.hexdigest()
