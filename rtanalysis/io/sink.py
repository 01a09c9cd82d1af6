"""The columnar sink: typed decoding (msgspec, in C), vectorised cross-field rules, and the tidy tables.

:class:`EpisodeSink` takes raw JSON lines (the fast path of :func:`~rtanalysis.io.load_rtlog`)
or decoded episode dicts (adapters) and keeps accepted decisions as compact per-chunk columns;
:meth:`EpisodeSink.finish` builds the ``episodes``, ``steps`` and ``quarantine`` frames.
"""

from __future__ import annotations

import itertools
from typing import Annotated, Literal

import msgspec
import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import schema
from .arrow import _F64, _POOL, _TEXT_ARROW, _category, _text
from .decisions import _failure_types, _fallback_by_run, _per_episode_sum, _timing, _timing_columns
from .memory import TRIM_MIN_DECISIONS, release_freed_memory
from .result import LoadResult
from .validation import _STEP_BOOLS, LATENCY_TOLERANCE, explain

RAW_LIMIT = 1024  # bytes of a bad record's text kept in the quarantine

# The fast path: typed decoding (msgspec, in C) and vectorised cross-field rules. The Python
# validator (.validation) is the reference: it explains every record that the fast path rejects.
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
    no_action_cause: Literal["timeout", "error", "other"] | None = None
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
    ended: Literal["horizon", "failure", "cut"] | None = None
    steps: list[_Step] | None = None
    meta: msgspec.Raw = msgspec.Raw()


_STEP_FIELDS = ("t_obs", "t_act", "latency", "window", "action",
                "correct_at_obs", "valid_at_exec", "fallback", "no_action_cause", "tokens", "reward")
assert _Step.__struct_fields__ == _STEP_FIELDS  # _step_columns relies on the field order
_DECODER = msgspec.json.Decoder(_Episode)
_CAUSE_TEXT = pa.array(schema.NO_ACTION_CAUSES, type=pa.string())
BATCH_BYTES = 2**20  # JSON text decoded before its steps become columns: keeps the step objects in cache
SMALL_CHUNK, MERGE_SMALL = 1024, 256  # MERGE_SMALL kept chunks of < SMALL_CHUNK decisions become one
_astuple = msgspec.structs.astuple


class EpisodeSink:
    """Accumulates validated episodes and quarantined records; :meth:`~rtanalysis.io.EpisodeSink.finish`
    builds the tables.

    Feed it raw JSON lines (:meth:`add_lines`, the fast path of :func:`~rtanalysis.io.load_rtlog`) or decoded
    rtlog episode dicts (:meth:`add`, for adapters). Either way every rule of the format is checked.

    Accepted decisions are kept as compact per-chunk columns (float64, int8 codes, Arrow text), not
    Python objects, so memory is about 60 bytes per decision and does not depend on the file count.
    """

    def __init__(self, key_dtype: str = "str"):
        """``key_dtype``: how the tables store their repeated text keys, ``"str"`` or ``"category"``
        (:func:`rtanalysis.schema.with_key_dtype`)."""
        schema.with_key_dtype(schema.STEP_COLUMNS, key_dtype)  # an unknown name is an error here
        self._key_dtype = key_dtype
        self._ep_rows: list[tuple] = []
        self._conditions: list[dict | None] = []
        self._chunks: list[dict] = []
        self._n_small = 0  # trailing chunks under SMALL_CHUNK decisions, merged when there are many
        self._seen: dict[tuple[str, str], tuple[str, int]] = {}
        self._quarantine: list[tuple] = []
        self._files: dict[str, list[int]] = {}
        self._finished = False

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

    def add_lines(self, lines: list[tuple], file: str) -> None:
        """Validate a chunk of ``(line, raw, json_bytes)``: accepted ones are kept, others quarantined.

        Quarantine rows come in a fixed order per call: records that fail typed decoding, then those
        breaking a cross-field rule, then duplicates, each in line order.
        """
        eps, where, parts = self._decode(lines, file)
        if not eps:
            return
        keep = np.ones(len(eps), dtype=bool)
        for i in itertools.chain.from_iterable(p[2] for p in parts):
            line, raw, blob = where[i]
            self.reject(file, line, *explain(blob), raw)
            keep[i] = False
        n_acc = self._accept_episodes(eps, where, np.concatenate([p[3] for p in parts]).tolist(), keep, file)
        c = self._files.setdefault(file, [0, 0, 0])
        c[0] += n_acc
        c[1] += n_acc
        self._keep_accepted_steps(parts, keep, all_kept=n_acc == len(eps))

    def _decode(self, lines: list[tuple], file: str) -> tuple[list, list, list]:
        """Typed decoding of each line (failures quarantined); the decoded episodes, their
        ``(line, raw, json)`` and, per batch of about BATCH_BYTES, (step columns, owner, episodes
        breaking a cross-field rule, step counts)."""
        eps: list[_Episode] = []
        where: list[tuple] = []
        parts: list[tuple] = []
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
        if start < len(eps):
            parts.append(_batch_columns(eps, start))
        return eps, where, parts

    def _accept_episodes(self, eps: list, where: list, lengths: list, keep: np.ndarray, file: str) -> int:
        """Keep the episode rows of ``eps`` still marked in ``keep``, quarantining (and unmarking)
        duplicates of an episode already seen; returns how many were accepted."""
        keep_l = keep.tolist()
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
            if ep.ended == "failure" and ep.success:  # a rule between fields: the validator names it
                self.reject(file, line, *explain(where[i][2]), raw)
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
                         ep.seed, ep.success, ep.score, ep.ended, lengths[i], meta, file, line))
            conditions.append(ep.conditions)
            n_acc += 1
        return n_acc

    def _keep_accepted_steps(self, parts: list, keep: np.ndarray, all_kept: bool) -> None:
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
        """The tables, built once: the sink gives up what it held (its episode rows, the index of
        episodes seen, its step chunks) as the tables are built, so the rows and the tables are not
        all in memory at once (millions of Python objects at 10^6 episodes). A second call is an error,
        not an empty result."""
        if self._finished:
            raise RuntimeError("EpisodeSink.finish() was called already: it builds the tables once (load_rtlog(..., "
                               "sink=s) calls it; rtanalysis.io.read_rtlog feeds a sink without finishing it)")
        self._finished = True
        ep = _episode_columns(self._ep_rows)
        n_ep = len(self._ep_rows)
        self._ep_rows, self._seen = [], {}
        ep_index = np.repeat(np.arange(n_ep), ep["n_steps"])
        cols = _concat_chunks(self._chunks)
        self._chunks, self._n_small = [], 0
        cols["fallback"] = _fallback_by_run(cols["fallback"], ep["run_id"], ep_index)
        paused = pc.equal(ep["clock"], "paused").to_numpy(zero_copy_only=False)
        timing = _timing(cols["latency"], cols["window_open"], cols["window_close"], paused[ep_index],
                         cols["valid_at_exec"], cols["fallback"], cols["correct_at_obs"], cols["cause"])
        steps = _step_frame(cols, timing, ep, ep_index, self._key_dtype)
        fb_true = cols["fallback"] == 1
        ep["n_fallback"] = _per_episode_sum(fb_true, ep_index, n_ep)
        ep["failure_type"] = _failure_types(timing, cols["correct_at_obs"], ep["success"], paused, ep_index)
        episodes = _episode_frame(ep, self._conditions)
        self._conditions = []
        episodes = schema.conform(episodes, schema.with_key_dtype(schema.EPISODE_COLUMNS, self._key_dtype))
        quarantine = schema.conform(
            pd.DataFrame(self._quarantine, columns=list(schema.QUARANTINE_COLUMNS)), schema.QUARANTINE_COLUMNS
        )
        files = pd.DataFrame(
            [(p, *c) for p, c in self._files.items()], columns=["path", "n_read", "n_accepted", "n_quarantined"]
        ).astype({"path": "str", "n_read": "int64", "n_accepted": "int64", "n_quarantined": "int64"})
        if n_ep and len(steps) >= TRIM_MIN_DECISIONS:
            del cols, timing, ep, ep_index, paused, fb_true  # what built the tables, freed before the trim
            release_freed_memory()  # the decoded records' memory, freed: back to the OS, not kept resident
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


def _cause_codes(values: list) -> np.ndarray:
    """``no_action_cause`` as int8 positions in :data:`rtanalysis.schema.NO_ACTION_CAUSES` (-1 absent)."""
    text = pa.array(values, type=pa.string(), memory_pool=_POOL)
    if text.null_count == len(text):
        return np.full(len(text), -1, dtype=np.int8)
    return pc.index_in(text, value_set=_CAUSE_TEXT).fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int8)


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
    cols["cause"] = _cause_codes(raw["no_action_cause"])
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
        # a cause of no action on a decision that acted (and played no default action) contradicts itself
        bad |= (c["cause"] >= 0) & (has_lat | given) & (c["fallback"] != 1)
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
              "score", "ended", "n_steps", "meta", "source_file", "source_line")
_EP_TEXT = ("run_id", "episode_id", "model", "task", "task_type", "clock", "time_unit", "ended", "meta",
            "source_file")


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


def _step_frame(cols: dict, timing: dict, ep: dict, ep_index: np.ndarray, key_dtype: str) -> pd.DataFrame:
    """The steps table, built once in its final column order and dtypes (no conform copies)."""
    contract = schema.with_key_dtype(schema.STEP_COLUMNS, key_dtype)
    categorical = key_dtype == "category"
    n = len(ep_index)
    out: dict[str, object] = {}
    for k in schema.STEP_EPISODE_KEYS:
        if k == "seed":
            out[k] = pd.arrays.IntegerArray(ep["seed"][ep_index], ep["seed_na"][ep_index])
        elif categorical:  # codes per decision: no repeated text
            out[k] = _category(ep[k], ep_index)
        else:  # Arrow take: no per-row Python strings
            out[k] = _text(pc.take(ep[k], pa.array(ep_index), memory_pool=_POOL))
    starts = np.cumsum(ep["n_steps"]) - ep["n_steps"]
    out["step"] = np.arange(n, dtype=np.int64) - starts[ep_index]
    for k in ("t_obs", "t_act", "latency", "window_open", "window_close"):
        out[k] = cols[k]
    out["action"] = _text(cols["action"])
    for k in _STEP_BOOLS:
        out[k] = _boolean(cols[k])
    out["no_action_cause"] = _cause_column(cols["cause"], categorical)
    out["tokens"] = pd.arrays.IntegerArray(cols["tokens"], cols["tokens_na"])
    out["reward"] = cols["reward"]
    out.update(_timing_columns(timing, categorical))
    frame = pd.DataFrame(out, index=pd.RangeIndex(n), copy=False)  # the arrays are this frame's own
    if list(frame.columns) != list(contract) or [str(d) for d in frame.dtypes] != list(
            contract.values()):  # the contract changed: conform (slower, same result)
        frame = schema.conform(frame, contract, extra=False)
    return frame


def _cause_column(codes: np.ndarray, categorical: bool):
    text = pc.take(_CAUSE_TEXT, pa.array(codes, mask=codes < 0).cast(pa.int32()), memory_pool=_POOL)
    return _category(text.cast(_TEXT_ARROW)) if categorical else _text(text.cast(_TEXT_ARROW))


def _boolean(codes: np.ndarray) -> pd.arrays.BooleanArray:
    return pd.arrays.BooleanArray(codes == 1, codes < 0)
