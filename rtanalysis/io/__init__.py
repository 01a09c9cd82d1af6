"""Load rtlog v1 trajectory logs into tidy ``episodes`` and ``steps`` frames.

Every rule of the format (docs/reference/rtlog-v1.md) is checked here. A record that breaks one is
quarantined with its file, line, field and reason; nothing is dropped or repaired, and the counts
reconcile: ``n_read = n_accepted + n_quarantined``, in total and per file.

Adapters for other harnesses turn their files into rtlog episode dicts and feed them to the same
:class:`EpisodeSink`, so every source gets the same validation, tables and quarantine.

One package, four parts: :mod:`.validation` (the reference validator, which explains rejections),
:mod:`.sink` (the columnar fast path and the tidy tables), :mod:`.decisions` (each decision's
timing and outcome, each episode's failure type) and :mod:`.files` (finding and reading files);
:mod:`.result` holds :class:`~rtanalysis.LoadResult`.
"""

from ..errors import RecordError
from .files import (CHUNK_LINES, LOG_SUFFIXES, PROGRESS_MIN_BYTES, READ_BLOCK, find_log_files, json_schema, load_rtlog,
                    read_rtlog)
from .result import LoadResult
from .sink import BATCH_BYTES, RAW_LIMIT, EpisodeSink
from .validation import LATENCY_TOLERANCE, explain, validate_episode, validate_steps

__all__ = ["BATCH_BYTES", "CHUNK_LINES", "LATENCY_TOLERANCE", "LOG_SUFFIXES", "PROGRESS_MIN_BYTES", "RAW_LIMIT",
           "READ_BLOCK", "EpisodeSink", "LoadResult", "RecordError", "explain", "find_log_files", "json_schema",
           "load_rtlog", "read_rtlog", "validate_episode", "validate_steps"]
