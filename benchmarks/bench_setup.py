"""Model set-up time (graph build + compile/load of the log-density) for three data shapes, side by
side, in one process after a warm-up: the issue-11 target is one cold compile per machine and latency
family, then <= 10 s of set-up for any shape.

    .venv/bin/python benchmarks/bench_setup.py [--family normal] [--cold-first]
    .venv/bin/python benchmarks/bench_setup.py --backends [--family normal] [--preset truncated]

``--backends``: PyTensor's backends side by side from an empty compile cache (one fresh process and
compile directory each), on the model's log-density + gradient and on the expansion of a draw into every
variable: numba (the default), the C backend (``cvm``) and JAX where it is installed (``pip install jax``;
the model is frozen first, since JAX needs constant shapes). Each line: compile seconds (function + first
call), seconds per call (warm, 300 points) and the largest difference from numba's values.

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


BACKENDS = ("numba", "c", "jax")


def _backend_mode(name: str):
    from pytensor.compile.mode import Mode, get_mode

    return {"numba": get_mode("FAST_RUN"), "c": Mode(linker="cvm", optimizer="fast_run"),
            "jax": get_mode("JAX")}[name]


def _jax_value_and_grad(model, values):
    """The log-density in PyTensor's JAX backend, its gradient by JAX's autodiff, jitted together: how
    nutpie's JAX backend compiles a model (``gradient_backend="jax"``; PyTensor's symbolic gradient has
    shapes JAX cannot trace). Called like the other backends' functions: (logp, *gradients)."""
    import jax
    import pytensor

    jax.config.update("jax_enable_x64", True)
    fn = pytensor.function(values, model.logp(), mode="JAX", on_unused_input="ignore")
    inner = fn.vm.jit_fn._fun
    shared = [v.get_value() for v in fn.get_shared()]
    value_and_grad = jax.jit(jax.value_and_grad(lambda *xs: inner(*xs, *shared)[0], argnums=tuple(range(len(values)))))

    def call(*xs):
        lp, grads = value_and_grad(*xs)
        return [lp, *grads]

    return call


def backend_child(backend: str, what: str, family: str, preset: str, out: str) -> None:
    """In a fresh process with its own empty compile directory: compile ``what`` (``logp``: log-density and
    gradient; ``expand``: the draw's expansion) with ``backend`` and time it; the values at 20 points go to
    ``out`` (.npy) for the comparison."""
    import warnings

    # PyTensor's advice (link a BLAS; JAX skips the model's assertions) is not what is measured here
    warnings.simplefilter("ignore")
    import numpy as np
    import pytensor
    import pytensor.tensor as pt
    from pymc.model.transform.optimization import freeze_dims_and_data

    from rtanalysis.model.build import build_model
    from rtanalysis.model.data import aggregate
    from rtanalysis.simulate import simulate

    pytensor.config.numba__fastmath = False  # as the sampler compiles it
    lr = simulate(preset, seed=0).load()
    model = freeze_dims_and_data(build_model(aggregate(lr.episodes, lr.steps), family))
    values = [model.rvs_to_values[v] for v in model.free_RVs]
    if what == "logp":
        logp = model.logp()
        outputs = [logp, *pt.grad(logp, values)]
    else:
        outputs = [v for v in model.unobserved_value_vars if v not in values]
    point = model.initial_point()
    rng = np.random.default_rng(1)
    points = [[np.asarray(point[v.name]) + rng.normal(0, 0.1, np.shape(point[v.name])) for v in values]
              for _ in range(300)]
    t0 = time.perf_counter()
    try:
        if backend == "jax" and what == "logp":
            fn = _jax_value_and_grad(model, values)
        else:
            fn = pytensor.function(values, outputs, mode=_backend_mode(backend), on_unused_input="ignore")
        fn(*points[0])
    # JAX not installed, or an operation it cannot run (the t family: JAX's betainc has no gradient in
    # its shape parameters, which hold the degrees of freedom; a ValueError)
    except (ImportError, NotImplementedError, ValueError) as e:
        print(f"{backend:6s} {what:7s} not available: {type(e).__name__}: {str(e).splitlines()[0][:160]}")
        return
    t1 = time.perf_counter()
    for p in points:
        fn(*p)
    t2 = time.perf_counter()
    np.save(out, np.concatenate([np.concatenate([np.ravel(np.asarray(o)) for o in fn(*p)]) for p in points[:20]]))
    version = f"   (jax {__import__('jax').__version__})" if backend == "jax" else ""
    print(f"{backend:6s} {what:7s} compile {t1 - t0:7.1f} s   per call {(t2 - t1) / len(points) * 1e6:8.0f} us"
          f"{version}", flush=True)


def compare_backends(family: str, preset: str) -> None:
    """Each backend from its own empty compile directory: the log-density of ``family``'s model, then the
    expansion of ``family``'s model and of the other families' after it in the same directory (what a
    second model structure on a machine costs: numba compiles each graph whole, the C backend each
    operation once for every graph)."""
    import subprocess
    import tempfile

    import numpy as np

    from rtanalysis.model.families import NAMES

    print(f"backends from an empty compile cache: default structure, preset {preset}")
    with tempfile.TemporaryDirectory() as tmp:
        runs = [("logp", family, BACKENDS)] + [("expand", f, ("numba", "c"))
                                               for f in (family, *(f for f in NAMES if f != family))]
        for what, fam, backends in runs:
            for backend in backends:
                env = dict(os.environ, PYTENSOR_FLAGS=f"base_compiledir={tmp}/{backend}-{what}")
                out = f"{tmp}/{backend}-{what}-{fam}.npy"
                print(f"{fam:8s}", end=" ", flush=True)
                subprocess.run([sys.executable, __file__, "--child", backend, what, fam, preset, out],
                               env=env, check=True)
                if backend != "numba" and os.path.exists(out):
                    ref, got = np.load(f"{tmp}/numba-{what}-{fam}.npy"), np.load(out)
                    rel = np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1.0))
                    print(f"{'':24s} largest difference from numba: {rel:.1e} (relative, or absolute below 1)")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        backend_child(*argv[1:])
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", default="normal", choices=["normal", "t", "mixture"])
    ap.add_argument("--backends", action="store_true", help="PyTensor's backends side by side, from empty caches")
    ap.add_argument("--preset", default="truncated", help="the simulator preset of --backends")
    args = ap.parse_args(argv)
    if args.backends:
        compare_backends(args.family, args.preset)
        return 0
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
