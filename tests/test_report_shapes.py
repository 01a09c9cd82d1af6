"""Every shape of data runs: `rtanalysis report` on designs across the shapes real benchmarks have.

A property-based test (hypothesis, a bounded number of examples, derandomised so CI sees the
same designs) generates benchmarks across numbers of models, task types, clocks, windows,
time units, labels, single-episode models and items, all-success / all-fail cells and
constant-latency cells. For each, the report either exits 0 with every figure, table and the
written report, or stops with one clear line naming what is missing; no traceback ever.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rtanalysis.cli import main
from rtanalysis.simulate import simulate
from rtanalysis.simulate.design import Design, AgentSpec, TaskTypeSpec

pytestmark = pytest.mark.slow

CLOCK_SETS = {"paused": ("paused",), "wall": ("wall",), "step": ("step",), "mixed": ("paused", "wall", "step")}


def _task_type(i: int, unit: str, difficulty: float) -> TaskTypeSpec:
    if unit == "tokens":
        return TaskTypeSpec(f"type{i}_tok", difficulty=difficulty, latency_median=400, latency_sd=0.4,
                            windows=((0, 600, 1.0),), n_steps=(1, 3), fatality=0.6, time_unit="tokens", tick=600)
    return TaskTypeSpec(f"type{i}", difficulty=difficulty, latency_median=0.8, latency_sd=0.5,
                        windows=((0.0, 1.2, 1.0),), n_steps=(1, 3), fatality=1.0, tick=1.2)


def make_design(n_models: int, n_types: int, clocks: str, unit: str, labelled: bool, extreme: bool,
                single: bool) -> Design:
    units = [unit] * n_types if unit != "mixed" else ["s" if i % 2 == 0 else "tokens" for i in range(n_types)]
    # extreme: the first type is hopeless and the last trivially easy (all-fail / all-success cells)
    diffs = [0.0] * n_types
    if extreme:
        diffs[0] = -12.0
        diffs[-1] = 12.0 if n_types > 1 else diffs[-1]
    models = tuple(AgentSpec(f"m{j:02d}", skill=0.4 * np.sin(j), log_latency=0.2 * np.cos(j),
                             coverage=0.15 if (single and j == 0) else 1.0) for j in range(n_models))
    return Design("shape", models, tuple(_task_type(i, u, d) for i, (u, d) in enumerate(zip(units, diffs))),
                  clocks=CLOCK_SETS[clocks], n_tasks=1 if single else 3, seeds_per_task=1 if single else 2,
                  fallback_clocks=("step",), labelled=labelled)


def _rewrite(records: list[dict], windows: bool, constant_latency: bool) -> list[dict]:
    """Drop the windows, or log every acted latency as the tick (RealtimeGym seconds mode)."""
    for rec in records:
        for s in rec.get("steps") or []:
            if not windows:
                s.pop("window", None)
            if constant_latency and s.get("t_act") is not None:
                tick = 600 if rec.get("time_unit") == "tokens" else 1.2
                s["latency"] = tick
                s["t_act"] = round(s["t_obs"] + tick, 4)
                s.pop("tokens", None)
    return records


def write_logs(records: list[dict], path: Path) -> Path:
    with gzip.open(path, "wb") as fh:
        for rec in records:
            fh.write(orjson.dumps(rec) + b"\n")
    return path


def run_report(tmp: Path, capsys) -> tuple[int, str, Path]:
    out = tmp / "out"
    rc = main(["report", str(tmp / "logs.jsonl.gz"), "--out", str(out), "--draws", "40", "--tune", "40", "--chains", "1",
               "--seed", "1", "--quiet"])
    return rc, capsys.readouterr().err, out


def assert_complete_or_clear(rc: int, err: str, out: Path, must_complete: bool = True) -> None:
    assert "Traceback" not in err, err
    # every generated shape has at least one episode per model: the report must be written; only data
    # that cannot be analysed at all may stop, with one line saying why
    assert rc == 0 or not must_complete, err
    if rc != 0:
        lines = [ln for ln in err.strip().splitlines() if ln.strip()]
        assert rc == 2 and lines and lines[-1].startswith("rtanalysis report: error:"), err
        return
    assert (out / "report.md").stat().st_size > 0 and (out / "report.html").stat().st_size > 0
    figures = sorted((out / "figures").glob("*.png"))
    assert figures, "no figure written"
    for png in figures:
        assert png.with_suffix(".pdf").exists(), png
    assert list((out / "tables").glob("*.csv")) or list((out / "tables").glob("*.md"))
    text = (out / "report.md").read_text()
    for png in figures:  # every figure written is in the report, and every figure referenced exists
        assert png.stem in text, png.stem


shapes = st.fixed_dictionaries({
    "n_models": st.sampled_from([1, 2, 12, 60]),
    "n_types": st.sampled_from([1, 5]),
    "clocks": st.sampled_from(sorted(CLOCK_SETS)),
    "unit": st.sampled_from(["s", "tokens", "mixed"]),
    "labelled": st.booleans(),
    "extreme": st.booleans(),
    "single": st.booleans(),
    "windows": st.booleans(),
    "constant_latency": st.booleans(),
})


@settings(max_examples=6, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(shape=shapes)
# the shape of the public 58-model log that used to crash the report after the fit
@example(shape=dict(n_models=60, n_types=1, clocks="paused", unit="s", labelled=False, extreme=False, single=True,
                    windows=False, constant_latency=False))
# RealtimeGym seconds mode: every acted latency is the tick
@example(shape=dict(n_models=2, n_types=5, clocks="mixed", unit="mixed", labelled=True, extreme=True, single=False,
                    windows=True, constant_latency=True))
@example(shape=dict(n_models=1, n_types=1, clocks="step", unit="tokens", labelled=False, extreme=True, single=True,
                    windows=True, constant_latency=False))
def test_report_runs_on_every_shape(shape, tmp_path_factory, capsys):
    tmp = tmp_path_factory.mktemp("shape")
    design = make_design(shape["n_models"], shape["n_types"], shape["clocks"], shape["unit"], shape["labelled"],
                         shape["extreme"], shape["single"])
    sim = simulate(design, seed=7)
    write_logs(_rewrite(sim.records, shape["windows"], shape["constant_latency"]), tmp / "logs.jsonl.gz")
    rc, err, out = run_report(tmp, capsys)
    assert_complete_or_clear(rc, err, out)


REAL = Path(__file__).parent / "data" / "real"


@pytest.mark.parametrize("fixture", ["inspect", "response_slots/slots.csv", "realtimegym", "terminal_bench", "harbor",
                                     "llm_colosseum"])
def test_report_runs_on_every_real_fixture(fixture, tmp_path, capsys):
    """Logs the harnesses themselves wrote (tests/data/real/), at the defaults: the whole report, no
    traceback, and a fit that passes the diagnostics gate on the first attempt (no retry)."""
    pytest.importorskip("inspect_ai") if fixture == "inspect" else None
    out = tmp_path / "out"
    rc = main(["report", str(REAL / fixture), "--out", str(out), "--quiet"])
    assert_complete_or_clear(rc, capsys.readouterr().err, out)
    diagnostics = json.loads(next(out.rglob("diagnostics.json")).read_text())
    assert diagnostics["ok"] and not diagnostics.get("retried"), diagnostics
