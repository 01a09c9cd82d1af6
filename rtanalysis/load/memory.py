"""Handing freed heap memory back to the operating system after a large load.

Loading builds millions of short-lived Python objects (decoded records, their strings, the rows the
sink keeps until :meth:`EpisodeSink.finish`). Freed, their memory stays in glibc's heap, mostly in
pieces too small for the large arrays the later stages allocate (those come from fresh mappings), so
the process keeps it as resident memory for its whole life: 334 MiB after loading 10^6 episodes,
with peaks ~250 MiB higher in the stages after it (``benchmarks/bench_load_memory.py``, the two ways
side by side). ``malloc_trim(0)`` returns the free pages; Dask's workers
do the same (``distributed``'s memory management docs, "Memory not released back to the OS").
Elsewhere than glibc (macOS, Windows, musl) there is no such call and nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

#: loads of fewer decisions leave too little behind to be worth a call
TRIM_MIN_DECISIONS = 100_000


@functools.cache
def _malloc_trim():
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def release_freed_memory() -> bool:
    """Return the heap's free pages to the operating system; True where that was possible."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
