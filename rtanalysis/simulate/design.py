"""The design of a simulated realtime benchmark: models, task types, clocks and sizes.

All effects are on interpretable scales: content correctness on the logit scale, latency on the
log scale (a model's ``log_latency`` of +0.69 doubles its median latency on every task type).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Mapping

from .. import schema

#: latency and window grid per time unit: logged latencies are whole multiples of it
QUANTUM = {"s": 1e-4, "tokens": 1.0}


@dataclass(frozen=True)
class AgentSpec:
    """One system under test.

    * ``skill``: logit effect on content correctness (higher = more capable).
    * ``log_latency``: added to every task type's log median latency (higher = slower).
    * ``silence``: probability that a timed decision gets no action at all.
    * ``coverage``: share of the design's (task, seed) units this model was run on (a nested random
      subset shared by all models, so low-coverage models stay paired with the rest).
    """

    name: str
    skill: float = 0.0
    log_latency: float = 0.0
    silence: float = 0.0
    coverage: float = 1.0


@dataclass(frozen=True)
class TaskTypeSpec:
    """One task family (the unit the hierarchical model pools over).

    * ``difficulty``: logit effect subtracted from every model's skill.
    * ``latency_median``: median latency of a model with ``log_latency = 0`` on an average item, in
      ``time_unit``; ``latency_sd``: SD of log latency.
    * ``windows``: ``(open, close, weight)`` validity windows relative to ``t_obs``; each decision draws
      one by weight (so ``sudden_disturbance`` mixes calm long windows with rare short ones).
    * ``n_steps``: decisions per episode, an int or an inclusive ``(low, high)`` range drawn per episode.
    * ``fatality``: probability that a missed window fails the episode (1 = every miss is fatal).
    * ``tick``: step-clock period; a task type with a tick also runs under the ``step`` clock when the
      design lists it, with window ``[0, tick]``.
    * ``give_up``: latency beyond which the harness stops waiting: no action (``t_act`` null).
    """

    name: str
    difficulty: float = 0.0
    latency_median: float = 1.0
    latency_sd: float = 0.5
    windows: tuple[tuple[float, float, float], ...] = ((0.0, 2.0, 1.0),)
    n_steps: int | tuple[int, int] = 5
    fatality: float = 1.0
    time_unit: str = "s"
    tick: float | None = None
    give_up: float | None = None

    @property
    def steps_range(self) -> tuple[int, int]:
        return (self.n_steps, self.n_steps) if isinstance(self.n_steps, int) else tuple(self.n_steps)

    @property
    def max_close(self) -> float:
        closes = [w[1] for w in self.windows] + ([self.tick] if self.tick is not None else [])
        return max(closes)


@dataclass(frozen=True)
class Design:
    """A benchmark design: models × task types × clocks × tasks × seeds, fully paired.

    * ``n_tasks``: items per task type; ``seeds_per_task``: environment seeds per item. Every model runs the
      same (task, seed) units under every clock (up to its ``coverage``).
    * ``sd_item`` / ``sd_step``: SD of item (task) and decision difficulty (logit), shared across models.
    * ``sd_model_task``: SD of the model × task-type interaction (logit); ``interactions`` adds fixed
      ``{(model, task_type): logit}`` effects on top.
    * ``latency_item_coef``: log-latency added per logit unit of item/decision difficulty (> 0: hard
      items are both slower and more often wrong).
    * ``latency_df``: Student-t degrees of freedom of log latency (None: normal, i.e. lognormal latency).
    * ``fallback_clocks``: clocks under which a late decision plays a default action (``fallback``).
    * ``labelled``: log ``correct_at_obs`` and ``valid_at_exec``; when false only success, latencies and
      windows remain.
    """

    name: str
    models: tuple[AgentSpec, ...]
    task_types: tuple[TaskTypeSpec, ...]
    clocks: tuple[str, ...] = ("paused", "wall")
    n_tasks: int = 12
    seeds_per_task: int = 5
    sd_item: float = 0.5
    sd_step: float = 0.2
    sd_model_task: float = 0.3
    interactions: Mapping[tuple[str, str], float] = field(default_factory=dict)
    latency_item_coef: float = 0.0
    latency_df: float | None = None
    fallback_clocks: tuple[str, ...] = ("step",)
    labelled: bool = True
    description: str = ""

    def __post_init__(self):
        check_design(self)

    def with_(self, **overrides) -> "Design":
        """A copy with some fields replaced (``tasks``/``seeds`` are accepted as short names)."""
        if "tasks" in overrides:
            overrides["n_tasks"] = overrides.pop("tasks")
        if "seeds" in overrides:
            overrides["seeds_per_task"] = overrides.pop("seeds")
        return replace(self, **overrides)

    def to_dict(self) -> dict:
        """The design as plain data (JSON-ready: ``interactions`` as ``[model, task_type, logit]`` rows)."""
        d = asdict(self)
        d["interactions"] = [[m, k, v] for (m, k), v in sorted(self.interactions.items())]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Design":
        """Inverse of :meth:`to_dict` (e.g. the ``design`` of a written ``design.json``)."""
        d = dict(d)
        d["models"] = tuple(AgentSpec(**m) for m in d["models"])
        d["task_types"] = tuple(
            TaskTypeSpec(**{**t, "windows": tuple(tuple(w) for w in t["windows"]),
                            "n_steps": t["n_steps"] if isinstance(t["n_steps"], int) else tuple(t["n_steps"])})
            for t in d["task_types"])
        d["interactions"] = {(m, k): v for m, k, v in d.get("interactions", [])}
        for name in ("clocks", "fallback_clocks"):
            if name in d:
                d[name] = tuple(d[name])
        return cls(**d)

    def timed_clocks(self, tt: TaskTypeSpec) -> tuple[str, ...]:
        return tuple(c for c in self.clocks_for(tt) if c in schema.TIMED_CLOCKS)

    def clocks_for(self, tt: TaskTypeSpec) -> tuple[str, ...]:
        return tuple(c for c in self.clocks if c != "step" or tt.tick is not None)


def _fail(what: str, why: str):
    raise ValueError(f"design: {what}: {why}")


def check_design(d: Design) -> None:
    """Reject a design that cannot be simulated, naming the offending field."""
    if not d.models:
        _fail("models", "at least one model is required")
    if not d.task_types:
        _fail("task_types", "at least one task type is required")
    for names, what in (([m.name for m in d.models], "models"), ([t.name for t in d.task_types], "task_types")):
        if len(set(names)) != len(names):
            _fail(what, "names must be unique")
    for c in d.clocks:
        if c not in schema.CLOCKS:
            _fail("clocks", f"unknown clock {c!r} (known: {', '.join(schema.CLOCKS)})")
    if d.n_tasks < 1 or d.seeds_per_task < 1:
        _fail("n_tasks/seeds_per_task", "must be >= 1")
    if d.latency_df is not None and not d.latency_df > 0:
        _fail("latency_df", "must be > 0 or None")
    for m in d.models:
        if not 0 <= m.silence < 1:
            _fail(f"models[{m.name}].silence", "must be in [0, 1)")
        if not 0 < m.coverage <= 1:
            _fail(f"models[{m.name}].coverage", "must be in (0, 1]")
    for t in d.task_types:
        where = f"task_types[{t.name}]"
        if t.time_unit not in QUANTUM:
            _fail(f"{where}.time_unit", f"must be one of {', '.join(QUANTUM)}")
        lo, hi = t.steps_range
        if not 1 <= lo <= hi:
            _fail(f"{where}.n_steps", "must be >= 1 (a range as (low, high) with low <= high)")
        if not t.windows:
            _fail(f"{where}.windows", "at least one window is required")
        for w in t.windows:
            if len(w) != 3 or not 0 <= w[0] <= w[1] or not w[2] > 0:
                _fail(f"{where}.windows", f"each must be (open, close, weight>0) with 0 <= open <= close, got {w}")
        if not 0 <= t.fatality <= 1:
            _fail(f"{where}.fatality", "must be in [0, 1]")
        if not (t.latency_median > 0 and t.latency_sd > 0):
            _fail(f"{where}.latency_median/latency_sd", "must be > 0")
        if t.tick is not None and not t.tick > 0:
            _fail(f"{where}.tick", "must be > 0")
        if t.give_up is not None and t.give_up < t.max_close:
            _fail(f"{where}.give_up", f"must be >= every window close ({t.max_close})")
        q = QUANTUM[t.time_unit]
        for v in [x for w in t.windows for x in w[:2]] + [t.tick or 0.0, t.give_up or 0.0]:
            if abs(v / q - round(v / q)) > 1e-6:
                _fail(where, f"window/tick/give_up values must be multiples of {q} {t.time_unit}, got {v}")
    known_m = {m.name for m in d.models}
    known_t = {t.name for t in d.task_types}
    for (m, k), v in d.interactions.items():
        if m not in known_m or k not in known_t or not math.isfinite(v):
            _fail("interactions", f"unknown model/task type or non-finite value in {(m, k)}: {v}")
