"""Readers for other harnesses' logs, all feeding one :class:`~rtanalysis.io.EpisodeSink`.

Every format turns its files into rtlog v1 episode dicts, so validation, quarantine, the tidy
tables and the reconciled counts (``n_read = n_accepted + n_quarantined``, per file) are those of
the rtlog loader. Usage::

    import rtanalysis
    res = rtanalysis.load("runs/freeway_H_8192_agile_4096_20250101_120000", model="deepseek-r1")
    res = rtanalysis.load(["a.jsonl", "slots.csv"])              # formats detected, one result
    res = rtanalysis.load(df, format="table", mapping={...})     # any table

:data:`~rtanalysis.adapters.FORMATS` is the registry: name → reader, detector and the options the reader
takes.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from ..io import EpisodeSink, LoadResult, find_log_files, read_rtlog
from ..scale.dataset import is_dataset, read_dataset
from . import inspect_logs, llm_colosseum, realtimegym, response_slots, table, terminal_bench


@dataclass(frozen=True)
class Format:
    """One log format: ``read(paths, sink, **options)`` adds its episodes to ``sink``."""

    read: Callable
    detect: Callable[[Path], bool] | None
    description: str

    @property
    def options(self) -> tuple[str, ...]:
        params = list(inspect.signature(self.read).parameters.values())[2:]
        return tuple(p.name for p in params)


def _read_rtlog(paths, sink: EpisodeSink, progress: bool | None = None) -> None:
    read_rtlog(paths, sink, progress)


def _is_rtlog(path: Path) -> bool:
    if path.is_dir():
        return bool(find_log_files([path]))
    return path.name.endswith((".jsonl", ".jsonl.gz")) and not response_slots.looks_like_slot_table(path)


#: the log formats :func:`load` reads, by name: reader, detector and the options the reader takes
FORMATS: dict[str, Format] = {
    "rtlog": Format(_read_rtlog, _is_rtlog, "rtlog v1 JSON Lines (.jsonl, .jsonl.gz) or folders of them"),
    "realtimegym": Format(realtimegym.read_run_dirs, realtimegym.holds_run_dirs,
                          "RealtimeGym run directories (args.log + <repeat>_<seed>.csv), or a folder of them"),
    "realtimegym-json": Format(realtimegym.read_published_json, realtimegym.looks_like_published,
                               "published RealtimeGym runs: {game}_{load}_{budget}_{seed}_{agent}.json"),
    "response-slots": Format(response_slots.read_slot_tables, response_slots.looks_like_slot_table,
                             "response-slot tables (CSV/JSONL: model, stream_id, slot_id, trigger_s, ...)"),
    "inspect": Format(inspect_logs.read_inspect_logs, inspect_logs.looks_like_inspect_log,
                      "inspect-ai evaluation logs (.eval/.json or a log directory); needs rtanalysis[inspect]"),
    "llm-colosseum": Format(llm_colosseum.read_battles, llm_colosseum.holds_battles,
                            "LLM Colosseum battle transcripts (day-NNN.json), or a folder of them"),
    "terminal-bench": Format(terminal_bench.read_terminal_bench, terminal_bench.looks_like_tb_results,
                             "Terminal-Bench runs: <run_id>/results.json (+ run_metadata.json, tb.lock), or a folder "
                             "of runs"),
    "harbor": Format(terminal_bench.read_harbor, terminal_bench.looks_like_harbor_trial,
                     "Harbor jobs: <job>/<trial>/result.json, or a folder of jobs"),
    "table": Format(table.read_tables, None, "any table (DataFrame, CSV, Parquet) with a column mapping"),
}
#: options any call may pass (the CLI always does); readers that do not take them ignore them
COSMETIC_OPTIONS = ("progress",)
#: the order detection tries (the most specific first); ``table`` needs a mapping so is never guessed
DETECT_ORDER = ("realtimegym", "realtimegym-json", "inspect", "llm-colosseum", "response-slots", "terminal-bench",
                "harbor", "rtlog")


def known_formats() -> str:
    return ", ".join(FORMATS)


def detect_format(path) -> str:
    """The format of ``path`` (a file or a directory), recognised from its names and contents.

    Raises ``FileNotFoundError`` for a missing path and ``ValueError`` when nothing fits.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such file or directory: {p}")
    for name in DETECT_ORDER:
        if FORMATS[name].detect(p):
            return name
    if p.is_dir():
        return "rtlog"  # nothing recognisable: the rtlog loader reports zero records, as it always has
    if p.suffix == ".csv" and (p.parent / "args.log").is_file():
        raise ValueError(f"{p} is one episode of a RealtimeGym run; pass its run directory {p.parent} "
                         "(args.log decides which episodes finished)")
    hint = " (any table needs format='table' and a mapping)" if p.suffix in (".csv", ".parquet", ".jsonl") else ""
    raise ValueError(f"{p}: cannot tell its log format{hint}; pass format= one of: {known_formats()}")


class _RecordingSink(EpisodeSink):
    """A sink that also keeps every accepted episode dict, in order (for :func:`to_rtlog`)."""

    def __init__(self):
        super().__init__()
        self.records: list[dict] = []

    def add(self, rec, file: str, line: int, raw=None) -> bool:
        ok = super().add(rec, file, line, raw)
        if ok and isinstance(rec, dict):
            self.records.append(rec)
        return ok


def to_rtlog(paths, out, format: str = "auto", **options) -> LoadResult:
    """Convert logs of any supported format into one rtlog v1 file ``out`` (``.jsonl`` or ``.jsonl.gz``).

    Writes the accepted episodes, one per line, in reading order; returns the :class:`~rtanalysis.LoadResult`
    (whose quarantine lists what was not converted). Loading ``out`` gives the same tables. A ``.gz``
    file carries no time or name in its header: the same logs give the same bytes.
    """
    import gzip

    import orjson

    sink = _RecordingSink()
    result = load(paths, format=format, _sink=sink, **options)
    out = Path(out)
    with open(out, "wb") as raw:
        fh = (gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9)
              if out.name.endswith(".gz") else raw)
        with fh:
            for rec in sink.records:
                fh.write(orjson.dumps(rec) + b"\n")
    return result


def load(paths, format: str = "auto", key_dtype: str = "str", _sink: EpisodeSink | None = None,
         **options) -> LoadResult:
    """Load logs of any supported format into the tidy ``episodes``/``steps``/``quarantine`` tables.

    ``paths``: a path, a list of paths (formats may be mixed; everything shares one sink, so the
    result holds them all), or a DataFrame (with ``format='table'``). ``format``: ``"auto"``
    (detected per path) or a name in :data:`~rtanalysis.adapters.FORMATS`. ``options`` go to the readers that
    take them (``model``, ``success_rule``, ``mapping``, ...); an option no reader in the call takes is an
    error. ``key_dtype``: ``"str"`` (the default) or ``"category"``: the text keys repeated over rows (run,
    episode, model, task, type, clock, unit, outcome; :data:`rtanalysis.schema.STEP_KEY_COLUMNS`) as pandas
    categoricals, about 2.5× less memory for the steps table (what the command line uses).
    """
    if format != "auto" and format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; known formats: {known_formats()}")
    if _sink is None and is_dataset(paths):  # written by `rtanalysis ingest --dataset`: read back as it is
        return read_dataset(paths[0] if isinstance(paths, (list, tuple)) else paths, key_dtype=key_dtype)
    if isinstance(paths, (str, os.PathLike, pd.DataFrame)):
        paths = [paths]
    groups: dict[str, list] = {}
    for p in paths:
        if isinstance(p, pd.DataFrame):
            name = "table" if format in ("auto", "table") else format
            if name != "table":
                raise ValueError(f"a DataFrame can only be read with format='table', not {format!r}")
        else:
            name = detect_format(p) if format == "auto" else format
        groups.setdefault(name, []).append(p)
    used = set(COSMETIC_OPTIONS)
    for name in groups:
        used.update(FORMATS[name].options)
    unknown = sorted(set(options) - used)
    if unknown:
        accepted = "; ".join(f"{n}: {', '.join(FORMATS[n].options) or '(none)'}" for n in groups)
        raise ValueError(f"option(s) {', '.join(unknown)} not taken by the format(s) read here ({accepted})")
    sink = _sink if _sink is not None else EpisodeSink(key_dtype)
    for name, items in groups.items():
        fmt = FORMATS[name]
        fmt.read(items, sink, **{k: v for k, v in options.items() if k in fmt.options})
    return sink.finish()


__all__ = ["FORMATS", "Format", "detect_format", "load", "to_rtlog", "known_formats"]
