"""Load rtlog v1 trajectory logs into tidy ``episodes`` and ``steps`` frames.

Every rule of the format (docs/rtlog-v1.md) is checked here. A record that breaks one is
quarantined with its file, line, field and reason; nothing is dropped or repaired, and the counts
reconcile: ``n_read = n_accepted + n_quarantined``, in total and per file.

Adapters for other harnesses turn their files into rtlog episode dicts and feed them to the same
:class:`EpisodeSink`, so every source gets the same validation, tables and quarantine.
"""

from __future__ import annotations

import gzip
import math
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
import orjson
import pandas as pd

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
    """Check every decision; return tuples in :data:`_STEP_FIELDS` order."""
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


_STEP_FIELDS = ("t_obs", "t_act", "latency", "window_open", "window_close", "action",
                "correct_at_obs", "valid_at_exec", "fallback", "tokens", "reward")


# --------------------------------------------------------------------------------------------
# accumulation


class EpisodeSink:
    """Accumulates validated episodes and quarantined records; :meth:`finish` builds the tables."""

    def __init__(self):
        self._ep: dict[str, list] = {k: [] for k in (
            "run_id", "episode_id", "model", "task", "task_type", "clock", "time_unit", "seed",
            "success", "score", "n_steps", "meta", "source_file", "source_line")}
        self._conditions: list[dict | None] = []
        self._steps: list[tuple] = []
        self._step_episode: list[int] = []
        self._seen: dict[tuple[str, str], str] = {}
        self._quarantine: list[tuple] = []
        self._files: dict[str, list[int]] = {}

    def open_file(self, path: str) -> None:
        self._files.setdefault(path, [0, 0, 0])

    def add_raw(self, raw: bytes | str, file: str, line: int) -> None:
        """Decode and validate one JSON line."""
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
            self.reject(file, line, "<record>", f"not valid JSON: {e}", text)
            return
        self.add(rec, file, line, raw)

    def add(self, rec, file: str, line: int, raw=None) -> bool:
        """Validate one decoded episode record; accept it or quarantine it. Returns acceptance."""
        try:
            ep = validate_episode(rec)
            steps = validate_steps(ep["steps"])
        except RecordError as e:
            self.reject(file, line, e.field, e.reason, raw if raw is not None else rec)
            return False
        key = (ep["run_id"], ep["episode_id"])
        first = self._seen.get(key)
        if first is not None:
            self.reject(file, line, "episode_id", f"duplicate (run_id, episode_id) = {key}; first seen at {first}",
                        raw if raw is not None else rec)
            return False
        self._seen[key] = f"{file}:{line}"
        e = self._ep
        idx = len(e["run_id"])
        for k in ("run_id", "episode_id", "model", "task", "task_type", "clock", "time_unit", "seed", "success", "score"):
            e[k].append(ep[k])
        e["n_steps"].append(len(steps))
        e["meta"].append(orjson.dumps(ep["meta"]).decode() if ep["meta"] is not None else None)
        e["source_file"].append(file)
        e["source_line"].append(line)
        self._conditions.append(ep["conditions"])
        self._steps.extend(steps)
        self._step_episode.extend([idx] * len(steps))
        self._count(file, 1, 0)
        return True

    def reject(self, file: str, line: int, field: str, reason: str, raw) -> None:
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        if isinstance(raw, str):
            raw = raw.rstrip("\r\n")
        elif not isinstance(raw, str):
            try:
                raw = orjson.dumps(raw, default=str).decode()
            except TypeError:
                raw = repr(raw)
        self._quarantine.append((file, line, field, reason, raw[:RAW_LIMIT]))
        self._count(file, 0, 1)

    def _count(self, file: str, acc: int, qua: int) -> None:
        c = self._files.setdefault(file, [0, 0, 0])
        c[0] += 1
        c[1] += acc
        c[2] += qua

    def finish(self) -> LoadResult:
        episodes = _episode_frame(self._ep, self._conditions)
        steps = _step_frame(self._steps, np.asarray(self._step_episode, dtype=np.int64), episodes)
        episodes["n_fallback"] = _per_episode_sum(steps["fallback"].fillna(False).to_numpy(bool),
                                                  np.asarray(self._step_episode, dtype=np.int64), len(episodes))
        episodes["failure_type"] = _failure_types(episodes, steps, np.asarray(self._step_episode, dtype=np.int64))
        episodes = schema.conform(episodes, schema.EPISODE_COLUMNS)
        quarantine = schema.conform(
            pd.DataFrame(self._quarantine, columns=list(schema.QUARANTINE_COLUMNS)), schema.QUARANTINE_COLUMNS
        )
        files = pd.DataFrame(
            [(p, *c) for p, c in self._files.items()], columns=["path", "n_read", "n_accepted", "n_quarantined"]
        ).astype({"path": "str", "n_read": "int64", "n_accepted": "int64", "n_quarantined": "int64"})
        return LoadResult(episodes=episodes, steps=steps, quarantine=quarantine, files=files)


def _episode_frame(cols: dict[str, list], conditions: list[dict | None]) -> pd.DataFrame:
    n = len(cols["run_id"])
    data = {k: v for k, v in cols.items()}
    data["seed"] = pd.array(data["seed"], dtype="Int64")
    data["score"] = np.array([np.nan if v is None else v for v in data["score"]], dtype=float)
    frame = pd.DataFrame(data, index=pd.RangeIndex(n))
    keys: dict[str, None] = {}
    for c in conditions:
        if c:
            keys.update(dict.fromkeys(c))
    for k in keys:
        values = [None if c is None else c.get(k) for c in conditions]
        col = schema.condition_column(k)
        if all(v is None or type(v) in _NUM for v in values):
            frame[col] = np.array([np.nan if v is None else v for v in values], dtype=float)
        else:
            # mixed string/number values of one key are kept as text
            frame[col] = pd.array([None if v is None else str(v) for v in values], dtype="str")
    return frame


def _bool_array(values) -> pd.arrays.BooleanArray:
    codes = np.fromiter((2 if v is None else v for v in values), dtype=np.int8, count=len(values))
    return pd.arrays.BooleanArray(codes == 1, codes == 2)


def _float_array(values) -> np.ndarray:
    return np.fromiter((np.nan if v is None else v for v in values), dtype=np.float64, count=len(values))


def _step_frame(rows: list[tuple], ep_index: np.ndarray, episodes: pd.DataFrame) -> pd.DataFrame:
    n = len(rows)
    cols = list(zip(*rows)) if n else [()] * len(_STEP_FIELDS)
    raw = dict(zip(_STEP_FIELDS, cols))
    out: dict[str, object] = {}
    for k in schema.STEP_EPISODE_KEYS:
        out[k] = episodes[k].to_numpy()[ep_index] if k != "seed" else episodes[k].array.take(ep_index)
    if n:
        starts = np.r_[0, np.flatnonzero(np.diff(ep_index)) + 1]
        step_no = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
    else:
        step_no = np.zeros(0, dtype=np.int64)
    out["step"] = step_no.astype(np.int64)
    for k in ("t_obs", "t_act", "latency", "window_open", "window_close", "reward"):
        out[k] = _float_array(raw[k])
    out["action"] = pd.array(list(raw["action"]), dtype="str")
    for k in _STEP_BOOLS:
        out[k] = _bool_array(raw[k])
    out["tokens"] = pd.array(list(raw["tokens"]), dtype="Int64")
    frame = pd.DataFrame(out)
    frame = pd.concat([frame, derive_timing(frame)], axis=1)
    return schema.conform(frame, schema.STEP_COLUMNS, extra=False)


def derive_timing(steps: pd.DataFrame) -> pd.DataFrame:
    """on_time / too_early / too_late / no_action and the decision ``outcome``.

    Rules (docs/rtlog-v1.md, "Derived timing"): under ``paused`` timing cannot fail; a window
    decides on time when known, and ``valid_at_exec = false`` marks a decision late when the window
    does not already say early; no action at all is ``silent``; content wrong is ``wrong`` whatever
    the timing; the rest that cannot be decided is ``unknown``.
    """
    lat = steps["latency"].to_numpy(float)
    lo = steps["window_open"].to_numpy(float)
    hi = steps["window_close"].to_numpy(float)
    paused = (steps["clock"].to_numpy() == "paused")
    no_action = np.isnan(lat)
    has_w = ~np.isnan(hi)
    valid = steps["valid_at_exec"].array
    v_known = ~valid.isna().to_numpy() if hasattr(valid.isna(), "to_numpy") else ~np.asarray(valid.isna())
    v_false = v_known & ~valid.fillna(True).to_numpy(bool)
    # a default action played because inference did not finish is a timing miss (late)
    fb = steps["fallback"].array
    fb_true = ~np.asarray(fb.isna()) & fb.fillna(False).to_numpy(bool)
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
    on_time_known = no_action | paused | known
    corr = steps["correct_at_obs"].array
    c_known = ~np.asarray(corr.isna())
    c_true = c_known & corr.fillna(False).to_numpy(bool)
    c_false = c_known & ~corr.fillna(True).to_numpy(bool)

    outcome = np.full(len(steps), "unknown", dtype=object)
    ok = acted & on_time_known & on_time_val & c_true
    outcome[ok] = "ok"
    outcome[acted & (too_late) & ~c_false] = "late"
    outcome[acted & (too_early) & ~c_false] = "early"
    outcome[acted & c_false] = "wrong"
    outcome[no_action] = "silent"

    def nb(values, known_mask):
        return pd.arrays.BooleanArray(np.asarray(values, bool), ~np.asarray(known_mask, bool))

    timing_known = no_action | paused | known
    return pd.DataFrame({
        "on_time": nb(on_time_val, on_time_known),
        "too_early": nb(too_early, timing_known),
        "too_late": nb(too_late, timing_known),
        "no_action": no_action,
        "outcome": pd.array(outcome, dtype="str"),
    }, index=steps.index)


def _per_episode_sum(values: np.ndarray, ep_index: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(ep_index, weights=values.astype(float), minlength=n).astype(np.int64)


def _failure_types(episodes: pd.DataFrame, steps: pd.DataFrame, ep_index: np.ndarray) -> np.ndarray:
    """Observed failure type of each episode from its decisions' labels.

    ``none`` for a success; a failure under ``paused`` is ``capability`` by definition; otherwise
    ``capability`` (some content wrong, every decision's timing known and none missed), ``timing``
    (no content wrong, every action labelled, some window missed or no action), ``both``, or
    ``unknown`` when the fields cannot decide.
    """
    n = len(episodes)
    oc = steps["outcome"].to_numpy(dtype=object)
    wrong = _per_episode_sum(oc == "wrong", ep_index, n) > 0
    missed = _per_episode_sum(np.isin(oc, ("late", "early", "silent")), ep_index, n) > 0
    unknown_steps = _per_episode_sum(oc == "unknown", ep_index, n) > 0
    corr_na = np.asarray(steps["correct_at_obs"].isna()) & ~steps["no_action"].to_numpy(bool)
    unlabelled = _per_episode_sum(corr_na, ep_index, n) > 0
    timing_na = np.asarray(steps["on_time"].isna())
    timing_unknown = _per_episode_sum(timing_na, ep_index, n) > 0
    success = episodes["success"].to_numpy(bool)
    paused = episodes["clock"].to_numpy() == "paused"
    out = np.full(n, "unknown", dtype=object)
    out[wrong & missed] = "both"
    out[wrong & ~missed & ~timing_unknown] = "capability"
    out[~wrong & missed & ~unlabelled] = "timing"
    del unknown_steps
    out[paused] = "capability"
    out[success] = "none"
    return out


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


def _iter_lines(path: Path, sink: EpisodeSink, display: str) -> Iterator[tuple[int, bytes]]:
    """Yield (line number, bytes) of non-blank lines; file damage becomes a quarantine row."""
    lineno = 0
    try:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rb") as fh:
            while True:
                try:
                    raw = fh.readline()
                except (EOFError, OSError, zlib.error) as e:
                    sink.reject(display, lineno + 1, "<file>",
                                f"file damaged after line {lineno} ({type(e).__name__}: {e}); lines before it are kept", "")
                    return
                if not raw:
                    return
                lineno += 1
                if not raw.endswith(b"\n") and path.name.endswith(".gz"):
                    # a gzip member that ends mid-line without error is still a complete stream
                    pass
                if raw.strip():
                    yield lineno, raw
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
    total = sum(f.stat().st_size for f in files if f.exists())
    bar = None
    if progress or (progress is None and total >= PROGRESS_MIN_BYTES):
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit="B", unit_scale=True, desc="loading", leave=False)
    for f in files:
        display = str(f)
        sink.open_file(display)
        for lineno, raw in _iter_lines(f, sink, display):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                sink.reject(display, lineno, "<record>", f"line is not valid UTF-8 ({e.reason} at byte {e.start})", raw)
                continue
            sink.add_raw(text, display, lineno)
        if bar is not None:
            bar.update(f.stat().st_size)
    if bar is not None:
        bar.close()
    return sink.finish()


def json_schema() -> dict:
    """The JSON Schema of an rtlog v1 record, as shipped in the package (for harness authors)."""
    from importlib.resources import files

    return orjson.loads(files("rtanalysis").joinpath("rtlog-v1.schema.json").read_bytes())
