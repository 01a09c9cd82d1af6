"""Write the Harbor fixture job in tests/data/real/harbor/ with harbor's own result models.

    python3.12 -m venv /tmp/harbor_venv && /tmp/harbor_venv/bin/pip install harbor==0.25.0
    cd tests/data/real/harbor && /tmp/harbor_venv/bin/python ../make_harbor.py

No trial is run (harbor needs a sandbox and a model provider): outcomes are drawn with a fixed seed
and every file is one of harbor's pydantic models, serialised as harbor writes it, in its layout
(run from this folder, as ``harbor run -p tasks`` would be, so the recorded paths are relative)::

    tasks/<task>/task.toml                 TaskConfig.model_dump_toml()
    jobs/<job>/result.json                 JobResult.model_dump_json(indent=4, exclude={"trial_results"})
    jobs/<job>/<trial>/config.json         TrialConfig.model_dump_json(indent=4, exclude_defaults=True)
    jobs/<job>/<trial>/result.json         TrialResult.model_dump_json(indent=4)  (Trial._finalize)

The outcomes follow harbor's code paths (harbor/trial/trial.py): ``agent_execution`` gets its
``finished_at`` in a ``finally`` (so a timed-out agent has one too); a timeout raises
``AgentTimeoutError`` and the verifier still grades the trial (harbor's error policy grades
agent-budget failures); a provider or agent error is recorded in ``exception_info``; a sandbox that
fails to start leaves no ``agent_execution``; a verifier failure leaves no rewards. Only this
script is ours.
"""

import math
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from uuid import UUID

from harbor.models.agent.context import AgentContext
from harbor.models.job.result import JobResult, JobStats
from harbor.models.task.config import AgentConfig as TaskAgentConfig
from harbor.models.task.config import TaskConfig as TaskFileConfig
from harbor.models.trial.config import AgentConfig, TaskConfig, TrialConfig
from harbor.models.trial.result import AgentInfo, ExceptionInfo, ModelInfo, TimingInfo, TrialResult
from harbor.models.verifier.result import VerifierResult

SEED = 20261205
N_ATTEMPTS = 4
JOB = "2026-12-05__14-22-09"
JOB_ID = UUID("5b0c8a52-6a43-4b6e-9d0f-3d1c6f1b2a77")

from _agent_tasks import TASKS  # noqa: E402  (the script's folder is on sys.path)
#: provider, model, P(solve) on an easy task, speed factor
MODELS = [("openai", "gpt-5-mini", 0.80, 0.8), ("anthropic", "claude-sonnet-4-5", 0.85, 1.1)]
ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
DIFFICULTY_PENALTY = {"easy": 0.0, "medium": 0.15, "hard": 0.35}
#: exception types harbor records (harbor/models/trial/error_policy.py), with how often they are drawn
ERRORS = [("ApiRateLimitError", "model_provider"), ("NonZeroAgentExitCodeError", "agent"),
          ("ContextLengthExceededError", "agent")]


def short_id(rng: random.Random) -> str:
    """A 7-character id like harbor's default trial-name suffix (ShortUUID), drawn from the seed."""
    return "".join(rng.choice(ALPHABET) for _ in range(7))


def exception(kind: str, message: str, at: datetime) -> ExceptionInfo:
    return ExceptionInfo(exception_type=kind, exception_message=message,
                         exception_traceback=f"Traceback (most recent call last):\n  ...\n{kind}: {message}\n",
                         occurred_at=at)


def write_tasks(root: Path) -> None:
    for name, category, difficulty, limit, _ in TASKS:
        d = root / name
        d.mkdir(parents=True, exist_ok=True)
        cfg = TaskFileConfig(metadata={"category": category, "difficulty": difficulty},
                             agent=TaskAgentConfig(timeout_sec=limit))
        (d / "task.toml").write_text(cfg.model_dump_toml())
        (d / "instruction.md").write_text(f"Complete the task '{name}' in the terminal.\n")


def draw_trial(rng, task, model, t0) -> tuple[TrialResult, datetime]:
    name, _, difficulty, limit, share = task
    provider, model_name, p_easy, speed = model
    config = TrialConfig(task=TaskConfig(path=Path("tasks") / name, source="tasks"),
                         trial_name=f"{name[:32].rstrip('_-')}__{short_id(rng)}", trials_dir=Path("jobs") / JOB,
                         agent=AgentConfig(name="terminus-2", model_name=f"{provider}/{model_name}"), job_id=JOB_ID)
    result = TrialResult(task_name=name, trial_name=config.trial_name,
                         trial_uri=f"file:///runs/jobs/{JOB}/{config.trial_name}", task_id=config.task.get_task_id(),
                         source="tasks", task_checksum=f"{rng.getrandbits(64):016x}", config=config,
                         agent_info=AgentInfo(name="terminus-2", version="2.0.0",
                                              model_info=ModelInfo(name=model_name, provider=provider)),
                         started_at=t0)
    setup_end = t0 + timedelta(seconds=rng.uniform(8, 40))
    result.environment_setup = TimingInfo(started_at=t0, finished_at=setup_end)
    if rng.random() < 0.03:  # the sandbox never came up: no agent phase, nothing graded
        result.exception_info = exception("EnvironmentStartTimeoutError", "Environment start timed out after 600.0 "
                                          "seconds", setup_end)
        result.finished_at = setup_end
        return result, setup_end
    agent_start = setup_end + timedelta(seconds=rng.uniform(2, 10))
    result.agent_setup = TimingInfo(started_at=setup_end, finished_at=agent_start)
    duration = limit * share * speed * math.exp(rng.gauss(0, 0.45))
    p_solve = max(0.05, p_easy - DIFFICULTY_PENALTY[difficulty])
    if duration > limit:
        duration = limit + rng.uniform(0.05, 2.0)  # the wait_for cancels; finished_at set in `finally`
        solved = rng.random() < 0.25 * p_solve
        exc = ("AgentTimeoutError", f"Agent execution timed out after {limit} seconds")
    elif rng.random() < 0.08:
        kind = rng.choice(ERRORS)[0]
        duration *= rng.uniform(0.1, 0.6)
        solved = rng.random() < 0.1
        exc = (kind, f"{kind} raised by the agent")
    else:
        solved, exc = rng.random() < p_solve, None
    agent_end = agent_start + timedelta(seconds=duration)
    result.agent_execution = TimingInfo(started_at=agent_start, finished_at=agent_end)
    result.agent_result = AgentContext(n_input_tokens=int(duration * rng.uniform(300, 900)),
                                       n_output_tokens=int(duration * rng.uniform(15, 60)))
    if exc is not None:
        result.exception_info = exception(exc[0], exc[1], agent_end)
    verify_end = agent_end + timedelta(seconds=rng.uniform(5, 45))
    result.verifier = TimingInfo(started_at=agent_end + timedelta(seconds=1), finished_at=verify_end)
    if exc is None and rng.random() < 0.04:  # the test script wrote no reward file
        result.exception_info = exception("RewardFileNotFoundError", "reward file not found", verify_end)
    else:
        result.verifier_result = VerifierResult(rewards={"reward": 1.0 if solved else 0.0})
    result.finished_at = verify_end + timedelta(seconds=rng.uniform(2, 6))
    return result, result.finished_at


def main() -> None:
    rng = random.Random(SEED)
    write_tasks(Path("tasks"))
    job_dir = Path("jobs") / JOB
    start = datetime.strptime(JOB, "%Y-%m-%d__%H-%M-%S").replace(tzinfo=timezone.utc)
    clock, results = start, []
    for model in MODELS:
        for _ in range(N_ATTEMPTS):
            for task in TASKS:
                result, clock = draw_trial(rng, task, model, clock + timedelta(seconds=rng.uniform(1, 5)))
                trial_dir = job_dir / result.trial_name
                trial_dir.mkdir(parents=True, exist_ok=True)
                (trial_dir / "config.json").write_text(result.config.model_dump_json(indent=4, exclude_defaults=True))
                (trial_dir / "result.json").write_text(result.model_dump_json(indent=4))
                results.append(result)
    job = JobResult(id=JOB_ID, started_at=start, updated_at=clock, finished_at=clock, n_total_trials=len(results),
                    stats=JobStats.from_trial_results(results, n_total_trials=len(results)))
    (job_dir / "result.json").write_text(job.model_dump_json(indent=4, exclude={"trial_results"}))


if __name__ == "__main__":
    main()
