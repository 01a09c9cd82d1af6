"""The public entry point: :func:`simulate` and the :class:`Simulation` it returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path

import orjson
import pandas as pd

from .. import schema
from ..io import EpisodeSink, LoadResult
from .design import Design
from .engine import simulate_arrays, truth_table
from .misspec import Misspec, simulate_misspec_arrays
from .output import build_records, write_jsonl_gz
from .presets import MISSPEC_PRESETS, PRESETS

LOG_NAME = "episodes.jsonl.gz"
TRUTH_NAME = "truth.csv"
DESIGN_NAME = "design.json"


@dataclass
class Simulation:
    """One simulated benchmark: the design, its seed, the logs and the known truth.

    ``truth``: one row per model × task type × timed clock (see
    :func:`~rtanalysis.simulate.engine.truth_table`). ``episodes`` / ``decisions``: the latent per-episode and
    per-decision values (capable, fatal miss, exact probabilities) behind the logs, for checks against
    observed rates.
    """

    design: Design
    seed: int
    arrays: dict = field(repr=False)
    truth: pd.DataFrame = field(repr=False)

    @property
    def run_id(self) -> str:
        return f"sim-{self.design.name}-seed{self.seed}"

    @cached_property
    def records(self) -> list[dict]:
        """rtlog v1 episode dicts, valid as generated."""
        return build_records(self.design, self.arrays, self.run_id)

    @cached_property
    def episodes(self) -> pd.DataFrame:
        """One row per episode: its cell, logged length ``n_steps`` (where the log ends at the fatal
        decision, ``n_steps_natural`` is the length it would have had), latent outcomes and exact
        probabilities."""
        ep = self.arrays["episodes"]
        tts = self.design.task_types
        natural = {"n_steps_natural": ep["n_steps_natural"]} if "n_steps_natural" in ep else {}
        return pd.DataFrame({
            "model": pd.array([self.design.models[i].name for i in ep["model"]], dtype="str"),
            "task_type": pd.array([tts[i].name for i in ep["k"]], dtype="str"),
            "task": pd.array([f"{tts[k].name}-{t:02d}" for k, t in zip(ep["k"], ep["task"])], dtype="str"),
            "seed": ep["seed"],
            "clock": pd.array([schema.CLOCKS[i] for i in ep["clock"]], dtype="str"),
            "n_steps": ep["n_steps"],
            **natural,
            "capable": ep["capable"],
            "fatal_miss": ep["fatal_miss"],
            "success": ep["success"],
            "p_capable": ep["p_capable"],
            "p_timely": ep["p_timely"],
            "p_success": ep["p_success"],
        })

    @cached_property
    def decisions(self) -> pd.DataFrame:
        d = self.arrays["decisions"]
        keys = ["episode", "step", "p_correct", "correct", "silent", "early", "late", "fatal", "fallback",
                "p_on_time", "p_early", "p_late", "p_silent"]
        out = pd.DataFrame({k: d[k] for k in keys})
        out["latency"] = d["lat_q"] * d["q"]
        ep = self.episodes
        for k in ("model", "task_type", "clock"):
            out.insert(1, k, ep[k].to_numpy()[d["episode"]])
        return out

    def write(self, out_dir) -> dict[str, Path]:
        """Write ``episodes.jsonl.gz``, ``truth.csv`` and ``design.json`` to ``out_dir``; same seed, same bytes."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"episodes": write_jsonl_gz(self.records, out / LOG_NAME), "truth": out / TRUTH_NAME,
                 "design": out / DESIGN_NAME}
        self.truth.to_csv(paths["truth"], index=False, float_format="%.10g", lineterminator="\n")
        meta = {"seed": self.seed, "run_id": self.run_id, "design": self.design.to_dict()}
        paths["design"].write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2) + b"\n")
        return paths

    def load(self) -> LoadResult:
        """The logs as tidy tables, validated through :class:`~rtanalysis.io.EpisodeSink` (no disk)."""
        sink = EpisodeSink()
        name = f"<simulate:{self.run_id}>"
        sink.open_file(name)
        for i, rec in enumerate(self.records, start=1):
            sink.add(rec, name, i)
        return sink.finish()

    def summary(self) -> str:
        n_dec = len(self.arrays["decisions"]["step"])
        ep = self.arrays["episodes"]
        return (f"simulated {self.design.name!r} seed {self.seed}: {len(ep['model'])} episodes, {n_dec} decisions, "
                f"{len(self.design.models)} models x {len(self.design.task_types)} task types x "
                f"{len(self.design.clocks)} clocks; success rate {ep['success'].mean():.3f}")



@dataclass
class MisspecSimulation(Simulation):
    """A :class:`Simulation` of a misspecified preset (:mod:`.misspec`): ``truth`` is by Monte Carlo,
    ``counterfactual_truth`` holds p_success at λ and ``as:<model>``."""

    misspec: Misspec = field(default_factory=Misspec)
    counterfactual_truth: pd.DataFrame = field(default=None, repr=False)
    preset: str = ""

    @property
    def run_id(self) -> str:
        return f"sim-{self.preset or self.design.name}-seed{self.seed}"

    def write(self, out_dir) -> dict[str, Path]:
        paths = super().write(out_dir)
        meta = orjson.loads(paths["design"].read_bytes())
        meta["misspec"] = asdict(self.misspec)
        paths["design"].write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2) + b"\n")
        paths["counterfactual_truth"] = Path(out_dir) / "counterfactual_truth.csv"
        self.counterfactual_truth.to_csv(paths["counterfactual_truth"], index=False, float_format="%.10g",
                                         lineterminator="\n")
        return paths


def simulate_misspec(design: Design, spec: Misspec, seed: int = 0, reps: int = 400,
                     preset: str = "") -> MisspecSimulation:
    """Simulate ``design`` with the outcome process ``spec``; same inputs, same records and truth."""
    arrays, truth, cft = simulate_misspec_arrays(design, spec, seed, reps)
    return MisspecSimulation(design=design, seed=seed, arrays=arrays, truth=truth, misspec=spec,
                             counterfactual_truth=cft, preset=preset)


def simulate(design: str | Design = "mixed", seed: int = 0, **overrides) -> Simulation:
    """Simulate a benchmark with known truth.

    ``design``: a preset name (see :data:`~rtanalysis.simulate.presets.PRESETS`) or a
    :class:`~rtanalysis.simulate.Design`; ``overrides`` replace design fields (``tasks=``/``seeds=`` are short
    for ``n_tasks``/``seeds_per_task``). The same design and seed give identical records, truth and files.
    """
    if isinstance(design, str) and design in MISSPEC_PRESETS:  # misspecified generators (simulate/misspec.py)
        base, spec = MISSPEC_PRESETS[design]
        return simulate_misspec(base.with_(**overrides) if overrides else base, spec, seed, preset=design)
    if isinstance(design, str):
        if design not in PRESETS:
            raise ValueError(f"unknown preset {design!r}; known: {', '.join(PRESETS)}")
        design = PRESETS[design]
    if overrides:
        design = design.with_(**overrides)
    arrays = simulate_arrays(design, seed)
    return Simulation(design=design, seed=seed, arrays=arrays, truth=truth_table(design, arrays))
