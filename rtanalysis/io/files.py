"""Files: finding rtlog files, reading them in blocks (damage quarantined), :func:`load_rtlog`."""

from __future__ import annotations

import gc
import gzip
import os
import zlib
from pathlib import Path
from typing import Iterable, Iterator

import orjson

from .result import LoadResult
from .sink import EpisodeSink

LOG_SUFFIXES = (".jsonl", ".jsonl.gz")
PROGRESS_MIN_BYTES = 32 * 2**20
CHUNK_LINES = 8192


def find_log_files(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Expand files and directories (recursively) into rtlog files, in a stable order.

    A path that does not exist raises ``FileNotFoundError`` naming it.
    """
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*") if q.is_file() and q.name.endswith(LOG_SUFFIXES)))
        elif p.exists():
            out.append(p)
        else:
            raise FileNotFoundError(f"no such file or directory: {p}")
    return out


READ_BLOCK = 8 * 2**20


def _iter_lines(path: Path, sink: EpisodeSink, display: str) -> Iterator[list[tuple[int, bytes, bytes]]]:
    """Yield the non-blank lines of each block read, as lists of ``(line number, raw, raw)``.

    File damage becomes a quarantine row. Reads blocks (not lines) so memory stays bounded and long
    lines cost one split, not a loop; a line longer than a block is joined once, not re-copied per
    block. A damaged file (truncated gzip, I/O error) keeps every complete line read before the damage.
    """
    lineno = 0
    pending: list[bytes] = []  # the start of a line not yet ended by a newline
    try:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rb") as fh:
            while True:
                try:
                    block = fh.read1(READ_BLOCK)  # read1: a damaged gzip keeps what was decoded
                except (EOFError, OSError, zlib.error) as e:
                    sink.reject(display, lineno + 1, "<file>",
                                f"file damaged after line {lineno} ({type(e).__name__}: {e}); lines before it are kept",
                                b"".join(pending))
                    return
                if not block:
                    break
                parts = block.split(b"\n")
                if len(parts) == 1:
                    pending.append(block)
                    continue
                if pending:
                    pending.append(parts[0])
                    parts[0] = b"".join(pending)
                tail = parts.pop()
                pending = [tail] if tail else []
                yield [(n, raw, raw) for n, raw in enumerate(parts, lineno + 1) if raw.strip()]
                lineno += len(parts)
        tail = b"".join(pending)
        if tail.strip():
            yield [(lineno + 1, tail, tail)]
    except OSError as e:
        sink.reject(display, lineno + 1, "<file>", f"cannot read file: {e.strerror or e}", "")


def load_rtlog(paths, progress: bool | None = None, sink: EpisodeSink | None = None) -> LoadResult:
    """Load rtlog v1 files (``.jsonl``/``.jsonl.gz``) or directories of them.

    ``progress``: show a progress bar; by default only for inputs over 32 MiB. ``sink``: the
    :class:`~rtanalysis.io.EpisodeSink` to feed (a new one by default); its
    :meth:`~rtanalysis.io.EpisodeSink.finish` makes the result.
    """
    sink = sink or EpisodeSink()
    read_rtlog(paths, sink, progress)
    return sink.finish()


def read_rtlog(paths, sink: EpisodeSink, progress: bool | None = None) -> None:
    """Feed rtlog v1 files (or directories of them) into ``sink`` without building the tables: for
    readers that share one sink over several formats and call :meth:`~rtanalysis.io.EpisodeSink.finish`
    once."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = find_log_files(paths)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of short-lived objects, no cycles: the collector only costs time here
    try:
        _read_files(files, sink, progress)
    finally:
        if gc_was_enabled:
            gc.enable()


def _read_files(files: list[Path], sink: EpisodeSink, progress: bool | None) -> None:
    total = sum(f.stat().st_size for f in files if f.exists())
    bar = None
    if progress or (progress is None and total >= PROGRESS_MIN_BYTES):
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit="B", unit_scale=True, desc="loading", leave=False)
    for f in files:
        display = str(f)
        sink.open_file(display)
        chunk: list[tuple] = []
        for lines in _iter_lines(f, sink, display):
            chunk += lines
            while len(chunk) >= CHUNK_LINES:  # the same chunks (and quarantine order) as line by line
                sink.add_lines(chunk[:CHUNK_LINES], display)
                del chunk[:CHUNK_LINES]
        if chunk:
            sink.add_lines(chunk, display)
        if bar is not None:
            bar.update(f.stat().st_size)
    if bar is not None:
        bar.close()


def json_schema() -> dict:
    """The JSON Schema of an rtlog v1 record, as shipped in the package (for harness authors)."""
    from importlib.resources import files

    return orjson.loads(files("rtanalysis").joinpath("rtlog-v1.schema.json").read_bytes())
