"""Write the Terminal-Bench fixture runs in tests/data/real/terminal_bench/ with terminal-bench's own models.

    python3.12 -m venv /tmp/tb_venv && /tmp/tb_venv/bin/pip install terminal-bench==0.2.18
    /tmp/tb_venv/bin/python tests/data/real/make_terminal_bench.py [OUT_DIR]

No trial is run (the harness needs docker and a model provider): the trials' outcomes are drawn
with a fixed seed, and every file is built from terminal-bench's own pydantic models
(``Task``, ``TrialResults``, ``BenchmarkResults``, ``RunMetadata``, ``RunLock``) and written by the
harness's own writers, in the harness's layout::

    tasks/<task_id>/task.yaml                   Task.to_yaml
    runs/<run_id>/results.json                  Harness._write_results (BenchmarkResults)
    runs/<run_id>/run_metadata.json             RunMetadata.model_dump_json(indent=4), as the harness
    runs/<run_id>/tb.lock                       RunLock.to_json
    runs/<run_id>/<task_id>/<trial>/results.json  TrialResults.model_dump_json(indent=4), as the harness

The trial outcomes follow the harness's code paths (terminal_bench/harness/harness.py, _run_trial):
an agent that ends normally leaves ``failure_mode`` ``unset`` and the tests decide ``is_resolved``;
a timed-out agent gets ``agent_timeout`` and its tests still run (it may pass them); an agent error
(``context_length_exceeded``, ``unknown_agent_error``, ...) is recorded and the tests still run; a
test output that does not parse is ``parse_error`` with ``is_resolved`` null; tests that time out
are ``test_timeout``; an exception in the harness itself leaves a bare ``TrialResults``
(``unknown_agent_error``, no timestamps). Only this script is ours.
"""

import math
import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

from terminal_bench.agents.failure_mode import FailureMode
from terminal_bench.handlers.trial_handler import Task, TaskDifficulty, TrialPaths
from terminal_bench.harness.harness import Harness
from terminal_bench.harness.models import BenchmarkResults, RunMetadata, TrialResults
from terminal_bench.parsers.base_parser import UnitTestStatus
from terminal_bench.utils.run_lock import AgentLock, DatasetLock, LocalConfig, RunConfigLock, RunLock

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "terminal_bench"
SEED = 20261204
N_ATTEMPTS = 4

from _agent_tasks import TASKS  # noqa: E402  (the script's folder is on sys.path)
#: model name, run id (the harness's default: the start time), P(solve) on an easy task, speed factor
MODELS = [
    ("openai/gpt-5-mini", "2026-12-04__10-02-11", 0.80, 0.8),
    ("anthropic/claude-sonnet-4-5", "2026-12-04__13-40-57", 0.85, 1.1),
    ("deepseek/deepseek-chat", "2026-12-05__09-15-30", 0.65, 1.3),
]
DIFFICULTY_PENALTY = {"easy": 0.0, "medium": 0.15, "hard": 0.35}
AGENT_ERRORS = [FailureMode.CONTEXT_LENGTH_EXCEEDED, FailureMode.UNKNOWN_AGENT_ERROR,
                FailureMode.FATAL_LLM_PARSE_ERROR]


def stamp(t: datetime) -> str:
    return t.isoformat()  # the harness writes datetime.now(timezone.utc).isoformat()


def write_tasks(root: Path) -> None:
    for task_id, category, difficulty, limit, _ in TASKS:
        d = root / task_id
        d.mkdir(parents=True, exist_ok=True)
        Task(instruction=f"Complete the task '{task_id}' in the terminal.", difficulty=TaskDifficulty(difficulty),
             category=category, max_agent_timeout_sec=limit).to_yaml(d / "task.yaml")


def parser_results(rng: random.Random, solved: bool) -> dict:
    names = [f"test_{k}" for k in range(3)]
    out = {n: UnitTestStatus.PASSED for n in names}
    if not solved:
        out[rng.choice(names)] = UnitTestStatus.FAILED
    return out


def draw_trial(rng, task, model, attempt, run_id, t0) -> tuple[TrialResults, datetime]:
    task_id, _, difficulty, limit, share = task
    _, _, p_easy, speed = model
    trial = TrialResults(trial_name=f"{task_id}.{attempt}-of-{N_ATTEMPTS}.{run_id}", task_id=task_id,
                         instruction=f"Complete the task '{task_id}' in the terminal.")
    trial.trial_started_at = stamp(t0)
    if rng.random() < 0.02:  # the harness itself failed (Harness._execute_single_trial's except branch)
        bare = TrialResults(trial_name=trial.trial_name, task_id=task_id, instruction=trial.instruction,
                            failure_mode=FailureMode.UNKNOWN_AGENT_ERROR)
        return bare, t0 + timedelta(seconds=30)
    agent_start = t0 + timedelta(seconds=rng.uniform(4, 20))
    trial.agent_started_at = stamp(agent_start)
    duration = limit * share * speed * math.exp(rng.gauss(0, 0.45))
    p_solve = max(0.05, p_easy - DIFFICULTY_PENALTY[difficulty])
    u = rng.random()
    tests_run = True
    if duration > limit:  # asyncio.wait_for gave up; the executor thread is joined before agent_ended_at
        trial.failure_mode = FailureMode.AGENT_TIMEOUT
        duration = limit + rng.uniform(0.3, 6.0)
        solved = rng.random() < 0.25 * p_solve  # the work may already pass the tests
    elif u < 0.07:
        trial.failure_mode = rng.choice(AGENT_ERRORS)
        solved = rng.random() < 0.1
    else:
        solved = rng.random() < p_solve
    agent_end = agent_start + timedelta(seconds=duration)
    trial.agent_ended_at = stamp(agent_end)
    trial.total_input_tokens = int(duration * rng.uniform(300, 900))
    trial.total_output_tokens = int(duration * rng.uniform(15, 60))
    test_start = agent_end + timedelta(seconds=rng.uniform(1, 3))
    trial.test_started_at = stamp(test_start)
    v = rng.random()
    if v < 0.02 and trial.failure_mode == FailureMode.UNSET:  # tests timed out: _run_trial returns early
        trial.failure_mode = FailureMode.TEST_TIMEOUT
        end = test_start + timedelta(seconds=60)
        trial.test_ended_at = stamp(end)
        trial.trial_ended_at = stamp(end + timedelta(seconds=1))
        return trial, end
    end = test_start + timedelta(seconds=rng.uniform(3, 40))
    trial.test_ended_at = stamp(end)
    trial.recording_path = f"{run_id}/{task_id}/{trial.trial_name}/sessions/agent.cast"
    if v < 0.05:  # the test pane did not parse: failure_mode overwritten, is_resolved left null
        trial.failure_mode = FailureMode.PARSE_ERROR
        tests_run = False
    if tests_run:
        trial.parser_results = parser_results(rng, solved)
        trial.is_resolved = Harness._is_resolved(None, trial.parser_results)
    trial.trial_ended_at = stamp(end + timedelta(seconds=1))
    return trial, end


def write_run(rng, model, runs: Path, tasks: Path) -> None:
    name, run_id, _, _ = model
    run_path = runs / run_id
    run_path.mkdir(parents=True, exist_ok=True)
    start = datetime.strptime(run_id, "%Y-%m-%d__%H-%M-%S").replace(tzinfo=timezone.utc)
    clock = start
    results = BenchmarkResults()
    for attempt in range(1, N_ATTEMPTS + 1):
        for task in TASKS:
            trial, clock = draw_trial(rng, task, model, attempt, run_id, clock + timedelta(seconds=rng.uniform(2, 8)))
            paths = TrialPaths(run_path, trial.task_id, trial.trial_name)
            paths.task_output_path.mkdir(parents=True, exist_ok=True)
            paths.results_path.write_text(trial.model_dump_json(indent=4))  # as _execute_single_trial
            results.results.append(trial)
    Harness._write_results(SimpleNamespace(_results_output_path=run_path / "results.json"), results)
    task_ids = [t[0] for t in TASKS]
    metadata = RunMetadata(run_id=run_id, dataset_path=str(tasks.absolute()), output_path=str(runs.absolute()),
                           agent_name="terminus", no_rebuild=False, cleanup=True, log_level=20, task_ids=task_ids,
                           n_attempts=N_ATTEMPTS, dataset_size=len(task_ids), model_name=name,
                           commit_hash="unknown", username="fixture", start_time=stamp(start),
                           end_time=stamp(clock), accuracy=results.accuracy, pass_at_k=results.pass_at_k)
    (run_path / "run_metadata.json").write_text(metadata.model_dump_json(indent=4))
    RunLock(dataset=DatasetLock(local_path=tasks.absolute(), task_ids=task_ids),
            agent=AgentLock(name="terminus", model_name=name,
                            import_path="terminal_bench.agents.terminus_1:Terminus"),
            run_config=RunConfigLock(log_level="info", livestream=False, n_concurrent_trials=4,
                                     n_attempts=N_ATTEMPTS, no_rebuild=False, cleanup=True,
                                     global_timeout_multiplier=1.0),
            local_config=LocalConfig(output_path=runs.absolute(), run_id=run_id, upload_results=False),
            ).to_json(run_path / "tb.lock")


def main() -> None:
    rng = random.Random(SEED)
    write_tasks(OUT / "tasks")
    for model in MODELS:
        write_run(rng, model, OUT / "runs", OUT / "tasks")


if __name__ == "__main__":
    main()
