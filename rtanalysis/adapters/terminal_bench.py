"""Terminal-Bench and Harbor results → rtlog episodes (one episode per trial, one decision each).

Two layouts (docs/user-guide/adapters.md, "Terminal-Bench and Harbor results"):

* **terminal-bench** (0.2.x): a run directory ``<run_id>/`` holding ``results.json`` (the run's
  trials, ``BenchmarkResults``), ``run_metadata.json`` (model, dataset), ``tb.lock`` (the run's
  configuration) and one ``<task_id>/<trial_name>/results.json`` per trial (the same trial again);
  :func:`read_terminal_bench`;
* **harbor** (0.25): a job directory ``<job>/`` holding one ``<trial_name>/result.json`` per trial
  (``TrialResult``, which records its own configuration); the job's ``result.json`` holds only
  counts. :func:`read_harbor`.

Both become the same decision: ``t_obs`` 0, latency = agent end − agent start (seconds), window
``[0, time limit]``, clock ``wall``. What the harness recorded decides the rest (``_step``):

* tests passed (terminal-bench ``is_resolved``; harbor's reward under ``success_rule``) and an agent
  end time: the agent acted, ``correct_at_obs`` true. If the agent had timed out the action is
  right but late: ``valid_at_exec`` false and ``success`` false (the limit binds here, although
  the harness's own accuracy counts such a trial resolved; ``meta.is_resolved`` keeps its verdict);
* the agent timed out, tests not passed: no action (``no_action_cause: "timeout"``), a timing
  failure. Its end time is when the harness stopped waiting, not an answer, so it is not a latency
  (it is kept in ``meta.agent_stopped_s``); labelling the unfinished work ``wrong`` would call a
  cut-off agent a capability failure;
* an agent, provider or sandbox error, tests not passed: no action, ``no_action_cause: "error"``
  (``"other"`` for an unknown harness failure or a cancelled trial): neither a timing nor a
  capability verdict;
* the agent finished but the verdict is missing (terminal-bench ``parse_error`` / ``test_timeout``,
  harbor verifier failures): the action stays, unlabelled (no ``correct_at_obs``), ``success``
  false as the harness counts it;
* otherwise ``correct_at_obs`` = ``success`` = tests passed, ``valid_at_exec`` true (the harness did
  not stop the agent).

The results do not record the time limit except where the run overrode it; the lookup is
``_tb_limit`` / ``_harbor_limit``. A trial whose limit cannot be found is quarantined
naming the missing field (no default is guessed: tasks set their own limits).
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable, Mapping

import orjson

from ..io import EpisodeSink, RecordError
from ._common import SuccessRule, make_success_rule

#: terminal-bench's ``Task.max_agent_timeout_sec`` when a task.yaml leaves it out
TB_DEFAULT_AGENT_TIMEOUT_S = 360.0
#: terminal-bench ``FailureMode`` values, by what they say about the agent's decision
TB_NORMAL = {"unset", "none"}  # a trial that ran normally keeps "unset"
TB_TIMEOUT = {"agent_timeout"}
TB_ERROR = {"unknown_agent_error", "context_length_exceeded", "output_length_exceeded", "fatal_llm_parse_error",
            "agent_installation_failed"}
TB_NO_VERDICT = {"parse_error", "test_timeout"}  # the agent finished; its tests gave no verdict
#: harbor exception types (``exception_info.exception_type``), as harbor's error policy groups them
HARBOR_TIMEOUT = {"AgentTimeoutError"}
HARBOR_NO_VERDICT = {"VerifierTimeoutError", "RewardFileNotFoundError", "RewardFileEmptyError",
                     "VerifierOutputParseError"}
HARBOR_OTHER = {"CancelledError"}
#: the reward key harbor's verifiers write
HARBOR_REWARD = "reward"

TimeLimit = float | Mapping[str, float] | None
ModelOption = str | Callable[[Path], str] | None


@dataclass
class Trial:
    """One trial in harness-neutral terms; ``where`` prefixes field names in quarantine rows."""

    where: str
    run_id: str
    episode_id: str
    task: str
    kind: str  # "ok", "timeout", "error", "other", "no_verdict"
    resolved: bool | None
    start: datetime | None
    end: datetime | None
    start_field: str
    end_field: str
    tokens: int | None = None
    meta: dict = field(default_factory=dict)


@dataclass
class Limit:
    """A task's agent time limit (None: the harness enforced none) and where it was found."""

    seconds: float | None
    source: str
    category: str | None = None


# --------------------------------------------------------------------------------------------
# shared: timestamps, the decision, the episode


def parse_time(value, name: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise RecordError(name, f"must be an ISO 8601 timestamp, got {type(value).__name__}")
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise RecordError(name, f"not an ISO 8601 timestamp: {value[:40]!r}") from None


def seconds_between(start: datetime, end: datetime, end_field: str) -> float:
    try:
        s = (end - start).total_seconds()
    except TypeError:  # one timestamp has a time zone and the other not
        raise RecordError(end_field, "cannot be compared with the start time (time zone on one only)") from None
    if s < 0:
        raise RecordError(end_field, f"the agent ended {-s:.3f} s before it started")
    return s


def _step(t: Trial, limit: Limit) -> tuple[dict, bool]:
    """The trial's one decision and its success (the module docstring gives the rules)."""
    step: dict = {"t_obs": 0.0}
    if limit.seconds is not None:
        step["window"] = [0.0, limit.seconds]
    latency = seconds_between(t.start, t.end, t.end_field) if t.start and t.end else None
    if t.resolved and latency is not None:
        on_time = t.kind != "timeout"
        step.update(latency=latency, correct_at_obs=True, valid_at_exec=on_time)
        return step, on_time
    if t.kind in ("timeout", "error", "other"):
        step.update(t_act=None, no_action_cause=t.kind)
        if latency is not None:
            t.meta["agent_stopped_s"] = latency
        return step, False
    if latency is None:
        raise RecordError(t.end_field if t.start else t.start_field, "missing: the agent's run time is unknown")
    step["latency"] = latency
    if t.resolved is not None:  # no_verdict trials stay unlabelled
        step.update(correct_at_obs=t.resolved, valid_at_exec=True)
    return step, bool(t.resolved)


def _episode(t: Trial, limit: Limit, model: str, task_type: str, agent: str | None, source: str) -> dict:
    step, success = _step(t, limit)
    if t.tokens is not None:
        step["tokens"] = t.tokens
    meta = {"source": source, "time_limit": limit.seconds, "time_limit_source": limit.source, **t.meta}
    return {
        "schema": "rtlog/1",
        "run_id": t.run_id,
        "episode_id": t.episode_id,
        "model": model,
        "task": t.task,
        "task_type": task_type,
        # a harness that enforced no limit could not be late: nothing is timed (as inspect without limits)
        "clock": "wall" if limit.seconds is not None else "paused",
        "time_unit": "s",
        "conditions": {"agent": agent} if agent else None,
        "success": success,
        "steps": [step],
        "meta": meta,
    }


def _tokens(value, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RecordError(name, f"must be a non-negative integer, got {value!r}")
    return value


def _given_limit(time_limit: TimeLimit, task: str) -> float | None:
    """The ``time_limit=`` argument's seconds for ``task`` (a number for all tasks, or a mapping)."""
    if time_limit is None:
        return None
    value = time_limit.get(task) if isinstance(time_limit, Mapping) else time_limit
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"time_limit for {task!r} must be a positive number of seconds, got {value!r}")
    return float(value)


def _relocated(recorded: str | None, anchor_then: str | None, anchor_now: Path) -> list[Path]:
    """Where a path the harness recorded may be now: as recorded, then at the same place relative to
    ``anchor_now`` as it was to ``anchor_then`` (a run folder copied together with its dataset)."""
    if not recorded:
        return []
    out = [Path(recorded)]
    if anchor_then:
        out.append(anchor_now / os.path.relpath(recorded, anchor_then))
    return out


def _read_json(path: Path, name: str):
    try:
        return orjson.loads(path.read_bytes())
    except OSError as e:
        raise RecordError(name, f"cannot be read ({e.strerror})") from None
    except orjson.JSONDecodeError as e:
        raise RecordError(name, f"not valid JSON (truncated?): {e}") from None


def _model_name(found: str | None, model: ModelOption, path: Path, what: str) -> str:
    if found:
        return found
    name = model(path) if callable(model) else model
    if not name:
        raise ValueError(f"{path}: {what} does not name the model; pass model='NAME' (CLI: --model NAME)")
    return name


def _files(paths, find: Callable[[Path], list[Path]]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(find(p))
        elif p.exists():
            out.append(p)
        else:
            raise FileNotFoundError(f"no such file or directory: {p}")
    return out


def _head(path: Path, n: int = 4096) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(n)
    except OSError:
        return b""


# --------------------------------------------------------------------------------------------
# terminal-bench: <run_id>/results.json (+ run_metadata.json, tb.lock, <task>/<trial>/results.json)


def looks_like_tb_results(path: Path) -> bool:
    """A terminal-bench ``results.json`` (a run's or one trial's), or a folder holding one."""
    if path.is_dir():
        return any(looks_like_tb_results(q) for q in _first(path.rglob("results.json"), 20))
    if path.name != "results.json":
        return False
    head = _head(path)
    return b'"trial_name"' in head and b'"task_id"' in head and b'"trial_uri"' not in head


def _first(it, n: int) -> list:
    out = []
    for x in it:
        out.append(x)
        if len(out) >= n:
            break
    return out


def _find_tb(root: Path) -> list[Path]:
    """Run-level results.json files, and trial-level ones of runs that have none (a run cut short)."""
    files = sorted(f for f in root.rglob("results.json") if looks_like_tb_results(f))
    runs = {f.parent for f in files if b'"results"' in _head(f, 256)}
    return [f for f in files if f.parent in runs or f.parents[2] not in runs]


def read_terminal_bench(paths, sink: EpisodeSink, model: ModelOption = None, time_limit: TimeLimit = None,
                        tasks_dir: str | os.PathLike | None = None, task_type: str | None = None) -> None:
    """Read terminal-bench ``results.json`` files (or run directories, or a folder of them) into ``sink``.

    ``model``: used when neither run_metadata.json nor tb.lock names it. ``time_limit``: seconds, or
    ``{task_id: seconds}``, for runs that recorded no global limit. ``tasks_dir``: the dataset (one
    ``<task_id>/task.yaml`` per task) for the limits and categories. ``task_type``: one name for all
    trials (default: the task's category, else the dataset's name, else ``"terminal-bench"``).
    """
    for path in _files(paths, _find_tb):
        display = str(path)
        sink.open_file(display)
        try:
            data = _read_json(path, "<file>")
            run_dir, trials = _tb_trials(path, data)
            run = _tb_run(run_dir)
        except RecordError as e:
            sink.reject(display, 0, e.field, e.reason, "")
            continue
        name = _model_name(run.model, model, path, "the run (run_metadata.json, tb.lock)")
        for line, (where, raw) in enumerate(trials, start=1):
            try:
                rec = _tb_episode(where, raw, run, name, time_limit, tasks_dir, task_type)
            except RecordError as e:
                # fields of the trial get its JSON path; those of other files (<task.yaml> ...) do not
                at = e.field if e.field.startswith("<") else where + e.field
                sink.reject(display, line, at, e.reason, orjson.dumps(raw))
                continue
            sink.add(rec, display, line, orjson.dumps(raw))


def _tb_trials(path: Path, data) -> tuple[Path, list[tuple[str, dict]]]:
    """The run directory and the trials (with their JSON paths) of a run- or trial-level file."""
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        trials = data["results"]
        for i, t in enumerate(trials):
            if not isinstance(t, dict):
                raise RecordError(f"results[{i}]", "a trial must be a JSON object")
        return path.parent, [(f"results[{i}].", t) for i, t in enumerate(trials)]
    if isinstance(data, dict) and "trial_name" in data:
        return path.parents[2], [("", data)]  # <run>/<task_id>/<trial_name>/results.json
    raise RecordError("<file>", "not a terminal-bench results file (no 'results' list, no 'trial_name')")


@dataclass
class TbRun:
    run_id: str
    model: str | None
    agent: str | None
    dataset: str | None
    run_dir: Path
    global_limit: float | None
    multiplier: float
    dataset_paths: list[Path]


def _tb_run(run_dir: Path) -> TbRun:
    """What the run recorded next to its results: run_metadata.json and tb.lock, where present."""
    meta = _optional_json(run_dir / "run_metadata.json")
    lock = _optional_json(run_dir / "tb.lock")
    config = lock.get("run_config") or {}
    agent = lock.get("agent") or {}
    dataset = lock.get("dataset") or {}
    out_then = meta.get("output_path") or (lock.get("local_config") or {}).get("output_path")
    paths = _relocated(meta.get("dataset_path"), out_then, run_dir.parent)
    paths += _relocated(dataset.get("local_path"), out_then, run_dir.parent)
    return TbRun(run_id=str(meta.get("run_id") or run_dir.name), model=meta.get("model_name") or agent.get("model_name"),
                 agent=meta.get("agent_name") or agent.get("name"),
                 dataset=meta.get("dataset_name") or dataset.get("name") or _stem(meta.get("dataset_path")),
                 run_dir=run_dir, global_limit=_positive(config.get("global_agent_timeout_sec"), "tb.lock"),
                 multiplier=_positive(config.get("global_timeout_multiplier"), "tb.lock") or 1.0,
                 dataset_paths=paths)


def _optional_json(path: Path) -> dict:
    if not path.is_file():
        return {}
    data = _read_json(path, path.name)
    if not isinstance(data, dict):
        raise RecordError(path.name, "expected a JSON object")
    return data


def _stem(path: str | None) -> str | None:
    return Path(path).name if path else None


def _positive(value, name: str) -> float | None:
    """A positive number, or None for a missing/zero value (the harness treats 0 as unset)."""
    if value is None or value == 0:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise RecordError(name, f"must be a positive number of seconds, got {value!r}")
    return float(value)


def _tb_kind(mode: str) -> str:
    if mode in TB_NORMAL:
        return "ok"
    if mode in TB_TIMEOUT:
        return "timeout"
    if mode in TB_ERROR:
        return "error"
    if mode in TB_NO_VERDICT:
        return "no_verdict"
    return "other"  # "unknown", or a failure mode this adapter does not know


def _tb_trial(where: str, raw: dict, run: TbRun) -> Trial:
    for key in ("trial_name", "task_id"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise RecordError(key, "required text is missing")
    mode = raw.get("failure_mode", "unset")
    if not isinstance(mode, str):
        raise RecordError("failure_mode", f"must be text, got {type(mode).__name__}")
    resolved = raw.get("is_resolved")
    if resolved is not None and not isinstance(resolved, bool):
        raise RecordError("is_resolved", f"must be true, false or null, got {resolved!r}")
    return Trial(where=where, run_id=run.run_id, episode_id=raw["trial_name"], task=raw["task_id"],
                 kind=_tb_kind(mode), resolved=resolved,
                 start=parse_time(raw.get("agent_started_at"), "agent_started_at"),
                 end=parse_time(raw.get("agent_ended_at"), "agent_ended_at"),
                 start_field="agent_started_at", end_field="agent_ended_at",
                 tokens=_tokens(raw.get("total_output_tokens"), "total_output_tokens"),
                 meta={"failure_mode": mode, "is_resolved": resolved,
                       "input_tokens": _tokens(raw.get("total_input_tokens"), "total_input_tokens")})


def _tb_episode(where, raw, run: TbRun, model, time_limit, tasks_dir, task_type) -> dict:
    t = _tb_trial(where, raw, run)
    limit = _tb_limit(t.task, run, time_limit, tasks_dir)
    kind = task_type or limit.category or run.dataset or "terminal-bench"
    return _episode(t, limit, model, kind, run.agent, "terminal-bench")


def _tb_limit(task: str, run: TbRun, time_limit: TimeLimit, tasks_dir) -> Limit:
    """The agent time limit the harness enforced on ``task``, first found of:

    1. tb.lock ``run_config.global_agent_timeout_sec`` (the run's ``--global-agent-timeout-sec``,
       which the harness applies to every task as it is);
    2. the ``time_limit`` argument (seconds, or ``{task_id: seconds}``), taken as it is;
    3. ``<tasks_dir>/<task_id>/task.yaml`` ``max_agent_timeout_sec`` (terminal-bench's default 360 s
       when the file leaves it out) × tb.lock ``global_timeout_multiplier``;
    4. the same file in the dataset the run recorded (``dataset_path``), where it still is or at the
       same place relative to the runs folder.

    The category comes from the task.yaml when one is read. None found: a ``RecordError``.
    """
    if run.global_limit is not None:
        return Limit(run.global_limit, "tb.lock global_agent_timeout_sec", _tb_category(task, tasks_dir, run))
    given = _given_limit(time_limit, task)
    if given is not None:
        return Limit(given, "argument", _tb_category(task, tasks_dir, run))
    found = _tb_task_yaml(task, tasks_dir, run)
    if found is not None:
        yaml_path, cfg = found
        base = _positive(cfg.get("max_agent_timeout_sec"), "<task.yaml> max_agent_timeout_sec")
        return Limit((base or TB_DEFAULT_AGENT_TIMEOUT_S) * run.multiplier, str(yaml_path), _category(cfg))
    raise RecordError("max_agent_timeout_sec", f"task {task!r}: the agent time limit is not in the results; pass "
                                               "time_limit=SECONDS (or {task: seconds}) or tasks_dir=DATASET")


def _tb_task_yaml(task: str, tasks_dir, run: TbRun) -> tuple[Path, dict] | None:
    roots = ([Path(tasks_dir)] if tasks_dir is not None else []) + run.dataset_paths
    for root in roots:
        path = root / task / "task.yaml"
        if path.is_file():
            return path, _yaml(path)
    return None


def _tb_category(task: str, tasks_dir, run: TbRun) -> str | None:
    found = _tb_task_yaml(task, tasks_dir, run)
    return _category(found[1]) if found else None


def _yaml(path: Path) -> dict:
    import yaml  # a dependency (pyyaml)

    try:
        cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise RecordError("<task.yaml>", f"{path} cannot be read ({type(e).__name__})") from None
    if not isinstance(cfg, dict):
        raise RecordError("<task.yaml>", f"{path} is not a mapping")
    return cfg


def _category(cfg: dict) -> str | None:
    value = cfg.get("category") or (cfg.get("metadata") or {}).get("category")
    return value if isinstance(value, str) and value else None


# --------------------------------------------------------------------------------------------
# harbor: <job>/<trial_name>/result.json


def looks_like_harbor_trial(path: Path) -> bool:
    """A harbor trial ``result.json``, or a folder holding one."""
    if path.is_dir():
        return any(looks_like_harbor_trial(q) for q in _first(path.rglob("result.json"), 20))
    if path.name != "result.json":
        return False
    head = _head(path)
    return b'"trial_uri"' in head and b'"task_name"' in head


def _find_harbor(root: Path) -> list[Path]:
    return sorted(f for f in root.rglob("result.json") if looks_like_harbor_trial(f))


def read_harbor(paths, sink: EpisodeSink, model: ModelOption = None, time_limit: TimeLimit = None,
                tasks_dir: str | os.PathLike | None = None, task_type: str | None = None,
                success_rule: SuccessRule | None = None) -> None:
    """Read harbor trial ``result.json`` files (or job directories, or a folder of them) into ``sink``.

    ``success_rule``: on the verifier's ``reward`` (default ``reward >= 0.5``, right for 0/1 rewards).
    The other options as for :func:`read_terminal_bench`; ``tasks_dir`` holds ``<task>/task.toml``.
    """
    rule = make_success_rule(success_rule)
    for path in _files(paths, _find_harbor):
        display = str(path)
        sink.open_file(display)
        try:
            raw = _read_json(path, "<file>")
            if not isinstance(raw, dict):
                raise RecordError("<file>", "expected a JSON object (a harbor TrialResult)")
            rec = _harbor_episode(path, raw, model, time_limit, tasks_dir, task_type, rule)
        except RecordError as e:
            sink.reject(display, 1, e.field, e.reason, path.read_bytes()[:1024] if path.is_file() else "")
            continue
        sink.add(rec, display, 1, orjson.dumps(raw))


def _get(raw: dict, dotted: str):
    """``raw["a"]["b"]`` for ``"a.b"``; None where a level is missing or null."""
    node = raw
    for key in dotted.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _harbor_kind(exception_type: str | None) -> str:
    if exception_type is None:
        return "ok"
    if exception_type in HARBOR_TIMEOUT:
        return "timeout"
    if exception_type in HARBOR_NO_VERDICT:
        return "no_verdict"
    if exception_type in HARBOR_OTHER:
        return "other"
    return "error"  # provider, sandbox, agent and unclassified failures


def _harbor_reward(raw: dict) -> float | None:
    rewards = _get(raw, "verifier_result.rewards")
    if not rewards:
        return None
    if not isinstance(rewards, dict):
        raise RecordError("verifier_result.rewards", "must be a JSON object")
    if HARBOR_REWARD in rewards:
        key = HARBOR_REWARD
    elif len(rewards) == 1:
        key = next(iter(rewards))
    else:
        raise RecordError("verifier_result.rewards", f"several rewards ({', '.join(rewards)}) and none named "
                                                     f"{HARBOR_REWARD!r}")
    value = rewards[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RecordError(f"verifier_result.rewards.{key}", f"must be a number, got {value!r}")
    return float(value)


def _harbor_trial(path: Path, raw: dict, rule) -> Trial:
    for key in ("trial_name", "task_name"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise RecordError(key, "required text is missing")
    if raw.get("step_results"):
        raise RecordError("step_results", "multi-step trials are not mapped (one decision per trial)")
    exc = _get(raw, "exception_info.exception_type")
    reward = _harbor_reward(raw)
    return Trial(where="", run_id=_harbor_run_id(path, raw), episode_id=raw["trial_name"], task=raw["task_name"],
                 kind=_harbor_kind(exc), resolved=None if reward is None else bool(rule(reward)),
                 start=parse_time(_get(raw, "agent_execution.started_at"), "agent_execution.started_at"),
                 end=parse_time(_get(raw, "agent_execution.finished_at"), "agent_execution.finished_at"),
                 start_field="agent_execution.started_at", end_field="agent_execution.finished_at",
                 tokens=_tokens(_get(raw, "agent_result.n_output_tokens"), "agent_result.n_output_tokens"),
                 meta={"exception_type": exc, "reward": reward,
                       "input_tokens": _tokens(_get(raw, "agent_result.n_input_tokens"), "agent_result.n_input_tokens")})


def _harbor_run_id(path: Path, raw: dict) -> str:
    """The job's name (its directory, as the trial's config records it), else the job id."""
    trials_dir = _get(raw, "config.trials_dir")
    if isinstance(trials_dir, str) and trials_dir:
        return Path(trials_dir).name
    job_id = _get(raw, "config.job_id")
    return str(job_id) if job_id else path.parent.parent.name


def _harbor_model(raw: dict) -> str | None:
    name = _get(raw, "agent_info.model_info.name")
    provider = _get(raw, "agent_info.model_info.provider")
    if isinstance(name, str) and name:
        return f"{provider}/{name}" if isinstance(provider, str) and provider else name
    configured = _get(raw, "config.agent.model_name")
    return configured if isinstance(configured, str) and configured else None


def _harbor_episode(path, raw, model, time_limit, tasks_dir, task_type, rule) -> dict:
    t = _harbor_trial(path, raw, rule)
    limit = _harbor_limit(path, raw, t.task, time_limit, tasks_dir)
    name = _model_name(_harbor_model(raw), model, path, "the trial (agent_info.model_info)")
    source = raw.get("source") if isinstance(raw.get("source"), str) else None
    kind = task_type or limit.category or source or "harbor"
    return _episode(t, limit, name, kind, _get(raw, "agent_info.name"), "harbor")


def _harbor_limit(path: Path, raw: dict, task: str, time_limit: TimeLimit, tasks_dir) -> Limit:
    """The agent time limit harbor enforced on the trial, first found of:

    1. the trial's ``config.agent.override_timeout_sec`` (the job's override);
    2. the ``time_limit`` argument (seconds, or ``{task: seconds}``), taken as it is;
    3. ``<tasks_dir>/<task>/task.toml`` ``[agent] timeout_sec``;
    4. the task's own ``task.toml`` at ``config.task.path`` (a relative path is resolved against the
       folder harbor ran in, found from the recorded ``config.trials_dir``).

    Harbor's ``max_timeout_sec`` cap and agent timeout multiplier apply to 1, 3 and 4, as in
    ``Trial._compute_agent_timeout_sec``. A task.toml without ``timeout_sec`` means no limit.
    """
    override = _positive(_get(raw, "config.agent.override_timeout_sec"), "config.agent.override_timeout_sec")
    found = _harbor_task_toml(path, raw, task, tasks_dir)
    category = _category(found[1]) if found else None
    if override is not None:
        return Limit(_harbor_scaled(raw, override), "config.agent.override_timeout_sec", category)
    given = _given_limit(time_limit, task)
    if given is not None:
        return Limit(given, "argument", category)
    if found is not None:
        toml_path, cfg = found
        base = _positive(_get(cfg, "agent.timeout_sec"), "<task.toml> agent.timeout_sec")
        return Limit(None if base is None else _harbor_scaled(raw, base), str(toml_path), category)
    raise RecordError("config.agent.override_timeout_sec", f"task {task!r}: the agent time limit is not in the "
                      "result and its task.toml was not found; pass time_limit=SECONDS (or {task: seconds}) or "
                      "tasks_dir=DATASET")


def _harbor_scaled(raw: dict, base: float) -> float:
    cap = _positive(_get(raw, "config.agent.max_timeout_sec"), "config.agent.max_timeout_sec")
    multiplier = (_positive(_get(raw, "config.agent_timeout_multiplier"), "config.agent_timeout_multiplier")
                  or _positive(_get(raw, "config.timeout_multiplier"), "config.timeout_multiplier") or 1.0)
    return min(base, cap or math.inf) * multiplier


def _harbor_task_toml(path: Path, raw: dict, task: str, tasks_dir) -> tuple[Path, dict] | None:
    candidates = [Path(tasks_dir) / task / "task.toml"] if tasks_dir is not None else []
    recorded = _get(raw, "config.task.path")
    if isinstance(recorded, str) and recorded:
        candidates += [p / "task.toml" for p in _harbor_task_dirs(path, raw, Path(recorded))]
    for candidate in candidates:
        if candidate.is_file():
            try:
                return candidate, tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
                raise RecordError("<task.toml>", f"{candidate} cannot be read ({type(e).__name__})") from None
    return None


def _harbor_task_dirs(path: Path, raw: dict, recorded: Path) -> list[Path]:
    if recorded.is_absolute():
        return [recorded]
    # the trial ran in <cwd>/<trials_dir>/<trial_name>/: <cwd> is as many levels up as trials_dir is deep
    trials_dir = _get(raw, "config.trials_dir")
    if isinstance(trials_dir, str) and trials_dir and not Path(trials_dir).is_absolute():
        depth = len(Path(trials_dir).parts)
        trial_dir = path.resolve().parent
        if depth < len(trial_dir.parents):
            return [trial_dir.parents[depth] / recorded]
    return []


__all__ = ["read_terminal_bench", "read_harbor", "looks_like_tb_results", "looks_like_harbor_trial"]
