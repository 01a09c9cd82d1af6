"""Any table (a DataFrame, CSV or Parquet file) plus a column mapping → rtlog episodes.

``mapping`` maps rtlog fields to columns, e.g. ``{"episode_id": "trial", "model": "llm",
"success": "solved", "latency": "rt_s"}``. Two shapes:

* **episode rows** (no step field mapped): one row = one episode;
* **step rows** (any of :data:`~rtanalysis.adapters.table.STEP_FIELDS` mapped): one row = one decision,
  grouped into episodes by ``(run_id, episode_id)`` in order of first appearance and sorted by ``t_obs``;
  episode fields must not vary within an episode.

``conditions`` (and ``meta``) in ``mapping`` are a list of columns, or ``{key: column}``. Fields the
table lacks can be given as ``constants`` (``{"clock": "wall", "model": "m1"}``). When ``success`` is
neither mapped nor constant, ``success_rule`` (a threshold on ``score`` or a function of it) derives
it; without one, that is an error. ``run_id`` defaults to the file's stem (``"table"`` for a
DataFrame); episode rows without an ``episode_id`` column are numbered by row (1-based).
Quarantine ``line``: the 1-based row number, + 1 for CSV files (their line when no field spans lines).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..io import EpisodeSink, RecordError
from ._common import SuccessRule, is_missing, make_success_rule, to_bool, to_float, to_int, to_str

EPISODE_FIELDS = {"run_id": to_str, "episode_id": to_str, "model": to_str, "task": to_str, "task_type": to_str,
                  "clock": to_str, "time_unit": to_str, "seed": to_int, "success": to_bool, "score": to_float}
#: the step fields a column can be mapped to, with their converters
STEP_FIELDS = {"t_obs": to_float, "t_act": to_float, "latency": to_float, "window_open": to_float,
               "window_close": to_float, "action": to_str, "correct_at_obs": to_bool, "valid_at_exec": to_bool,
               "fallback": to_bool, "tokens": to_int, "reward": to_float}
GROUP_FIELDS = ("conditions", "meta")


def read_any_table(source) -> tuple[pd.DataFrame, str, int]:
    """(frame, display name, line offset) of a DataFrame, CSV or Parquet file."""
    if isinstance(source, pd.DataFrame):
        return source.reset_index(drop=True), "<DataFrame>", 1
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"no such file or directory: {path}")
    if path.suffix == ".parquet":
        return pd.read_parquet(path), str(path), 1
    if path.suffix in (".csv", ".tsv", ".txt") or path.name.endswith(".csv.gz"):
        sep = "\t" if path.suffix == ".tsv" else ","
        return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False), str(path), 2
    raise ValueError(f"{path}: a table must be a DataFrame, .csv, .tsv or .parquet file")


def check_mapping(mapping: dict, columns, constants: dict) -> None:
    """Every key an rtlog field, every mapped column present; raise ``ValueError`` otherwise."""
    if not isinstance(mapping, dict) or not mapping:
        raise ValueError("the table adapter needs mapping={rtlog field: column}, e.g. {'success': 'solved'}")
    known = set(EPISODE_FIELDS) | set(STEP_FIELDS) | set(GROUP_FIELDS)
    for key in list(mapping) + list(constants):
        if key not in known:
            raise ValueError(f"mapping/constants key {key!r} is not an rtlog field; known: {', '.join(sorted(known))}")
    cols = set(columns)
    for key, col in mapping.items():
        wanted = list(col.values()) if isinstance(col, dict) else list(col) if key in GROUP_FIELDS else [col]
        for c in wanted:
            if c not in cols:
                raise ValueError(f"mapping[{key!r}] names column {c!r}, which the table lacks; columns: "
                                 f"{', '.join(map(str, columns))}")


def read_tables(paths, sink: EpisodeSink, mapping: dict | None = None, constants: dict | None = None,
                success_rule: SuccessRule | None = None, run_id: str | None = None) -> None:
    """Read tables (DataFrames or CSV/Parquet paths) into ``sink`` through ``mapping``."""
    constants = dict(constants or {})
    for source in paths:
        frame, display, offset = read_any_table(source)
        check_mapping(mapping, frame.columns, constants)
        if "success" not in mapping and "success" not in constants:
            if success_rule is None or "score" not in mapping:
                raise ValueError(f"{display}: no 'success' column mapped or constant; map one, or map 'score' and "
                                 "pass success_rule (a threshold or a function of the score)")
        rule = make_success_rule(success_rule) if success_rule is not None else None
        rid = run_id or constants.get("run_id") or (Path(display).name.split(".")[0] if display != "<DataFrame>" else "table")
        sink.open_file(display)
        step_level = any(k in STEP_FIELDS for k in mapping)
        records = _step_records if step_level else _episode_records
        for line, rec, raw in records(frame, mapping, constants, rid, offset):
            if isinstance(rec, RecordError):
                sink.reject(display, line, rec.field, rec.reason, raw)
                continue
            if rule is not None and "success" not in rec and rec.get("score") is not None:
                rec["success"] = rule(rec["score"])
            sink.add(rec, display, line, None)


def _columns(frame: pd.DataFrame, mapping: dict) -> dict:
    wanted = set()
    for key, col in mapping.items():
        wanted.update(col.values() if isinstance(col, dict) else col if key in GROUP_FIELDS else [col])
    return {c: frame[c].tolist() for c in wanted}


def _episode_fields(cols, mapping, constants, i: int, rid: str, row_no: int) -> dict:
    rec = {"schema": "rtlog/1", "run_id": rid}
    if "episode_id" not in mapping and "episode_id" not in constants:
        rec["episode_id"] = str(row_no)
    rec.update({k: v for k, v in constants.items() if k in EPISODE_FIELDS})
    for field, conv in EPISODE_FIELDS.items():
        if field in mapping:
            v = conv(cols[mapping[field]][i], field)
            if v is not None:
                rec[field] = v
    for group in GROUP_FIELDS:
        spec = mapping.get(group)
        if spec:
            pairs = spec.items() if isinstance(spec, dict) else ((c, c) for c in spec)
            values = {}
            for key, col in pairs:
                v = cols[col][i]
                if is_missing(v):
                    continue
                if group == "conditions":
                    try:
                        v = to_float(v, f"conditions.{key}")
                        v = int(v) if v == int(v) else v
                    except RecordError:
                        v = str(v)
                values[key] = v if group == "conditions" else (v if isinstance(v, (int, float, bool, str)) else str(v))
            rec[group] = {**constants.get(group, {}), **values}
        elif group in constants:
            rec[group] = dict(constants[group])
    return rec


def _raw(cols: dict, i: int) -> dict:
    return {c: (None if is_missing(v) else v) for c, v in ((c, vals[i]) for c, vals in cols.items())}


def _episode_records(frame, mapping, constants, rid, offset):
    cols = _columns(frame, mapping)
    for i in range(len(frame)):
        line = i + offset
        try:
            yield line, _episode_fields(cols, mapping, constants, i, rid, i + 1), None
        except RecordError as e:
            yield line, e, _raw(cols, i)


def _step(cols, mapping, i: int) -> dict:
    step = {}
    for field, conv in STEP_FIELDS.items():
        if field in mapping:
            v = conv(cols[mapping[field]][i], f"steps.{field}")
            if v is not None:
                step[field] = v
    lo, hi = step.pop("window_open", None), step.pop("window_close", None)
    if hi is not None:
        step["window"] = [lo if lo is not None else 0.0, hi]
    elif lo is not None:
        raise RecordError("steps.window_close", "window_open is given without window_close")
    return step


def _step_records(frame, mapping, constants, rid, offset):
    if "episode_id" not in mapping:
        raise ValueError("step-level rows need mapping['episode_id'] (the column grouping rows into episodes)")
    if "t_obs" not in mapping:
        raise ValueError("step-level rows need mapping['t_obs']")
    cols = _columns(frame, mapping)
    run_col = cols.get(mapping.get("run_id"))
    ep_col = cols[mapping["episode_id"]]
    groups: dict[tuple, list[int]] = {}
    for i in range(len(frame)):
        key = (str(run_col[i]) if run_col is not None else rid, str(ep_col[i]))
        groups.setdefault(key, []).append(i)
    ep_fields = [f for f in EPISODE_FIELDS if f in mapping] + [g for g in GROUP_FIELDS if g in mapping]
    for rows in groups.values():
        first = rows[0]
        line = first + offset
        try:
            rec = _episode_fields(cols, mapping, constants, first, rid, first + 1)
            for i in rows[1:]:
                other = _episode_fields(cols, mapping, constants, i, rid, i + 1)
                for f in ep_fields:
                    if other.get(f) != rec.get(f):
                        raise RecordError(f, f"varies within episode {rec.get('episode_id')!r}: {rec.get(f)!r} on line "
                                             f"{line}, {other.get(f)!r} on line {i + offset}")
            steps = []
            for i in rows:
                try:
                    steps.append((_step(cols, mapping, i), i))
                except RecordError as e:
                    raise RecordError(e.field, f"line {i + offset}: {e.reason}") from None
            steps.sort(key=lambda s: (s[0].get("t_obs", float("inf")), s[1]))
            rec["steps"] = [s for s, _ in steps]
        except RecordError as e:
            yield line, e, _raw(cols, first)
            continue
        yield line, rec, None


def from_table(source, mapping: dict, constants: dict | None = None, success_rule: SuccessRule | None = None,
               run_id: str | None = None):
    """Load one table (DataFrame, CSV or Parquet path) through ``mapping``; returns a LoadResult."""
    sink = EpisodeSink()
    read_tables([source], sink, mapping=mapping, constants=constants, success_rule=success_rule, run_id=run_id)
    return sink.finish()


__all__ = ["from_table", "read_tables", "EPISODE_FIELDS", "STEP_FIELDS"]
