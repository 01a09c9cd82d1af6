"""Simulated realtime benchmarks with known truth: ``simulate(preset_or_design, seed)``.

A :class:`Design` crosses models × task types × clocks × tasks × seeds, paired (every model runs
the same (task, seed) units under every clock). Per decision: content correctness on the logit
scale (model skill − task-type difficulty − model × task-type − item − decision effects), latency
lognormal (or Student-t on the log scale) with model and task-type effects (optionally slower on
harder items), a validity window ``[open, close]`` per decision (late-opening windows punish early
answers), silence (per-model probability, or latency beyond a give-up time), and a default action
(``fallback``) for late decisions under the step clock. An episode succeeds when every decision is
content-correct and no missed window is fatal (a miss is fatal with probability
``fatality[task_type]``); under ``paused`` nothing can miss.

The truth table (one row per model × task type × timed clock) is exact, computed from the known
probabilities of the realised items: ``p_capable, p_timely, p_success, share_timing`` (the model's
decomposition; ``p_success = p_capable · p_timely``) and decision-level ``p_on_time, p_early,
p_late, p_silent, median_latency``.

Presets (``PRESETS``; ``docs/user-guide/simulate.md`` has the calibrated success rates):

=========================  ======  ==========  =========================================================
preset                     models  task types  what it stresses
=========================  ======  ==========  =========================================================
high_frequency             4       2           8–12 decisions, 1 s windows; a token-unit step-clock twin
long_horizon               4       2           2–3 decisions, 10–15 s windows, a 30 s give-up
sudden_disturbance         4       2           calm 8 s windows with occasional 1.2–1.5 s ones
adversarial_interruption   4       2           windows that open late (0.6–1.2 s): too early fails
timing_dominated           4       4           high skill, tight windows: failures mostly timing
capability_dominated       4       4           generous windows, hard content: failures mostly capability
mixed                      6       4           the example: six speed/skill trade-offs, four families,
                                               paused + wall + step (high_frequency)
leaderboard60              60      4           60 models, coverage 15–100 % (unbalanced), 10×3 units
=========================  ======  ==========  =========================================================

CLI (:mod:`rtanalysis.simulate.cli`): ``rtanalysis simulate --preset NAME --out DIR --seed S [--tasks N --seeds N --unlabelled]``.
"""

from .core import Simulation, simulate
from .design import Design, AgentSpec, TaskTypeSpec
from .presets import PRESETS

__all__ = ["Design", "AgentSpec", "TaskTypeSpec", "PRESETS", "Simulation", "simulate"]
