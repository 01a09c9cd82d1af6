"""Handing freed heap memory back to the operating system after a large load.

Loading builds millions of short-lived Python objects (decoded records, their strings, the rows the
sink keeps until :meth:`EpisodeSink.finish <rtanalysis.io.EpisodeSink.finish>`). Freed, their memory stays in
glibc's heap, mostly in pieces too small for the large arrays the later stages allocate (those come from fresh
mappings), so the process keeps it as resident memory for its whole life: 334 MiB after loading 10^6 episodes,
with peaks ~250 MiB higher in the stages after it (``benchmarks/bench_load_memory.py``, the two ways side by
side). ``malloc_trim(0)`` returns the free pages; Dask's workers do the same (``distributed``'s memory
management docs, "Memory not released back to the OS"). Elsewhere than glibc (macOS, Windows, musl) there is
no such call and nothing is done.

The command line also fixes glibc's mmap threshold (:func:`map_large_allocations`): glibc serves an
allocation from its own mapping, returned to the system when freed, only above a threshold that starts
at 128 KiB and rises with every larger mapped block freed, up to 32 MiB. After the first large array
is freed, arrays of up to 32 MiB (a column of a few million rows) come from the heap, and freed they
stay resident, in pieces later arrays of other sizes cannot use. At 10^6 episodes fixing it at 1 MiB
lowered the resident set after the ingest from 1461 to 1233 MiB and the report's peak from 2394 to
2283 MiB (``benchmarks/bench_scale.py ladder``, ``docs/user-guide/scale.md``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

#: loads of fewer decisions leave too little behind to be worth a call
TRIM_MIN_DECISIONS = 100_000


@functools.cache
def _glibc(function: str):
    """glibc's ``function`` (``malloc_trim``, ``mallopt``), or None elsewhere."""
    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name or "libc.so.6"), function)
    except (OSError, AttributeError):  # not glibc
        return None


def release_freed_memory() -> bool:
    """Return the heap's free pages to the operating system; True where that was possible."""
    trim = _glibc("malloc_trim")
    if trim is None:
        return False
    trim(0)
    return True


#: allocations of at least this many bytes get their own mapping under :func:`map_large_allocations`
MMAP_THRESHOLD = 1 << 20
#: ``mallopt``'s parameter number for the mmap threshold (glibc's ``malloc.h``)
_M_MMAP_THRESHOLD = -3


def map_large_allocations(threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold at ``threshold`` bytes, so every allocation that large is returned
    to the system when freed (module docstring); True where that was possible (glibc). Process-wide:
    the command line sets it; a notebook may call it (or start Python with
    ``MALLOC_MMAP_THRESHOLD_=1048576`` in the environment)."""
    mallopt = _glibc("mallopt")
    return mallopt is not None and bool(mallopt(_M_MMAP_THRESHOLD, int(threshold)))
