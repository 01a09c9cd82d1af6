"""Load rtlog v1 trajectory logs into tidy ``episodes`` and ``steps`` frames.

Every rule of the format (docs/rtlog-v1.md) is checked here. A record that breaks one is
quarantined with its file, line, field and reason; nothing is dropped or repaired, and the counts
reconcile: ``n_read = n_accepted + n_quarantined``, in total and per file.

Adapters for other harnesses turn their files into rtlog episode dicts and feed them to the same
:class:`EpisodeSink`, so every source gets the same validation, tables and quarantine.
"""

from __future__ import annotations

import gc
import gzip
import itertools
import math
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Iterable, Iterator, Literal

import msgspec

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from . import schema

RAW_LIMIT = 1024  # bytes of a bad record's text kept in the quarantine
LATENCY_TOLERANCE = 1e-3  # t_act - t_obs and latency must agree within 1 ms
LOG_SUFFIXES = (".jsonl", ".jsonl.gz")
PROGRESS_MIN_BYTES = 32 * 2**20

_NUM = (int, float)
_EPISODE_REQUIRED_STR = ("run_id", "episode_id", "model", "task_type")
_STEP_BOOLS = ("correct_at_obs", "valid_at_exec", "fallback")


class RecordError(Exception):
    """A rule broken by one record: ``field`` names where, ``reason`` says what."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


@dataclass
class LoadResult:
    """What loading produced: the tidy tables, the quarantine and per-file counts."""

    episodes: pd.DataFrame
    steps: pd.DataFrame
    quarantine: pd.DataFrame
    files: pd.DataFrame = field(repr=False)

    @property
    def n_read(self) -> int:
        return int(self.files["n_read"].sum())

    @property
    def n_accepted(self) -> int:
        return int(self.files["n_accepted"].sum())

    @property
    def n_quarantined(self) -> int:
        return int(self.files["n_quarantined"].sum())

    def summary(self) -> dict:
        """The counts as written to ``ingest.json``."""
        return {
            "n_read": self.n_read,
            "n_accepted": self.n_accepted,
            "n_quarantined": self.n_quarantined,
            "files": [
                {k: (int(v) if k != "path" else str(v)) for k, v in row.items()}
                for row in self.files[["path", "n_read", "n_accepted", "n_quarantined"]].to_dict("records")
            ],
        }

    def __str__(self) -> str:
        return (
            f"read {self.n_read} records from {len(self.files)} file(s): {self.n_accepted} accepted, "
            f"{self.n_quarantined} quarantined; {len(self.episodes)} episodes, {len(self.steps)} decisions"
        )


# --------------------------------------------------------------------------------------------
# validation of one episode record


def _is_num(x) -> bool:
    return type(x) in _NUM and math.isfinite(x)


def _opt_str(rec: dict, name: str):
    v = rec.get(name)
    if v is None or type(v) is str:
        return v
    raise RecordError(name, f"must be a string, got {_jtype(v)}")


def _jtype(v) -> str:
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(v), "null" if v is None else type(v).__name__
    )


def validate_episode(rec) -> dict:
    """Check one decoded record against rtlog v1; return its normalised episode fields.

    Raises :class:`RecordError` naming the first rule broken.
    """
    if type(rec) is not dict:
        raise RecordError("<record>", f"a record must be a JSON object, got {_jtype(rec)}")
    sch = rec.get("schema")
    if sch is not None and sch != "rtlog/1":
        raise RecordError("schema", f"unsupported schema {sch!r} (this reader knows 'rtlog/1')")
    for name in _EPISODE_REQUIRED_STR:
        v = rec.get(name)
        if v is None:
            raise RecordError(name, "required field is missing")
        if type(v) is not str:
            raise RecordError(name, f"must be a string, got {_jtype(v)}")
        if not v:
            raise RecordError(name, "must not be empty")
    clock = rec.get("clock")
    if clock is None:
        raise RecordError("clock", "required field is missing")
    if clock not in schema.CLOCKS:
        raise RecordError("clock", f"must be one of wall, paused, step; got {clock!r}")
    unit = rec.get("time_unit")
    if unit is None:
        unit = "s"
    elif unit not in schema.TIME_UNITS:
        raise RecordError("time_unit", f"must be 's' or 'tokens'; got {unit!r}")
    success = rec.get("success")
    if success is None:
        raise RecordError("success", "required field is missing")
    if type(success) is not bool:
        raise RecordError("success", f"must be a boolean, got {_jtype(success)}")
    task = _opt_str(rec, "task")
    seed = rec.get("seed")
    if seed is not None and type(seed) is not int:
        raise RecordError("seed", f"must be an integer, got {_jtype(seed) if type(seed) is not float else 'non-integer number'}")
    score = rec.get("score")
    if score is not None and not _is_num(score):
        raise RecordError("score", f"must be a number, got {_jtype(score)}")
    cond = rec.get("conditions")
    if cond is not None:
        if type(cond) is not dict:
            raise RecordError("conditions", f"must be an object, got {_jtype(cond)}")
        for k, v in cond.items():
            if not (type(v) is str or _is_num(v)):
                raise RecordError(f"conditions.{k}", f"must be a string or a number, got {_jtype(v)}")
    meta = rec.get("meta")
    if meta is not None and type(meta) is not dict:
        raise RecordError("meta", f"must be an object, got {_jtype(meta)}")
    steps = rec.get("steps")
    if steps is None:
        steps = []
    elif type(steps) is not list:
        raise RecordError("steps", f"must be an array, got {_jtype(steps)}")
    return {
        "run_id": rec["run_id"],
        "episode_id": rec["episode_id"],
        "model": rec["model"],
        "task": task,
        "task_type": rec["task_type"],
        "clock": clock,
        "time_unit": unit,
        "seed": seed,
        "success": success,
        "score": score,
        "conditions": cond,
        "meta": meta,
        "steps": steps,
    }


def validate_steps(steps: list) -> list[tuple]:
    """Check every decision (the reference rules; raises :class:`RecordError` naming the first broken)."""
    out = []
    prev_obs = -1.0
    for i, s in enumerate(steps):
        if type(s) is not dict:
            raise RecordError(f"steps[{i}]", f"a step must be an object, got {_jtype(s)}")
        t_obs = s.get("t_obs")
        if t_obs is None:
            raise RecordError(f"steps[{i}].t_obs", "required field is missing")
        if not _is_num(t_obs):
            raise RecordError(f"steps[{i}].t_obs", f"must be a number, got {_jtype(t_obs)}")
        if t_obs < 0:
            raise RecordError(f"steps[{i}].t_obs", f"must be >= 0, got {t_obs}")
        if t_obs < prev_obs:
            raise RecordError(f"steps[{i}].t_obs", f"steps must be in order: t_obs {t_obs} is before the previous step's {prev_obs}")
        prev_obs = t_obs
        t_act = s.get("t_act")
        lat = s.get("latency")
        if t_act is not None:
            if not _is_num(t_act):
                raise RecordError(f"steps[{i}].t_act", f"must be a number or null, got {_jtype(t_act)}")
            if t_act < t_obs:
                raise RecordError(f"steps[{i}].t_act", f"must be >= t_obs ({t_obs}), got {t_act}")
        if lat is not None:
            if not _is_num(lat):
                raise RecordError(f"steps[{i}].latency", f"must be a number, got {_jtype(lat)}")
            if lat < 0:
                raise RecordError(f"steps[{i}].latency", f"must be >= 0, got {lat}")
            if t_act is not None:
                if abs((t_act - t_obs) - lat) > LATENCY_TOLERANCE:
                    raise RecordError(
                        f"steps[{i}].latency",
                        f"disagrees with t_act - t_obs = {t_act - t_obs:.6g} (given {lat}); they must agree within 1 ms",
                    )
            elif "t_act" in s:
                raise RecordError(f"steps[{i}].t_act", "is null (no action) but latency is given")
            else:
                t_act = t_obs + lat
        elif t_act is not None:
            lat = t_act - t_obs
        w = s.get("window")
        if w is None:
            w_open = w_close = None
        else:
            if type(w) is not list or len(w) != 2 or not _is_num(w[0]) or not _is_num(w[1]):
                raise RecordError(f"steps[{i}].window", f"must be [open, close] numbers, got {orjson.dumps(w).decode()[:80]}")
            w_open, w_close = w
            if not 0 <= w_open <= w_close:
                raise RecordError(f"steps[{i}].window", f"must satisfy 0 <= open <= close, got [{w_open}, {w_close}]")
        action = s.get("action")
        if action is not None and type(action) is not str:
            raise RecordError(f"steps[{i}].action", f"must be a string, got {_jtype(action)}")
        flags = []
        for name in _STEP_BOOLS:
            v = s.get(name)
            if v is not None and type(v) is not bool:
                raise RecordError(f"steps[{i}].{name}", f"must be a boolean, got {_jtype(v)}")
            flags.append(v)
        tokens = s.get("tokens")
        if tokens is not None and (type(tokens) is not int or tokens < 0):
            raise RecordError(f"steps[{i}].tokens", f"must be an integer >= 0, got {tokens!r}")
        reward = s.get("reward")
        if reward is not None and not _is_num(reward):
            raise RecordError(f"steps[{i}].reward", f"must be a number, got {_jtype(reward)}")
        out.append((t_obs, t_act, lat, w_open, w_close, action, flags[0], flags[1], flags[2], tokens, reward))
    return out



# --------------------------------------------------------------------------------------------
# fast path: typed decoding (msgspec, in C) and vectorised cross-field rules. The Python validator
# above is the reference: it explains every record that the fast path rejects.
#
# Where the CPU goes (1e6 decisions, 125 MiB, one core, benchmarks/bench_load.py): typed decoding
# ~0.8 s, turning step objects into columns ~0.8 s, freeing the objects ~0.3 s, finish() ~0.4 s,
# reading ~0.2 s (+0.25 s inflating gzip), imports ~0.55 s. Steps become columns in batches of
# about BATCH_BYTES of JSON, while their objects are still in cache, and are freed right after;
# the tables are built once, in their final dtypes, with Arrow text (no per-row Python strings).

_NonNeg = Annotated[float, msgspec.Meta(ge=0)]
_Name = Annotated[str, msgspec.Meta(min_length=1)]
_ABSENT = -1.0  # t_act default when the key is absent (null decodes to None: no action)


class _Step(msgspec.Struct, gc=False):
    t_obs: _NonNeg
    t_act: _NonNeg | None = _ABSENT
    latency: _NonNeg | None = None
    window: tuple[_NonNeg, _NonNeg] | None = None
    action: str | None = None
    correct_at_obs: bool | None = None
    valid_at_exec: bool | None = None
    fallback: bool | None = None
    tokens: Annotated[int, msgspec.Meta(ge=0, le=2**53)] | None = None
    reward: float | None = None


class _Episode(msgspec.Struct, gc=False):
    run_id: _Name
    episode_id: _Name
    model: _Name
    task_type: _Name
    clock: Literal["wall", "paused", "step"]
    success: bool
    schema: Literal["rtlog/1"] | None = None
    task: str | None = None
    time_unit: Literal["s", "tokens"] | None = None
    conditions: dict[str, str | float] | None = None
    seed: Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)] | None = None
    score: float | None = None
    steps: list[_Step] | None = None
    meta: msgspec.Raw = msgspec.Raw()


_STEP_FIELDS = ("t_obs", "t_act", "latency", "window", "action",
                "correct_at_obs", "valid_at_exec", "fallback", "tokens", "reward")
assert _Step.__struct_fields__ == _STEP_FIELDS  # _step_columns relies on the field order
_DECODER = msgspec.json.Decoder(_Episode)
CHUNK_LINES = 8192
BATCH_BYTES = 2**20  # JSON text decoded before its steps become columns: keeps the step objects in cache
SMALL_CHUNK, MERGE_SMALL = 1024, 256  # MERGE_SMALL kept chunks of < SMALL_CHUNK decisions become one

_F64 = pa.float64()
# Arrow buffers come from the system allocator: builders (pa.array, take on text) grow their output
# by realloc, which glibc does in place (mremap) while the default mimalloc pool copies, making large
# conversions about 2x slower.
_POOL = pa.system_memory_pool()
_TEXT_ARROW = pa.large_string()  # the storage of pandas' "str" dtype
_TEXT = pd.StringDtype("pyarrow", na_value=np.nan)  # == schema "str"
_astuple = msgspec.structs.astuple
#: decision outcomes and episode failure types as small integer codes until the text column is built
_OUTCOMES = ("unknown", "ok", "late", "early", "wrong", "silent")
_UNKNOWN, _OK, _LATE, _EARLY, _WRONG, _SILENT = range(len(_OUTCOMES))
_FAILURES = ("unknown", "both", "capability", "timing", "none")


def explain(raw, fast_error: Exception | None = None) -> tuple[str, str]:
    """(field, reason) for a record the fast path rejected, from the reference validator."""
    if isinstance(raw, bytes):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as e:
            return "<record>", f"line is not valid UTF-8 ({e.reason} at byte {e.start})"
    if isinstance(raw, (bytes, str)):
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            return "<record>", f"not valid JSON: {e}"
    else:
        rec = raw
    try:
        validate_steps(validate_episode(rec)["steps"])
    except RecordError as e:
        return e.field, e.reason
    msg = str(fast_error) if fast_error else "record rejected"
    where = msg.rsplit("at `$.", 1)[1].rstrip("`") if "at `$." in msg else "<record>"
    return where, msg


class EpisodeSink:
    """Accumulates validated episodes and quarantined records; :meth:`finish` builds the tables.

    Feed it raw JSON lines (:meth:`add_lines`, the fast path of :func:`load_rtlog`) or decoded rtlog
    episode dicts (:meth:`add`, for adapters). Either way every rule of the format is checked.

    Accepted decisions are kept as compact per-chunk columns (float64, int8 codes, Arrow text), not
    Python objects, so memory is about 60 bytes per decision and does not depend on the file count.
    """

    def __init__(self):
        self._ep_rows: list[tuple] = []
        self._conditions: list[dict | None] = []
        self._chunks: list[dict] = []
        self._n_small = 0  # trailing chunks under SMALL_CHUNK decisions, merged when there are many
        self._seen: dict[tuple[str, str], tuple[str, int]] = {}
        self._quarantine: list[tuple] = []
        self._files: dict[str, list[int]] = {}

    def open_file(self, path: str) -> None:
        self._files.setdefault(path, [0, 0, 0])

    def add(self, rec, file: str, line: int, raw=None) -> bool:
        """Validate one decoded episode record; accept or quarantine it. Returns acceptance."""
        try:
            blob = orjson.dumps(rec)
        except TypeError as e:  # not JSON-representable: the reference validator names the field
            self.reject(file, line, *explain(rec, e), raw if raw is not None else repr(rec))
            return False
        before = self._files.get(file, [0, 0, 0])[1]
        self.add_lines([(line, blob if raw is None else raw, blob)], file)
        return self._files[file][1] > before

    def add_raw(self, raw: bytes | str, file: str, line: int) -> None:
        """Decode and validate one JSON line."""
        self.add_lines([(line, raw, raw.encode("utf-8") if isinstance(raw, str) else raw)], file)

    def add_lines(self, lines: list[tuple], file: str) -> None:
        """Validate a chunk of ``(line, raw, json_bytes)``: accepted ones are kept, others quarantined.

        Quarantine rows come in a fixed order per call: records that fail typed decoding, then those
        breaking a cross-field rule, then duplicates, each in line order.
        """
        eps: list[_Episode] = []
        where: list[tuple] = []
        parts: list[tuple] = []  # per batch of decoded episodes: (step columns, owner, bad episodes, lengths)
        decode = _DECODER.decode
        start = size = 0
        for item in lines:
            try:
                ep = decode(item[2])
            except (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError) as e:
                self.reject(file, item[0], *explain(item[2], e), item[1])
                continue
            if ep.meta and bytes(ep.meta)[:1] not in (b"{", b"n"):
                self.reject(file, item[0], *explain(item[2]), item[1])
                continue
            eps.append(ep)
            where.append(item)
            size += len(item[2])
            if size >= BATCH_BYTES:  # columns of a batch while its step objects are still in cache
                parts.append(_batch_columns(eps, start))
                start, size = len(eps), 0
        if not eps:
            return
        if start < len(eps):
            parts.append(_batch_columns(eps, start))
        keep = np.ones(len(eps), dtype=bool)
        for i in itertools.chain.from_iterable(p[2] for p in parts):
            line, raw, blob = where[i]
            self.reject(file, line, *explain(blob), raw)
            keep[i] = False
        keep_l = keep.tolist()
        len_l = np.concatenate([p[3] for p in parts]).tolist()
        rows, conditions, seen, n_acc = self._ep_rows, self._conditions, self._seen, 0
        for i, ep in enumerate(eps):
            if not keep_l[i]:
                continue
            line, raw, _ = where[i]
            key = (ep.run_id, ep.episode_id)
            first = seen.get(key)
            if first is not None:
                self.reject(file, line, "episode_id",
                            f"duplicate (run_id, episode_id) = {key}; first seen at {first[0]}:{first[1]}", raw)
                keep[i] = False
                continue
            seen[key] = (file, line)
            meta = ep.meta
            if meta:
                meta = bytes(meta)
                meta = meta.decode() if meta[:1] == b"{" else None
            else:
                meta = None
            rows.append((ep.run_id, ep.episode_id, ep.model, ep.task, ep.task_type, ep.clock, ep.time_unit or "s",
                         ep.seed, ep.success, ep.score, len_l[i], meta, file, line))
            conditions.append(ep.conditions)
            n_acc += 1
        c = self._files.setdefault(file, [0, 0, 0])
        c[0] += n_acc
        c[1] += n_acc
        all_kept = n_acc == len(eps)
        for cols, owner, _, _ in parts:
            if not len(owner):
                continue
            if all_kept:
                self._keep_steps(cols, len(owner))
                continue
            step_keep = keep[owner]
            if step_keep.all():
                self._keep_steps(cols, len(owner))
            elif step_keep.any():
                mask = pa.array(step_keep)
                self._keep_steps({k: (pc.filter(v, mask, memory_pool=_POOL) if isinstance(v, pa.Array)
                                      else v[step_keep])
                                  for k, v in cols.items()}, int(step_keep.sum()))

    def _keep_steps(self, cols: dict, n: int) -> None:
        """Keep a chunk of accepted step columns. Adapters add one episode at a time: their many tiny
        chunks are merged in groups, so the per-array overhead does not dominate memory."""
        self._chunks.append(cols)
        if n >= SMALL_CHUNK:
            self._n_small = 0
            return
        self._n_small += 1
        if self._n_small >= MERGE_SMALL:
            merged = _concat_chunks(self._chunks[-self._n_small:])
            del self._chunks[-self._n_small:]
            self._chunks.append(merged)
            self._n_small = 0

    def reject(self, file: str, line: int, field: str, reason: str, raw) -> None:
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        elif not isinstance(raw, str):
            try:
                raw = orjson.dumps(raw, default=str).decode()
            except TypeError:
                raw = repr(raw)
        self._quarantine.append((file, line, field, reason, raw.rstrip("\r\n")[:RAW_LIMIT]))
        self._count(file, 0, 1)

    def _count(self, file: str, acc: int, qua: int) -> None:
        c = self._files.setdefault(file, [0, 0, 0])
        c[0] += 1
        c[1] += acc
        c[2] += qua

    def finish(self) -> LoadResult:
        ep = _episode_columns(self._ep_rows)
        n_ep = len(self._ep_rows)
        ep_index = np.repeat(np.arange(n_ep), ep["n_steps"])
        cols = _concat_chunks(self._chunks)
        cols["fallback"] = _fallback_by_run(cols["fallback"], ep["run_id"], ep_index)
        paused = pc.equal(ep["clock"], "paused").to_numpy(zero_copy_only=False)
        timing = _timing(cols["latency"], cols["window_open"], cols["window_close"], paused[ep_index],
                         cols["valid_at_exec"], cols["fallback"], cols["correct_at_obs"])
        steps = _step_frame(cols, timing, ep, ep_index)
        fb_true = cols["fallback"] == 1
        ep["n_fallback"] = _per_episode_sum(fb_true, ep_index, n_ep)
        ep["failure_type"] = _failure_types(timing, cols["correct_at_obs"], ep["success"], paused, ep_index)
        episodes = _episode_frame(ep, self._conditions)
        episodes = schema.conform(episodes, schema.EPISODE_COLUMNS)
        quarantine = schema.conform(
            pd.DataFrame(self._quarantine, columns=list(schema.QUARANTINE_COLUMNS)), schema.QUARANTINE_COLUMNS
        )
        files = pd.DataFrame(
            [(p, *c) for p, c in self._files.items()], columns=["path", "n_read", "n_accepted", "n_quarantined"]
        ).astype({"path": "str", "n_read": "int64", "n_accepted": "int64", "n_quarantined": "int64"})
        return LoadResult(episodes=episodes, steps=steps, quarantine=quarantine, files=files)


# columns of one chunk of steps: floats (NaN when absent), booleans as int8 codes (1 true, 0 false,
# -1 absent), tokens as int64 with a missing mask, action as Arrow text


def _floats(values: list) -> np.ndarray:
    return pa.array(values, type=_F64, memory_pool=_POOL).to_numpy(zero_copy_only=False)  # None -> NaN


def _bool_codes(values: list) -> np.ndarray:
    b = pa.array(values, type=pa.bool_(), memory_pool=_POOL)
    if not b.null_count:
        return b.to_numpy(zero_copy_only=False).view(np.int8)
    if b.null_count == len(b):
        return np.full(len(b), -1, dtype=np.int8)
    codes = b.fill_null(False).to_numpy(zero_copy_only=False).view(np.int8)
    if not codes.flags.writeable:
        codes = codes.copy()
    codes[b.is_null().to_numpy(zero_copy_only=False)] = -1
    return codes


def _step_columns(steps_per: list, n: int) -> dict:
    """Columns of a chunk of decoded steps (``steps_per``: each episode's list of :class:`_Step`).

    ``astuple`` reads all fields of a step in one C call; the flat list of fields is then cut into
    columns by strided slices (C) and converted by pyarrow, which turns lists holding None into
    arrays several times faster than numpy: ~1.7x cheaper than one attribute pass per field.
    """
    nf = len(_STEP_FIELDS)
    flat = list(itertools.chain.from_iterable(map(_astuple, itertools.chain.from_iterable(steps_per))))
    raw = {k: flat[i::nf] for i, k in enumerate(_STEP_FIELDS)}
    del flat
    cols = {k: _floats(raw[k]) for k in ("t_obs", "t_act", "latency", "reward")}
    try:  # every step has a window: one flat list of numbers
        wv = _floats(list(itertools.chain.from_iterable(raw["window"])))
        cols["window_open"], cols["window_close"] = wv[0::2], wv[1::2]
    except TypeError:  # some are absent (None)
        wa = pa.array(raw["window"], type=pa.list_(_F64, 2), memory_pool=_POOL)
        wv = wa.flatten().to_numpy(zero_copy_only=False)
        wnull = wa.is_null().to_numpy(zero_copy_only=False)
        cols["window_open"] = np.full(n, np.nan)
        cols["window_close"] = np.full(n, np.nan)
        cols["window_open"][~wnull] = wv[0::2]
        cols["window_close"][~wnull] = wv[1::2]
    for k in _STEP_BOOLS:
        cols[k] = _bool_codes(raw[k])
    t = pa.array(raw["tokens"], type=pa.int64(), memory_pool=_POOL)
    cols["tokens"] = t.fill_null(0).to_numpy(zero_copy_only=False)
    cols["tokens_na"] = t.is_null().to_numpy(zero_copy_only=False)
    cols["action"] = pa.array(raw["action"], type=_TEXT_ARROW, memory_pool=_POOL)
    return cols


def _batch_columns(eps: list, start: int) -> tuple:
    """Step columns of ``eps[start:]``, their owners (indices into ``eps``) and the episodes that break
    a cross-field rule, and the step counts. The step objects are released here, while in cache."""
    batch = eps[start:]
    steps_per = [ep.steps or () for ep in batch]
    lengths = np.fromiter(map(len, steps_per), dtype=np.int64, count=len(batch))
    cols = _step_columns(steps_per, int(lengths.sum()))
    del steps_per
    for ep in batch:
        ep.steps = None
    owner = np.repeat(np.arange(start, len(eps)), lengths)
    bad = np.unique(owner[_cross_field_violations(cols, owner)]).tolist()
    return cols, owner, bad, lengths


def _cross_field_violations(c: dict, owner: np.ndarray) -> np.ndarray:
    """Mask of steps breaking a rule typed decoding cannot check; resolves ``t_act``/``latency`` in place."""
    t_obs, t_act, lat = c["t_obs"], c["t_act"], c["latency"]
    absent = t_act == _ABSENT
    given = ~absent & ~np.isnan(t_act)
    has_lat = ~np.isnan(lat)
    with np.errstate(invalid="ignore"):
        bad = given & (t_act < t_obs)
        bad |= given & has_lat & (np.abs((t_act - t_obs) - lat) > LATENCY_TOLERANCE)
        bad |= ~absent & ~given & has_lat  # explicit null t_act (no action) with a latency
        bad |= c["window_open"] > c["window_close"]
    bad[1:] |= (owner[1:] == owner[:-1]) & (t_obs[1:] < t_obs[:-1])
    # "latency if given", else t_act - t_obs; t_act from the latency when absent
    c["latency"] = np.where(has_lat, lat, np.where(given, t_act - t_obs, np.nan))
    c["t_act"] = np.where(given, t_act, np.where(has_lat, t_obs + lat, np.nan))
    return bad


def _concat_chunks(chunks: list[dict]) -> dict:
    if not chunks:
        chunks = [_step_columns([], 0)]
    out = {}
    for k in chunks[0]:
        parts = [c[k] for c in chunks]
        out[k] = pa.concat_arrays(parts, memory_pool=_POOL) if isinstance(parts[0], pa.Array) else np.concatenate(parts)
    return out


_EP_FIELDS = ("run_id", "episode_id", "model", "task", "task_type", "clock", "time_unit", "seed", "success",
              "score", "n_steps", "meta", "source_file", "source_line")
_EP_TEXT = ("run_id", "episode_id", "model", "task", "task_type", "clock", "time_unit", "meta", "source_file")


def _text(values) -> pd.arrays.ArrowStringArray:
    """A pandas ``str`` array (Arrow large_string storage, NaN for missing) without per-value Python work."""
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = pa.array(values, type=_TEXT_ARROW, memory_pool=_POOL)
    return pd.arrays.ArrowStringArray(values, dtype=_TEXT)


def _episode_columns(rows: list[tuple]) -> dict:
    """The episode fields as columns (text as Arrow-backed ``str`` arrays, built once per episode)."""
    n = len(rows)
    raw = dict(zip(_EP_FIELDS, map(list, zip(*rows)))) if n else {k: [] for k in _EP_FIELDS}
    ep: dict = {k: pa.array(raw[k], type=_TEXT_ARROW, memory_pool=_POOL) for k in _EP_TEXT}
    seed = pa.array(raw["seed"], type=pa.int64())
    ep["seed"] = seed.fill_null(0).to_numpy(zero_copy_only=False)
    ep["seed_na"] = seed.is_null().to_numpy(zero_copy_only=False)
    ep["success"] = np.array(raw["success"], dtype=bool)
    ep["score"] = pa.array(raw["score"], type=_F64).to_numpy(zero_copy_only=False)
    ep["n_steps"] = np.array(raw["n_steps"], dtype=np.int64)
    ep["source_line"] = np.array(raw["source_line"], dtype=np.int64)
    return ep


def _episode_frame(ep: dict, conditions: list[dict | None]) -> pd.DataFrame:
    data = {k: (_text(ep[k]) if k in _EP_TEXT else ep[k]) for k in _EP_FIELDS}
    data["seed"] = pd.arrays.IntegerArray(ep["seed"], ep["seed_na"])
    data["n_fallback"] = ep["n_fallback"]
    data["failure_type"] = ep["failure_type"]
    keys = dict.fromkeys(itertools.chain.from_iterable(filter(None, conditions)))
    empty: dict = {}
    for k in keys:
        values = [(c or empty).get(k) for c in conditions]
        col = schema.condition_column(k)
        try:
            data[col] = pa.array(values, type=pa.float64()).to_numpy(zero_copy_only=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            # text, or mixed text and numbers in one key: kept as text
            data[col] = _text([None if v is None else str(v) for v in values])
    return pd.DataFrame(data, index=pd.RangeIndex(len(ep["n_steps"])))


def _step_frame(cols: dict, timing: dict, ep: dict, ep_index: np.ndarray) -> pd.DataFrame:
    """The steps table, built once in its final column order and dtypes (no conform copies)."""
    n = len(ep_index)
    idx = pa.array(ep_index)
    out: dict[str, object] = {}
    for k in schema.STEP_EPISODE_KEYS:
        if k == "seed":
            out[k] = pd.arrays.IntegerArray(ep["seed"][ep_index], ep["seed_na"][ep_index])
        else:  # Arrow take: no per-row Python strings
            out[k] = _text(pc.take(ep[k], idx, memory_pool=_POOL))
    starts = np.cumsum(ep["n_steps"]) - ep["n_steps"]
    out["step"] = np.arange(n, dtype=np.int64) - starts[ep_index]
    for k in ("t_obs", "t_act", "latency", "window_open", "window_close"):
        out[k] = cols[k]
    out["action"] = _text(cols["action"])
    for k in _STEP_BOOLS:
        out[k] = _boolean(cols[k])
    out["tokens"] = pd.arrays.IntegerArray(cols["tokens"], cols["tokens_na"])
    out["reward"] = cols["reward"]
    out.update(_timing_columns(timing))
    frame = pd.DataFrame(out, index=pd.RangeIndex(n), copy=False)  # the arrays are this frame's own
    if list(frame.columns) != list(schema.STEP_COLUMNS) or [str(d) for d in frame.dtypes] != list(
            schema.STEP_COLUMNS.values()):  # the contract changed: conform (slower, same result)
        frame = schema.conform(frame, schema.STEP_COLUMNS, extra=False)
    return frame


def _boolean(codes: np.ndarray) -> pd.arrays.BooleanArray:
    return pd.arrays.BooleanArray(codes == 1, codes < 0)


def _timing(lat, lo, hi, paused, valid, fallback, correct) -> dict:
    """The derived timing as arrays; booleans given as int8 codes (1 true, 0 false, -1 absent)."""
    no_action = np.isnan(lat)
    has_w = ~np.isnan(hi)
    v_known = valid >= 0
    v_false = valid == 0
    # a default action played because inference did not finish is a timing miss (late)
    fb_true = fallback == 1
    v_false = v_false | fb_true
    v_known = v_known | fb_true
    acted = ~no_action
    with np.errstate(invalid="ignore"):
        early_w = acted & has_w & (lat < lo)
        late_w = acted & has_w & (lat > hi)
    timed = acted & ~paused
    too_early = timed & early_w
    too_late = timed & (late_w | (v_false & ~early_w))
    known = timed & (has_w | v_known)
    on_time_val = acted & (paused | (~too_early & ~too_late))
    timing_known = no_action | paused | known
    c_true = correct == 1
    c_false = correct == 0

    outcome = np.full(len(lat), _UNKNOWN, dtype=np.int8)
    outcome[acted & timing_known & on_time_val & c_true] = _OK
    outcome[acted & too_late & ~c_false] = _LATE
    outcome[acted & too_early & ~c_false] = _EARLY
    outcome[acted & c_false] = _WRONG
    outcome[no_action] = _SILENT
    return {"on_time": on_time_val, "too_early": too_early, "too_late": too_late, "known": timing_known,
            "no_action": no_action, "outcome": outcome}


_OUTCOME_TEXT = pa.array(_OUTCOMES, type=_TEXT_ARROW)
_FAILURE_TEXT = pa.array(_FAILURES, type=_TEXT_ARROW)


def _timing_columns(t: dict) -> dict:
    unknown = ~t["known"]
    return {
        "on_time": pd.arrays.BooleanArray(t["on_time"], unknown),
        "too_early": pd.arrays.BooleanArray(t["too_early"], unknown.copy()),
        "too_late": pd.arrays.BooleanArray(t["too_late"], unknown.copy()),
        "no_action": t["no_action"],
        "outcome": _text(pc.take(_OUTCOME_TEXT, pa.array(t["outcome"]), memory_pool=_POOL)),
    }


def _codes(col) -> np.ndarray:
    """int8 codes of a boolean-like column: 1 true, 0 false, -1 missing."""
    a = col.array
    isna = np.asarray(a.isna())
    true = ~isna & a.fillna(False).to_numpy(bool)
    return np.where(isna, -1, true).astype(np.int8)


def derive_timing(steps: pd.DataFrame) -> pd.DataFrame:
    """on_time / too_early / too_late / no_action and the decision ``outcome``.

    Rules (docs/rtlog-v1.md, "Derived timing"): under ``paused`` timing cannot fail; a window
    decides on time when known, and ``valid_at_exec = false`` marks a decision late when the window
    does not already say early; no action at all is ``silent``; content wrong is ``wrong`` whatever
    the timing; the rest that cannot be decided is ``unknown``.
    """
    t = _timing(steps["latency"].to_numpy(float), steps["window_open"].to_numpy(float),
                steps["window_close"].to_numpy(float), steps["clock"].to_numpy() == "paused",
                _codes(steps["valid_at_exec"]), _codes(steps["fallback"]), _codes(steps["correct_at_obs"]))
    return pd.DataFrame(_timing_columns(t), index=steps.index)


def _fallback_by_run(fallback: np.ndarray, run_id: pa.Array, ep_index: np.ndarray) -> np.ndarray:
    """The ``fallback`` rule (docs/rtlog-v1.md): a run that logs ``fallback`` on any decision logs it
    on every decision, so there a decision without the field did not fall back (code 0, false).

    Harnesses write ``fallback: true`` only where a default action was played; reading the other
    decisions as unlabelled would make every fallback rate 1. Runs that never log it stay unknown.
    """
    absent = fallback < 0
    if not absent.any() or absent.all():
        return fallback
    step_run = pc.dictionary_encode(run_id).indices.to_numpy(zero_copy_only=False)[ep_index]
    run_logs = np.bincount(step_run[~absent], minlength=len(run_id)) > 0
    out = fallback.copy()
    out[absent & run_logs[step_run]] = 0
    return out


def _per_episode_sum(values: np.ndarray, ep_index: np.ndarray, n: int) -> np.ndarray:
    """How many of each episode's decisions have ``values`` (a boolean mask over decisions) true."""
    return np.bincount(ep_index[values], minlength=n).astype(np.int64, copy=False)


def _failure_types(timing: dict, correct: np.ndarray, success: np.ndarray, paused: np.ndarray,
                   ep_index: np.ndarray) -> pd.arrays.ArrowStringArray:
    """Observed failure type of each episode from its decisions' labels.

    ``none`` for a success; a failure under ``paused`` is ``capability`` by definition; otherwise
    ``capability`` (some content wrong, every decision's timing known and none missed), ``timing``
    (no content wrong, every action labelled, some window missed or no action), ``both``, or
    ``unknown`` when the fields cannot decide.
    """
    n = len(success)
    oc = timing["outcome"]
    wrong = _per_episode_sum(oc == _WRONG, ep_index, n) > 0
    missed = _per_episode_sum((oc == _LATE) | (oc == _EARLY) | (oc == _SILENT), ep_index, n) > 0
    unlabelled = _per_episode_sum((correct < 0) & ~timing["no_action"], ep_index, n) > 0
    timing_unknown = _per_episode_sum(~timing["known"], ep_index, n) > 0
    out = np.zeros(n, dtype=np.int8)  # unknown
    out[wrong & missed] = 1
    out[wrong & ~missed & ~timing_unknown] = 2
    out[~wrong & missed & ~unlabelled] = 3
    out[paused] = 2
    out[success] = 4
    return _text(pc.take(_FAILURE_TEXT, pa.array(out), memory_pool=_POOL))


# --------------------------------------------------------------------------------------------
# files


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

    ``progress``: show a progress bar; by default only for inputs over 32 MiB.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = find_log_files(paths)
    sink = sink or EpisodeSink()
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of short-lived objects, no cycles: the collector only costs time here
    try:
        return _load_files(files, sink, progress)
    finally:
        if gc_was_enabled:
            gc.enable()


def _load_files(files: list[Path], sink: EpisodeSink, progress: bool | None) -> LoadResult:
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
    return sink.finish()


def json_schema() -> dict:
    """The JSON Schema of an rtlog v1 record, as shipped in the package (for harness authors)."""
    from importlib.resources import files

    return orjson.loads(files("rtanalysis").joinpath("rtlog-v1.schema.json").read_bytes())

