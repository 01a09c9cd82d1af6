"""rtlog v1 records from simulated arrays, and byte-reproducible files."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import orjson

from .. import schema
from .design import Design

#: decimals of logged times in seconds (the latency quantum is 1e-4 s)
_DECIMALS = {"s": 4, "tokens": 0}


def _times(x_q: np.ndarray, q: np.ndarray, tokens: np.ndarray) -> list:
    """Quanta to logged numbers: ints in tokens, floats rounded to the grid in seconds."""
    out = np.round(x_q * q, 4).tolist()
    if tokens.any():
        ints = x_q.tolist()
        out = [i if t else f for f, i, t in zip(out, ints, tokens.tolist())]
    return out


def build_records(design: Design, arrays: dict, run_id: str) -> list[dict]:
    """One rtlog v1 episode dict per simulated episode, with a fixed key order."""
    ep, dec = arrays["episodes"], arrays["decisions"]
    unit_k = np.array([t.time_unit == "tokens" for t in design.task_types])
    tok = unit_k[dec["k"]]
    q = dec["q"]
    t_obs = _times(dec["t_obs_q"], q, tok)
    lat = _times(dec["lat_q"], q, tok)
    t_act = _times(dec["t_obs_q"] + dec["lat_q"], q, tok)
    w_open = _times(dec["open_q"], q, tok)
    w_close = _times(dec["close_q"], q, tok)
    silent = dec["silent"].tolist()
    correct = dec["correct"].tolist()
    valid = (~(dec["early"] | dec["late"])).tolist()
    fallback = dec["fallback"].tolist()
    tokens = tok.tolist()
    labelled = design.labelled

    steps = []
    for i in range(len(silent)):
        if silent[i]:
            s = {"t_obs": t_obs[i], "t_act": None, "window": [w_open[i], w_close[i]]}
        else:
            s = {"t_obs": t_obs[i], "t_act": t_act[i], "latency": lat[i], "window": [w_open[i], w_close[i]]}
            if tokens[i]:
                s["tokens"] = lat[i]
            if fallback[i]:
                s["action"] = "default"
            if labelled:
                s["correct_at_obs"] = correct[i]
                s["valid_at_exec"] = valid[i]
            if fallback[i]:
                s["fallback"] = True
        steps.append(s)

    names = [m.name for m in design.models]
    tts = design.task_types
    starts, ns = ep["start"].tolist(), ep["n_steps"].tolist()
    success = ep["success"].tolist()
    ended = ep["ended"].tolist() if "ended" in ep else None
    records = []
    for e, (mi, ki, ci, ti, si) in enumerate(zip(ep["model"].tolist(), ep["k"].tolist(), ep["clock"].tolist(),
                                                 ep["task"].tolist(), ep["seed"].tolist())):
        clock, tt = schema.CLOCKS[ci], tts[ki]
        task = f"{tt.name}-{ti:02d}"
        records.append({
            "schema": "rtlog/1",
            "run_id": run_id,
            "episode_id": f"{clock}/{names[mi]}/{task}/s{si}",
            "model": names[mi],
            "task": task,
            "task_type": tt.name,
            "clock": clock,
            "time_unit": tt.time_unit,
            "seed": si,
            "success": success[e],
            **({"ended": ended[e]} if ended is not None else {}),
            "steps": steps[starts[e]:starts[e] + ns[e]],
        })
    return records


def write_jsonl_gz(records: list[dict], path: Path) -> Path:
    """Gzip JSON Lines with a fixed header (mtime 0, fixed inner name): same records, same bytes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    inner = path.name[:-3] if path.name.endswith(".gz") else path.name
    with open(path, "wb") as raw, gzip.GzipFile(filename=inner, mode="wb", fileobj=raw, mtime=0, compresslevel=6) as gz:
        for rec in records:
            gz.write(orjson.dumps(rec))
            gz.write(b"\n")
    return path
