"""Response-slot tables of streaming-assistant benchmarks → rtlog episodes, and the slot F1.

One row per (model, slot): ``model, stream_id, slot_id, scenario, trigger_s, window_start_s,
window_end_s, response_s`` (empty = no response), ``correct``, ``invalid``, optional ``score``.

Mapping (docs/user-guide/adapters.md, "Response-slot tables"): one **stream** of one model is an episode
(``run_id`` = file stem, ``episode_id`` = ``<model>/<stream_id>``, ``task`` = stream_id, ``task_type`` = the
stream's scenario, several joined by ``+``, clock ``wall``, seconds); one **slot** is a decision with
``t_obs = trigger_s``, window ``[window_start_s, window_end_s] - trigger_s``, latency
``response_s - trigger_s``, ``correct_at_obs = correct and not invalid`` (an invalid output is wrong content)
and ``action`` = ``"response"`` or ``"invalid"``. ``success``: every slot a hit (default) or the caller's
rule; ``score``: mean judge ``score`` when the column is complete, else the stream's hit fraction.

:func:`slot_f1` scores slots directly: hit = correct, valid response inside its window.
"""

from __future__ import annotations


from pathlib import Path
from typing import Callable

import numpy as np
import orjson
import pandas as pd

from ..io import EpisodeSink, RecordError
from ._common import is_missing, peek_json_line, to_bool, to_float, to_str

REQUIRED = ("model", "stream_id", "slot_id", "scenario", "trigger_s", "window_start_s", "window_end_s",
            "response_s", "correct", "invalid")
OPTIONAL = ("score",)
#: slot outcomes, in the order they take precedence: no response; invalid output; outside the
#: window; wrong content; else a hit
SLOT_OUTCOMES = ("silent", "invalid", "early", "late", "wrong", "hit")
StreamRule = float | Callable[[pd.DataFrame], bool] | None


# --------------------------------------------------------------------------------------------
# reading


def read_table_rows(path: Path, sink: EpisodeSink | None = None) -> pd.DataFrame:
    """Rows of a CSV or JSONL slot table as text/Python values, with a ``_line`` column (file line).

    A JSONL line that is not a JSON object is quarantined in ``sink`` (or raises without one).
    """
    if path.name.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
        import gzip

        rows, lines = [], []
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    rec = orjson.loads(raw)
                    if type(rec) is not dict:
                        raise ValueError("a row must be a JSON object")
                except (orjson.JSONDecodeError, ValueError) as e:
                    if sink is None:
                        raise ValueError(f"{path}:{lineno}: {e}") from None
                    sink.reject(str(path), lineno, "<record>", f"not a JSON object: {e}", raw)
                    continue
                rows.append(rec)
                lines.append(lineno)
        frame = pd.DataFrame(rows, dtype=object) if rows else pd.DataFrame(columns=list(REQUIRED))
        frame["_line"] = lines
        return frame
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame["_line"] = np.arange(len(frame)) + 2  # the header is line 1
    return frame


def read_slot_tables(paths, sink: EpisodeSink, success_rule: StreamRule = None, run_id: str | None = None) -> None:
    """Read response-slot tables (CSV/JSONL) into ``sink``: one episode per (model, stream).

    ``success_rule``: None = every slot a hit; a number = hit fraction >= it; or a function of the
    stream's rows (with an added ``slot_outcome`` column) returning a bool. ``run_id``: defaults to
    the file's stem.
    """
    for path in _files(paths):
        display = str(path)
        sink.open_file(display)
        try:
            frame = read_table_rows(path, sink)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError) as e:
            sink.reject(display, 0, "<file>", f"not a readable table: {str(e).strip().splitlines()[0][:200]}", "")
            continue
        missing = [c for c in REQUIRED if c not in frame.columns]
        if missing:
            for line in frame["_line"].tolist() or [0]:
                sink.reject(display, line, missing[0], f"table lacks column(s) {', '.join(missing)}", "")
            continue
        _add_streams(frame, sink, display, run_id or _stem(path), success_rule)


def _files(paths) -> list[Path]:
    out = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*") if q.is_file() and looks_like_slot_table(q)))
        elif p.exists():
            out.append(p)
        else:
            raise FileNotFoundError(f"no such file or directory: {p}")
    return out


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".jsonl.gz", ".jsonl", ".ndjson", ".csv"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _add_streams(frame: pd.DataFrame, sink: EpisodeSink, display: str, run_id: str, rule: StreamRule) -> None:
    model = frame["model"].tolist()
    stream = frame["stream_id"].tolist()
    keys = []
    for i in range(len(frame)):
        if is_missing(model[i]) or is_missing(stream[i]):
            field = "model" if is_missing(model[i]) else "stream_id"
            sink.reject(display, int(frame["_line"].iat[i]), field, "required value is missing: the row belongs to no stream",
                        _raw(frame, i))
            keys.append(None)
        else:
            keys.append((to_str(model[i], "model"), to_str(stream[i], "stream_id")))
    groups: dict[tuple, list[int]] = {}
    for i, k in enumerate(keys):
        if k is not None:
            groups.setdefault(k, []).append(i)
    for (m, s), rows in groups.items():
        first_line = int(frame["_line"].iat[rows[0]])
        try:
            rec = _stream_episode(frame.iloc[rows], run_id, m, s, rule)
        except RecordError as e:
            sink.reject(display, getattr(e, "line", first_line), e.field, e.reason, _raw(frame, rows[0]))
            continue
        sink.add(rec, display, first_line)


def _raw(frame: pd.DataFrame, i: int) -> str:
    row = {k: v for k, v in frame.iloc[i].to_dict().items() if k != "_line"}
    return orjson.dumps(row, default=str).decode()


class _SlotError(RecordError):
    def __init__(self, line: int, field: str, reason: str):
        super().__init__(field, reason)
        self.line = line


def parse_slots(rows: pd.DataFrame) -> pd.DataFrame:
    """Typed slot rows (floats, booleans) plus ``slot_outcome``; a bad value raises naming its line."""
    out = []
    for rec in rows.to_dict("records"):
        line = int(rec.get("_line", 0))
        try:
            trig = to_float(rec["trigger_s"], "trigger_s", required=True)
            ws = to_float(rec["window_start_s"], "window_start_s", required=True)
            we = to_float(rec["window_end_s"], "window_end_s", required=True)
            resp = to_float(rec["response_s"], "response_s")
            invalid = to_bool(rec["invalid"], "invalid") if resp is not None else False
            correct = to_bool(rec["correct"], "correct", required=resp is not None and not invalid)
            score = to_float(rec.get("score"), "score") if "score" in rec else None
            slot = to_str(rec["slot_id"], "slot_id", required=True)
        except RecordError as e:
            raise _SlotError(line, e.field, f"line {line}: {e.reason}") from None
        if trig < 0:
            raise _SlotError(line, "trigger_s", f"line {line}: must be >= 0, got {trig}")
        if not trig <= ws <= we:
            raise _SlotError(line, "window_start_s", f"line {line}: need trigger_s <= window_start_s <= window_end_s, "
                                                     f"got {trig}, {ws}, {we}")
        if resp is not None and resp < trig:
            raise _SlotError(line, "response_s", f"line {line}: the response ({resp}) comes before its trigger ({trig})")
        out.append({"slot_id": slot, "scenario": to_str(rec["scenario"], "scenario") or "", "trigger_s": trig,
                    "window_start_s": ws, "window_end_s": we, "response_s": resp, "correct": correct,
                    "invalid": invalid, "score": score, "_line": line,
                    "slot_outcome": _outcome(trig, ws, we, resp, correct, invalid)})
    return pd.DataFrame(out)


def _outcome(trig, ws, we, resp, correct, invalid) -> str:
    if resp is None:
        return "silent"
    if invalid:
        return "invalid"
    if resp < ws:
        return "early"
    if resp > we:
        return "late"
    return "hit" if correct else "wrong"


def _stream_episode(rows: pd.DataFrame, run_id: str, model: str, stream: str, rule: StreamRule) -> dict:
    slots = parse_slots(rows).sort_values(["trigger_s", "_line"], kind="stable")
    dup = slots["slot_id"].duplicated()
    if dup.any():
        line = int(slots["_line"][dup].iloc[0])
        raise _SlotError(line, "slot_id", f"line {line}: slot {slots['slot_id'][dup].iloc[0]!r} repeats in stream "
                                          f"{stream!r} of model {model!r}")
    steps = []
    for s in slots.to_dict("records"):
        trig = s["trigger_s"]
        step = {"t_obs": trig, "window": [s["window_start_s"] - trig, s["window_end_s"] - trig]}
        if s["response_s"] is None:
            step["t_act"] = None
        else:
            step["t_act"] = s["response_s"]
            step["action"] = "invalid" if s["invalid"] else "response"
            step["correct_at_obs"] = bool(s["correct"]) and not s["invalid"]
        steps.append(step)
    hits = slots["slot_outcome"].eq("hit").to_numpy()
    scores = slots["score"]
    score = float(scores.mean()) if scores.notna().all() else float(hits.mean())
    scenarios = sorted(set(slots["scenario"]) - {""})
    return {
        "schema": "rtlog/1",
        "run_id": run_id,
        "episode_id": f"{model}/{stream}",
        "model": model,
        "task": stream,
        "task_type": "+".join(scenarios) or "unknown",
        "clock": "wall",
        "time_unit": "s",
        "success": _stream_success(rule, slots, hits),
        "score": score,
        "steps": steps,
        "meta": {"source": "response-slots", "slot_ids": slots["slot_id"].tolist()},
    }


def _stream_success(rule: StreamRule, slots: pd.DataFrame, hits: np.ndarray) -> bool:
    if rule is None:
        return bool(hits.all())
    if callable(rule):
        return bool(rule(slots.drop(columns="_line")))
    return bool(hits.mean() >= float(rule))


# --------------------------------------------------------------------------------------------
# detection


def looks_like_slot_table(path: Path) -> bool:
    """A CSV whose header, or a JSONL whose first row, has every response-slot column."""
    if not path.is_file():
        return False
    if path.suffix == ".csv":
        try:
            cols = pd.read_csv(path, nrows=0).columns
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError):
            return False
        return set(REQUIRED) <= set(cols)
    if path.name.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
        rec = peek_json_line(path)
        return isinstance(rec, dict) and set(REQUIRED) <= set(rec)
    return False


# --------------------------------------------------------------------------------------------
# quality–timeliness F1


def classify_slots(table) -> pd.DataFrame:
    """The slot table (DataFrame or CSV/JSONL path) typed, one row per slot, with ``slot_outcome``.

    Raises ``ValueError`` naming the line and column of a value that cannot be read.
    """
    frame = read_table_rows(Path(table)) if not isinstance(table, pd.DataFrame) else table.copy()
    if "_line" not in frame.columns:
        frame["_line"] = np.arange(len(frame)) + 1
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise ValueError(f"slot table lacks column(s): {', '.join(missing)}")
    try:
        typed = parse_slots(frame)
    except RecordError as e:
        raise ValueError(f"slot table, {e.field}: {e.reason}") from None
    for col in ("model", "stream_id"):
        typed[col] = [to_str(v, col) for v in frame[col].tolist()]
    return typed.drop(columns="_line")


def slot_f1(table, by=("model",), macro_over: str | None = None, n_boot: int = 2000, seed: int = 0,
            ci: float = 0.95) -> pd.DataFrame:
    """Quality–timeliness precision, recall and F1 over response slots, one row per ``by`` group.

    A **hit** is a correct, valid response inside its window. Precision = hits / responses given;
    recall = hits / slots; F1 = 2·hits / (responses + slots) (= 2PR/(P+R), defined even with no
    response). Counts of ``silent``, ``invalid``, ``early``, ``late``, ``wrong`` and ``hit`` slots
    are reported apart (each slot gets the first that applies, in that order). Every slot weighs the
    same within a group; ``macro_over="scenario"`` instead averages P, R and F1 over that column's
    levels with equal weight. Intervals: percentile bootstrap over **streams** (the unit that shares
    a model's state), ``n_boot`` resamples with ``seed`` — same inputs and seed give the same table.
    """
    slots = classify_slots(table)
    by = [by] if isinstance(by, str) else list(by)
    rng = np.random.default_rng(seed)
    alpha = (1 - ci) / 2
    rows = []
    for key, g in slots.groupby(by, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        counts = g["slot_outcome"].value_counts().reindex(SLOT_OUTCOMES, fill_value=0)
        streams, s_idx = np.unique(g["stream_id"].to_numpy(dtype=str), return_inverse=True)
        levels, l_idx = (np.unique(g[macro_over].to_numpy(dtype=str), return_inverse=True) if macro_over
                         else (np.array(["all"]), np.zeros(len(g), dtype=int)))
        per = np.zeros((3, len(streams), len(levels)))  # hits, responses, slots
        np.add.at(per[0], (s_idx, l_idx), g["slot_outcome"].eq("hit").to_numpy(float))
        np.add.at(per[1], (s_idx, l_idx), g["response_s"].notna().to_numpy(float))
        np.add.at(per[2], (s_idx, l_idx), 1.0)
        point = _prf(per.sum(axis=1)[:, None, :])[:, 0]
        draws = rng.integers(0, len(streams), size=(n_boot, len(streams)))
        weights = np.zeros((n_boot, len(streams)))
        np.add.at(weights, (np.repeat(np.arange(n_boot), len(streams)), draws.ravel()), 1.0)
        boot = _prf(np.einsum("bs,csl->cbl", weights, per))
        row = dict(zip(by, key))
        row.update(n_streams=len(streams), n_slots=int(len(g)), n_responses=int(per[1].sum()),
                   **{k: int(v) for k, v in counts.items()})
        for j, name in enumerate(("precision", "recall", "f1")):
            row[name] = float(point[j])
            lo, hi = np.nanquantile(boot[j], [alpha, 1 - alpha]) if np.isfinite(boot[j]).any() else (np.nan, np.nan)
            row[f"{name}_lo"], row[f"{name}_hi"] = float(lo), float(hi)
        rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs.update(n_boot=n_boot, seed=seed, ci=ci, interval="percentile bootstrap over streams")
    return out


def _prf(sums: np.ndarray) -> np.ndarray:
    """(hits, responses, slots) summed per level, shape (3, B, L) → (P, R, F1) macro over L, shape (3, B)."""
    hits, resp, n = sums
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(resp > 0, hits / resp, np.nan)
        r = np.where(n > 0, hits / n, np.nan)
        f = np.where(resp + n > 0, 2 * hits / (resp + n), np.nan)
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.stack([np.nanmean(p, axis=-1), np.nanmean(r, axis=-1), np.nanmean(f, axis=-1)])


__all__ = ["read_slot_tables", "slot_f1", "classify_slots", "SLOT_OUTCOMES", "REQUIRED"]

