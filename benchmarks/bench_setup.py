"""Model set-up time (graph build + compile/load of the log-density) for three data shapes, side by
side, in one process after a warm-up: the issue-11 target is one cold compile per machine and latency
family, then <= 10 s of set-up for any shape.

    .venv/bin/python benchmarks/bench_setup.py [--family normal] [--cold-first]

Shapes: the bundled example (6 models x 4 types, items), a leaderboard-like log (58 models x 1
type, paused clock only, 2-100 episodes per model) and the ``leaderboard60`` preset (60 x 4).
Each line: aggregate, build (PyMC graph), compile (PyTensor function from the cache, incl. the
first call) and the set-up total (build + compile), wall seconds, and the set-up's CPU seconds in
this process (a figure that does not depend on other load on the machine).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + os.path.abspath(".cache/pytensor"))


def leaderboard_log_like(seed: int = 58):
    """58 models, one task type, paused only, 2-100 episodes per model (the shape of a public log)."""
    import numpy as np

    from rtanalysis.simulate import simulate
    from rtanalysis.simulate.design import Design, AgentSpec
    from rtanalysis.simulate.presets import LONG_HORIZON

    rng = np.random.default_rng(seed)
    cover = np.round(np.linspace(0.02, 1.0, 58), 2)
    rng.shuffle(cover)
    skill = rng.normal(0.3, 0.8, 58)
    lat = 0.35 * (skill - 0.3) + rng.normal(0.0, 0.35, 58)
    models = tuple(AgentSpec(f"m{i:02d}", skill=float(skill[i]), log_latency=float(lat[i]),
                             coverage=float(cover[i])) for i in range(58))
    design = Design("log58", models, (LONG_HORIZON,), clocks=("paused",), n_tasks=20, seeds_per_task=5)
    return simulate(design, seed=seed).load()


def shapes():
    from rtanalysis import load
    from rtanalysis.simulate import simulate

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return {
        "example (6x4, items)": lambda: load(os.path.join(here, "data", "example")),
        "log58 (58x1 paused)": leaderboard_log_like,
        "leaderboard60 (60x4)": lambda: simulate("leaderboard60", seed=0).load(),
    }


def setup_seconds(lr, family: str) -> dict:
    from rtanalysis.model.build import build_model
    from rtanalysis.model.data import aggregate
    from rtanalysis.model.sampler import compile_model_c

    t0 = time.perf_counter()
    d = aggregate(lr.episodes, lr.steps)
    t1, c1 = time.perf_counter(), time.process_time()
    model = build_model(d, family)
    t2 = time.perf_counter()
    compile_model_c(model)
    t3, c3 = time.perf_counter(), time.process_time()
    return {"aggregate": t1 - t0, "build": t2 - t1, "compile": t3 - t2, "setup": t3 - t1, "cpu": c3 - c1,
            "dims": d.dims}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", default="normal", choices=["normal", "t", "mixture"])
    args = ap.parse_args(argv)
    data = {name: make() for name, make in shapes().items()}
    rows = []
    for name, lr in data.items():
        r = setup_seconds(lr, args.family)
        rows.append((name, r))
        print(f"{name:24s} aggregate {r['aggregate']:6.2f}  build {r['build']:6.2f}  compile {r['compile']:6.2f}"
              f"  set-up {r['setup']:6.2f} s (CPU {r['cpu']:5.2f} s)   dims {r['dims']}", flush=True)
    print(f"max set-up over shapes (after the first): {max(r['setup'] for _, r in rows[1:]):.2f} s "
          f"(target <= 10 s; family {args.family})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
