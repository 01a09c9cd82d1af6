"""Preset designs: four kinds of realtime pressure, three failure regimes and a leaderboard.

Calibrated (see ``docs/user-guide/simulate.md``) so that success rates are mostly 10–70 % and about 40 %
overall: many-decision families get short windows but a miss there is fatal only with some
probability, as in games where one late move is often recoverable.
"""

from __future__ import annotations

import numpy as np

from .design import Design, AgentSpec, TaskTypeSpec

#: the example roster: distinct speed/skill trade-offs
ROSTER = (
    AgentSpec("strong-slow", skill=1.3, log_latency=0.55),
    AgentSpec("strong-fast", skill=1.0, log_latency=-0.2),
    AgentSpec("balanced", skill=0.4, log_latency=0.0),
    AgentSpec("weak-fast", skill=-0.5, log_latency=-0.7),
    AgentSpec("silent-prone", skill=0.7, log_latency=0.15, silence=0.04),
    AgentSpec("deliberate", skill=0.9, log_latency=0.75),
)

#: the four pressure families, as task types (seconds)
HIGH_FREQUENCY = TaskTypeSpec(
    "high_frequency", difficulty=-3.0, latency_median=0.5, latency_sd=0.4,
    windows=((0.0, 1.0, 1.0),), n_steps=(8, 12), fatality=0.35, tick=1.2)
LONG_HORIZON = TaskTypeSpec(
    "long_horizon", difficulty=-0.6, latency_median=6.0, latency_sd=0.6,
    windows=((0.0, 15.0, 1.0),), n_steps=(2, 3), fatality=1.0, give_up=30.0)
SUDDEN_DISTURBANCE = TaskTypeSpec(
    "sudden_disturbance", difficulty=-1.9, latency_median=1.2, latency_sd=0.5,
    windows=((0.0, 8.0, 0.85), (0.0, 1.5, 0.15)), n_steps=(5, 7), fatality=1.0)
ADVERSARIAL_INTERRUPTION = TaskTypeSpec(
    "adversarial_interruption", difficulty=-1.4, latency_median=1.6, latency_sd=0.5,
    windows=((0.6, 6.0, 1.0),), n_steps=(3, 5), fatality=1.0)
FAMILIES = (HIGH_FREQUENCY, LONG_HORIZON, SUDDEN_DISTURBANCE, ADVERSARIAL_INTERRUPTION)


def _leaderboard_roster(n: int = 60, seed: int = 60) -> tuple[AgentSpec, ...]:
    """Sixty models: skill and slowness correlated (bigger is slower), unbalanced coverage."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.3, 0.8, n)
    lat = 0.35 * (skill - 0.3) + rng.normal(0.0, 0.35, n)
    silence = np.where(rng.random(n) < 0.15, rng.uniform(0.01, 0.06, n), 0.0)
    coverage = np.round(rng.choice([1.0, 1.0, 0.6, 0.3, 0.15], size=n), 2)
    return tuple(AgentSpec(f"lb-{i:02d}", skill=round(float(skill[i]), 3), log_latency=round(float(lat[i]), 3),
                           silence=round(float(silence[i]), 3), coverage=float(coverage[i])) for i in range(n))


#: the named designs :func:`~rtanalysis.simulate.simulate` accepts as ``design``
PRESETS: dict[str, Design] = {
    "high_frequency": Design(
        "high_frequency", ROSTER[:4],
        (HIGH_FREQUENCY,
         TaskTypeSpec("high_frequency_tokens", difficulty=-3.0, latency_median=500, latency_sd=0.4,
                      windows=((0, 1024, 1.0),), n_steps=(8, 12), fatality=0.35, time_unit="tokens", tick=1024)),
        clocks=("paused", "wall", "step"),
        description="many decisions (8-12) with short windows; a token-budget variant under the step clock"),
    "long_horizon": Design(
        "long_horizon", ROSTER[:4],
        (LONG_HORIZON,
         TaskTypeSpec("long_horizon_tight", difficulty=-0.8, latency_median=6.0, latency_sd=0.6,
                      windows=((0.0, 10.0, 1.0),), n_steps=2, fatality=1.0, give_up=30.0)),
        description="few decisions (2-3) with long windows; slow deliberate models pay at the give-up time"),
    "sudden_disturbance": Design(
        "sudden_disturbance", ROSTER[:4],
        (SUDDEN_DISTURBANCE,
         TaskTypeSpec("sudden_disturbance_rare", difficulty=-1.9, latency_median=1.2, latency_sd=0.5,
                      windows=((0.0, 8.0, 0.95), (0.0, 1.2, 0.05)), n_steps=(6, 8), fatality=1.0)),
        description="calm long windows with occasional short ones"),
    "adversarial_interruption": Design(
        "adversarial_interruption", ROSTER[:4],
        (ADVERSARIAL_INTERRUPTION,
         TaskTypeSpec("adversarial_interruption_late", difficulty=-1.4, latency_median=1.6, latency_sd=0.5,
                      windows=((1.2, 8.0, 1.0),), n_steps=(2, 4), fatality=1.0)),
        description="windows open late: answering too early fails"),
    "timing_dominated": Design(
        "timing_dominated", ROSTER[:4],
        (
            TaskTypeSpec("high_frequency", difficulty=-4.0, latency_median=0.6, latency_sd=0.4,
                         windows=((0.0, 1.0, 1.0),), n_steps=(8, 12), fatality=0.35),
            TaskTypeSpec("long_horizon", difficulty=-2.2, latency_median=6.0, latency_sd=0.6,
                         windows=((0.0, 8.0, 1.0),), n_steps=(2, 3)),
            TaskTypeSpec("sudden_disturbance", difficulty=-3.0, latency_median=1.2, latency_sd=0.5,
                         windows=((0.0, 4.0, 0.7), (0.0, 1.2, 0.3)), n_steps=(5, 7)),
            TaskTypeSpec("adversarial_interruption", difficulty=-2.6, latency_median=1.6, latency_sd=0.5,
                         windows=((0.5, 3.5, 1.0),), n_steps=(3, 5)),
        ),
        description="high skill, tight windows: most failures are timing failures"),
    "capability_dominated": Design(
        "capability_dominated", ROSTER[:4],
        (
            TaskTypeSpec("high_frequency", difficulty=-2.3, latency_median=0.4, latency_sd=0.35,
                         windows=((0.0, 1.5, 1.0),), n_steps=(8, 12), fatality=0.35),
            TaskTypeSpec("long_horizon", difficulty=0.0, latency_median=6.0, latency_sd=0.6,
                         windows=((0.0, 30.0, 1.0),), n_steps=(2, 3)),
            TaskTypeSpec("sudden_disturbance", difficulty=-1.3, latency_median=1.0, latency_sd=0.5,
                         windows=((0.0, 10.0, 0.9), (0.0, 3.0, 0.1)), n_steps=(5, 7)),
            TaskTypeSpec("adversarial_interruption", difficulty=-0.9, latency_median=1.6, latency_sd=0.5,
                         windows=((0.2, 10.0, 1.0),), n_steps=(3, 5)),
        ),
        description="generous windows, hard content: most failures are capability failures"),
    "mixed": Design(
        "mixed", ROSTER, FAMILIES, clocks=("paused", "wall", "step"),
        interactions={("strong-slow", "long_horizon"): 0.5, ("weak-fast", "high_frequency"): 0.4},
        description="the example benchmark: six speed/skill trade-offs, the four pressure families, "
                    "step clock on high_frequency"),
    "leaderboard60": Design(
        "leaderboard60", _leaderboard_roster(), FAMILIES, n_tasks=10, seeds_per_task=3,
        description="60 models with unbalanced episode counts (coverage 15-100 %), as on public leaderboards"),
}


# ----------------------------------------------------------------------------- misspecification
# Small designs (3 models × 2 task types, 12 tasks × 5 seeds = 60 episodes per cell) whose data
# break one assumption of the fitted model each; generated by :mod:`.misspec` with Monte Carlo
# truth (``docs/user-guide/simulate.md``, "Misspecification presets").
_MS_FAST = TaskTypeSpec("fast", difficulty=-2.6, latency_median=0.8, latency_sd=0.5,
                        windows=((0.0, 2.0, 1.0),), n_steps=(4, 6), fatality=1.0, tick=2.0)
_MS_SLOW = TaskTypeSpec("slow", difficulty=-1.4, latency_median=4.0, latency_sd=0.5,
                        windows=((0.0, 10.0, 1.0),), n_steps=(2, 3), fatality=1.0, tick=10.0)
_MS_BASE = Design("misspec", ROSTER[:3], (_MS_FAST, _MS_SLOW), clocks=("paused", "wall"), n_tasks=12,
                  seeds_per_task=5)


#: terminal-agent benchmarks: one long decision per trial, a time limit per task type, a grace
#: period after it (the harness stops the agent: no action), graded anyway (labelled); wall clock only
_AGENT_TASK = Design(
    "agent_task", ROSTER[:3],
    (TaskTypeSpec("quick_fix", difficulty=-0.2, latency_median=240.0, latency_sd=0.8,
                  windows=((0.0, 600.0, 1.0),), n_steps=1, give_up=720.0),
     TaskTypeSpec("build_project", difficulty=0.6, latency_median=900.0, latency_sd=0.8,
                  windows=((0.0, 1800.0, 1.0),), n_steps=1, give_up=2160.0)),
    clocks=("wall",), n_tasks=20, seeds_per_task=3,
    description="agent tasks: one decision per trial, limits 600 s / 1800 s with a 20 % grace period, wall only")


def _misspec_presets():
    from dataclasses import replace

    from .misspec import Misspec

    def tt(**kw):
        return tuple(replace(t, **kw.get(t.name, {})) for t in (_MS_FAST, _MS_SLOW))

    def d(name, description, **kw):
        return _MS_BASE.with_(name=name, description=description, **kw)

    return {
        "difficulty_latency": (d("difficulty_latency", "hard items are also slow: log-latency +0.8 per logit of "
                                 "item/decision difficulty", latency_item_coef=0.8, sd_item=0.8),
                               Misspec(note="latency correlated with item difficulty")),
        "speed_accuracy": (d("speed_accuracy", "thinking longer helps: logit P(correct) +1 per SD of the "
                             "decision's log-latency deviation"),
                           Misspec("speed_accuracy", speed_accuracy=1.0, note="latency and correctness entangled")),
        "heavy_tail": (d("heavy_tail", "log-latency Student-t with 2.5 degrees of freedom", latency_df=2.5),
                       Misspec(note="heavy latency tail")),
        "bimodal": (d("bimodal", "30 % of decisions take a reasoning mode, log-latency +1.4",
                      task_types=tt(fast={"latency_median": 0.6}, slow={"latency_median": 3.0})),
                    Misspec("bimodal", mode_share=0.3, mode_shift=1.4, note="fast/reasoning latency mixture")),
        "timeouts": (d("timeouts", "the harness gives up (no action logged) at 1.6x / 1.5x the window close",
                       task_types=tt(fast={"give_up": 3.2}, slow={"give_up": 15.0})),
                     Misspec(note="give-up later than the window close")),
        "partial_fatality": (d("partial_fatality", "a missed window ends the episode with probability 0.4 / 0.7",
                               task_types=tt(fast={"fatality": 0.4, "latency_median": 1.1},
                                             slow={"fatality": 0.7, "latency_median": 5.0})),
                             Misspec(note="misses fatal only with probability f_k")),
        "clock_adaptive": (d("clock_adaptive", "under the wall clock the agent thinks less: log-latency -0.5, "
                             "logit P(correct) -0.8 (vs paused)",
                             task_types=tt(fast={"latency_median": 1.2}, slow={"latency_median": 6.0})),
                           Misspec("clock_adaptive", timed_log_latency=-0.5, timed_skill=-0.8,
                                   note="behaviour changes with the clock")),
        "tick_latency": (d("tick_latency", "step clock; latencies logged as the tick length, fallbacks carry "
                           "the timing", clocks=("paused", "step")),
                         Misspec("tick_latency", note="latency logged only as the tick length")),
        # the regime real benchmarks live in (docs/user-guide/simulate.md)
        "truncated": (d("truncated", "the log ends at the fatal decision: a miss is fatal with probability "
                        "0.6 / 1, a wrong action with 0.7; 6-10 decisions on fast",
                        task_types=tt(fast={"fatality": 0.6, "n_steps": (6, 10)})),
                      Misspec("truncated", truncate=True, wrong_fatality=0.7, log_ended=True, note="episodes end at the fatal decision")),
        "episode_effects": (d("episode_effects", "each episode has its own ability (logit SD 1) and slowness "
                              "(log-latency SD 0.5), correlated -0.7 / -0.4 / 0 by model"),
                            Misspec("episode_effects", episode_ability=1.0, episode_slowness=0.5,
                                    episode_rho=(-0.7, -0.4, 0.0), note="correlated episode-level effects")),
        "wall_only": (d("wall_only", "no paused runs: every episode under the wall clock", clocks=("wall",)),
                      Misspec(note="no paused runs")),
        "llm_latency": (d("llm_latency", "latency = a fixed overhead (0.5 x the median) plus a log-normal "
                          "generation time; thinking longer helps (logit +0.8 per SD)",
                          task_types=tt(fast={"latency_median": 0.5}, slow={"latency_median": 2.6})),
                        Misspec("llm_latency", latency_overhead=0.5, speed_accuracy=0.8,
                                note="overhead plus tokens over throughput")),
        "nonfatal_skip": (d("nonfatal_skip", "turn-based arena: 20-30 turns, a missed deadline skips the turn "
                            "(no action) and ends the episode with probability 0.08; a wrong move with 0.1",
                            task_types=tt(fast={"n_steps": (20, 30), "fatality": 0.08, "give_up": 2.0,
                                                "difficulty": -0.6},
                                          slow={"n_steps": (20, 30), "fatality": 0.08, "give_up": 10.0,
                                                "difficulty": -0.3})),
                          Misspec("truncated", truncate=True, wrong_fatality=0.1, log_ended=True, note="missed turns are no-ops")),
        "realistic": (d("realistic", "truncated at the fatal decision, correlated episode effects, overhead "
                        "latency with speed-accuracy, no paused runs",
                        clocks=("wall",), task_types=tt(fast={"fatality": 0.6, "n_steps": (6, 10), "latency_median": 0.6},
                                                        slow={"latency_median": 3.0})),
                      Misspec("realistic", truncate=True, wrong_fatality=0.7, log_ended=True, episode_ability=0.8,
                              episode_slowness=0.4, episode_rho=-0.5, latency_overhead=0.3, speed_accuracy=0.5,
                              note="several real-benchmark properties at once")),
        "agent_task": (_AGENT_TASK, Misspec(note="one long decision per episode with a per-task time limit")),
    }


#: misspecified presets: name -> (design, :class:`.misspec.Misspec`); ``simulate(name)`` accepts them
MISSPEC_PRESETS = _misspec_presets()
