"""inspect-ai evaluation logs → rtlog episodes (optional extra: ``pip install rtanalysis[inspect]``).

Samples are read through ``inspect_ai.analysis.samples_df``; one sample (per epoch) = one episode:
``run_id`` = the eval's id, ``episode_id`` = ``<sample id>#<epoch>``, ``model`` from the eval,
``task_type`` = task name, ``task`` = ``<task>/<sample id>``, seconds. Clock ``wall`` when the eval
set a time or working limit; with neither, nothing could be late, so the clock is ``paused``
(timing cannot fail and a failed sample is a capability failure).

Each episode gets one decision at ``t_obs = 0``: latency = ``working_time`` (``total_time`` is kept
in ``meta``), window ``[0, time_limit]`` where the eval set a time limit. A sample stopped by a
``time`` or ``working`` limit gave no answer in time: the decision is **no action** (silent), a
timing failure. Otherwise ``correct_at_obs`` = ``success`` and, under a limit, ``valid_at_exec`` =
true: the sample finished inside its limits as inspect judged them, so a wrong answer is a content
(capability) failure. A ``working_limit`` gives no window: inspect checks it only when the sample
calls the model or a tool, so a sample that finished can show a ``working_time`` above the limit
(seen in real logs); inspect's verdict is the timing truth there. Samples stopped by other limits
(tokens, messages, cost) keep their latency; the limit is in ``meta.limit``.

``success`` comes from the score column ``score_<scorer>``: inspect's ``C``/``I`` (and 1/0,
true/false) directly; any other value (partial credit, numbers) needs ``success_rule`` (a threshold
or a function of the numeric value; ``P`` counts 0.5, ``N`` 0). A sample that errored has no
verdict and is quarantined with its error.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..io import EpisodeSink, RecordError
from ._common import SuccessRule, is_missing, make_success_rule, to_float

TIMING_LIMITS = ("time", "working")
LETTER_VALUES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
BINARY = {"C": True, "I": False, "1": True, "0": False, "1.0": True, "0.0": False, "true": True, "false": False}


def _require_inspect():
    try:
        from inspect_ai.analysis import EvalConfiguration, EvalInfo, EvalModel, EvalTask, SampleSummary, samples_df
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("reading inspect-ai logs needs the optional extra: pip install 'rtanalysis[inspect]' "
                          f"({e})") from None
    return samples_df, SampleSummary + EvalInfo + EvalModel + EvalTask + EvalConfiguration


def _log_files(paths) -> list[str]:
    out = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(str(q) for q in sorted(p.rglob("*")) if q.is_file() and looks_like_inspect_log(q))
        elif p.exists():
            out.append(str(p))
        else:
            raise FileNotFoundError(f"no such file or directory: {p}")
    return out


def read_inspect_logs(paths, sink: EpisodeSink, success_rule: SuccessRule | None = None,
                      scorer: str | None = None) -> None:
    """Read inspect-ai logs (``.eval``/``.json`` files or log directories) into ``sink``.

    ``scorer``: which ``score_<scorer>`` column decides success when a log has several.
    ``success_rule``: for non-binary scores (threshold on the numeric value, or a function of it).
    """
    samples_df, columns = _require_inspect()
    files = _log_files(paths)
    for f in files:
        sink.open_file(f)
    if not files:
        return
    df = _samples(samples_df, columns, files, sink)
    if df is None:
        return
    rule = make_success_rule(success_rule) if success_rule is not None else None
    score_cols = [c for c in df.columns if c.startswith("score_")]
    if scorer is not None and f"score_{scorer}" not in score_cols:
        raise ValueError(f"no scorer {scorer!r} in the logs; scorers: {', '.join(c[6:] for c in score_cols) or 'none'}")
    rows = df.to_dict("records")
    position: dict[str, int] = {}
    for row in rows:
        log = str(row["log"])
        line = position[log] = position.get(log, 0) + 1
        display = _display(log, files)
        try:
            rec = _episode(row, _score_column(row, score_cols, scorer), rule)
        except RecordError as e:
            sink.reject(display, line, e.field, e.reason, {k: row.get(k) for k in ("eval_id", "id", "epoch")})
            continue
        sink.add(rec, display, line)


def _samples(samples_df, columns, files: list[str], sink: EpisodeSink):
    """All files' samples; when that fails, file by file, quarantining the files that cannot be read."""
    try:
        return samples_df(files, columns=columns, strict=True, quiet=True)
    except Exception:  # noqa: BLE001 - inspect raises many kinds for a damaged log; find which file
        pass
    import pandas as pd

    good = []
    for f in files:
        try:
            good.append(samples_df([f], columns=columns, strict=True, quiet=True))
        except Exception as e:  # noqa: BLE001
            sink.reject(f, 0, "<file>", f"not a readable inspect-ai log ({type(e).__name__}: "
                                        f"{str(e).strip().splitlines()[0][:200] if str(e).strip() else ''})", "")
    return pd.concat(good, ignore_index=True) if good else None


def _score_column(row: dict, score_cols: list[str], scorer: str | None) -> str:
    """The score column that decides this sample: ``scorer``'s, else the only one it has."""
    if scorer is not None:
        return f"score_{scorer}"
    present = [c for c in score_cols if not is_missing(row.get(c))]
    if len(present) > 1:
        raise RecordError("score", f"the sample has several scores ({', '.join(c[6:] for c in present)}); "
                                   "pass scorer='NAME' (CLI: --scorer NAME)")
    return present[0] if present else "score"


def _display(log: str, files: list[str]) -> str:
    for f in files:
        if Path(f).resolve() == Path(log.removeprefix("file://")).resolve():
            return f
    return log


def _success(value, col: str, rule) -> tuple[bool, float | None]:
    text = str(value).strip()
    numeric = LETTER_VALUES.get(text)
    if numeric is None:
        try:
            numeric = float(text)
        except ValueError:
            raise RecordError(col, f"score {text[:40]!r} is neither C/I/P/N nor a number") from None
    if rule is not None:
        return rule(numeric), numeric
    if text in BINARY or text.lower() in BINARY:
        return BINARY.get(text, BINARY.get(text.lower())), numeric
    raise RecordError(col, f"non-binary score {text!r}: pass success_rule (a threshold or a function of the value)")


def _limit(row, key: str) -> float | None:
    v = row.get(key)
    if not is_missing(v):
        x = float(v)
        if math.isfinite(x) and x > 0:
            return x
    return None


def _episode(row: dict, col: str, rule) -> dict:
    if not is_missing(row.get("error")):
        raise RecordError("error", f"the sample errored: {str(row['error'])[:200]}")
    value = row.get(col)
    if is_missing(value):
        raise RecordError(col, "the sample has no score")
    success, numeric = _success(value, col, rule)
    working = to_float(row.get("working_time"), "working_time")
    limit = None if is_missing(row.get("limit")) else str(row["limit"])
    step = {"t_obs": 0.0}
    # time_limit is hard (a cancel scope): it is the window. working_limit is checked only when the
    # sample yields to inspect (model and tool calls), so a finished sample's working_time can pass
    # it: no window then, and inspect's own verdict (not stopped = in time) is valid_at_exec.
    window = _limit(row, "time_limit")
    timed = window is not None or _limit(row, "working_limit") is not None
    if window is not None:
        step["window"] = [0.0, window]
    if limit in TIMING_LIMITS:
        step["t_act"] = None
        step["no_action_cause"] = "timeout"  # inspect stopped it at its time or working limit
    elif working is not None:
        step["latency"] = working
        step["correct_at_obs"] = bool(success)
        if timed:
            step["valid_at_exec"] = True
    else:
        raise RecordError("working_time", "missing: the sample's latency is unknown")
    task = str(row["task_name"])
    sample = str(row["id"])
    return {
        "schema": "rtlog/1",
        "run_id": str(row["eval_id"]),
        "episode_id": f"{sample}#{int(row['epoch'])}",
        "model": str(row["model"]),
        "task": f"{task}/{sample}",
        "task_type": task,
        "clock": "wall" if timed else "paused",
        "time_unit": "s",
        "success": bool(success),
        "score": numeric,
        "steps": [step],
        "meta": {"source": "inspect", "limit": limit, "limit_reason": None if is_missing(row.get("limit_reason"))
                 else str(row["limit_reason"]), "total_time": to_float(row.get("total_time"), "total_time"),
                 "working_time": working, "working_limit": _limit(row, "working_limit"),
                 "time_limit": window, "total_tokens": None if is_missing(row.get("total_tokens"))
                 else int(row["total_tokens"]), "log": str(row["log"])},
    }


def looks_like_inspect_log(path: Path) -> bool:
    """An ``.eval`` file, a directory holding some, or a JSON log that opens with inspect's header."""
    if path.is_dir():
        return next(path.rglob("*.eval"), None) is not None
    if path.suffix == ".eval":
        return True
    if path.suffix == ".json" and path.is_file():
        with open(path, "rb") as fh:
            head = fh.read(4096)
        return head.lstrip().startswith(b"{") and b'"eval"' in head and b'"version"' in head
    return False


__all__ = ["read_inspect_logs", "looks_like_inspect_log"]
