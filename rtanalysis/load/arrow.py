"""Arrow storage shared by the loader's modules: the allocator, text arrays, the pandas ``str`` dtype."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

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
