"""nutpie's NUTS on a log-density compiled by PyTensor's default backend, with its on-disk cache.

``nutpie.compile_pymc_model`` compiles the model into one numba function for its Rust side, which
costs minutes on a small machine and is not cached between processes. PyTensor's own compiled
functions are cached in ``compiledir`` (``PYTENSOR_FLAGS=base_compiledir=...``, set by the Makefile),
so here the log-density and its gradient are compiled by PyTensor and handed to nutpie's Rust
sampler as Python callables (``nutpie.compiled_pyfunc.from_pyfunc``; the route nutpie takes for
JAX). The chains share one compiled function behind a lock (PyTensor functions are not thread-safe;
a copy per chain cost ≈ 1 s each, and :func:`sample_chains` never runs two chains in one process).
Functions called once per draw rather than once per leapfrog step (a draw's expansion into every
variable) are compiled by PyTensor's C backend instead (:func:`once_per_draw_mode`).

Compiled without numba's fastmath: with it, vectorised reductions depend on memory alignment, the
log-density differs in the last bits between processes and NUTS amplifies that into different
draws; without it, same data and seed give bit-identical posteriors in any process.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
import warnings

import numpy as np

SAMPLERS = ("nutpie", "pymc", "numpyro")


def _layout(name: str, start: int, shape: tuple[int, ...]):
    """Where value variable ``name`` sits in the flat vector, as shared variables (not constants), so
    the compiled graph (and PyTensor's cache key) is the same for every data shape."""
    import pytensor

    return (pytensor.shared(np.int64(start), name=f"_start_{name}"),
            pytensor.shared(np.asarray(shape, dtype=np.int64), name=f"_shape_{name}"))


def _unflatten(joined, layout, ndim: int, size: int):
    import pytensor.tensor as pt

    start, shape = layout
    if ndim == 0:
        return joined[start]
    return pt.reshape(joined[start:start + size], shape, ndim=ndim)


def flat_functions(model, point_fn):
    """(n_dim, logp_dlogp_fn, expand_fn, names, shapes): the model's log-density and gradient on one flat
    vector of its unconstrained values, and the function that expands that vector into every value,
    deterministic and transformed variable. Unlike nutpie's ``_make_functions`` no shape is baked into
    the graph (offsets and shapes are shared variables, the data are ``pm.Data`` and the dims are the
    model's shared lengths): a dataset with another number of models, types or items reuses the
    compiled function from PyTensor's on-disk cache instead of compiling again (≈ 1-2 min)."""
    import pytensor
    import pytensor.tensor as pt
    from pytensor.graph import clone_replace, rewrite_graph

    point = point_fn(0)
    value_vars = [model.rvs_to_values[v] for v in model.free_RVs]
    names = [v.name for v in value_vars]
    shapes = [tuple(np.shape(point[n])) for n in names]
    sizes = [int(np.prod(s)) for s in shapes]
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    n_dim = int(starts[-1])
    joined = pt.dvector("_unconstrained_point")
    replacements = {}
    for v, name, shape, start, k in zip(value_vars, names, shapes, starts, sizes, strict=False):
        # slice stop = start + size, both symbolic
        st, sh = _layout(name, int(start), shape)
        ln = pytensor.shared(np.int64(k), name=f"_size_{name}")
        replacements[v] = _unflatten(joined, (st, sh), len(shape), ln).astype(v.dtype)
    layout = f"{names}|{[len(sh) for sh in shapes]}"
    raw_logp = model.logp()

    def logp_graph():
        logp = rewrite_graph(raw_logp, include=["canonicalize", "stabilize"])
        grad = pt.concatenate([pt.as_tensor(g).ravel() for g in pt.grad(logp, value_vars)])
        return clone_replace([logp, grad], replacements)

    remaining = [v for v in model.unobserved_value_vars if v.name not in names]

    def expand_graph():
        return clone_replace([replacements[v] for v in value_vars] + remaining, replacements)

    # keyed on the graph before rewrites and gradient (which are then skipped on a hit)
    flat = list(replacements.values())
    logp_fn = cached_function(model, [joined], logp_graph, [raw_logp, *flat], "logp" + layout)
    # called once per kept draw, not per leapfrog step: the C backend's slower call costs nothing there
    expand_fn = cached_function(model, [joined], expand_graph, [*remaining, *flat], "expand" + layout,
                                mode=once_per_draw_mode())
    return n_dim, logp_fn, expand_fn, names + [v.name for v in remaining], shapes


def _shared_inputs(outputs) -> dict | None:
    """{name: shared variable} of the graph's data; None when names are missing or repeat."""
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.traversal import graph_inputs

    shared = [v for v in graph_inputs(outputs) if isinstance(v, SharedVariable)]
    names = [v.name for v in shared]
    if None in names or len(set(names)) != len(names):
        return None
    return dict(zip(names, shared, strict=True))


def _graph_key(inputs, outputs, extra: str) -> str:
    """Hash of the graph's structure, types and constants (not the shared variables' values)."""
    import hashlib

    import pymc
    import pytensor
    from pytensor.printing import debugprint

    text = debugprint(list(outputs), file="str", print_type=True)
    meta = f"{pytensor.__version__}|{pymc.__version__}|{[str(i.type) for i in inputs]}|fastmath=" \
           f"{pytensor.config.numba__fastmath}|{extra}"
    return hashlib.sha256((meta + text).encode()).hexdigest()[:32]


def once_per_draw_mode():
    """The compile mode of functions called once per draw (the expansion of a draw into every variable,
    the power-scaling prior): PyTensor's C backend where a C compiler is configured, else its default
    (numba). Both cache compiled code per operation on disk, but numba also compiles each graph whole: for
    the expansion on ``truncated``, from empty caches, numba took 22 s for the first model and 7 s for
    each further latency family, the C backend 31 s and then 1.4-1.9 s (``benchmarks/bench_setup.py
    --backends``). A call costs about twice numba's (0.16-0.19 against 0.08-0.10 ms: under 1 s over
    4 x 1000 draws), and the values agree to 3e-15 (relative)."""
    import pytensor

    if not pytensor.config.cxx:
        return "FAST_RUN"
    from pytensor.compile.mode import Mode

    with warnings.catch_warnings():
        # looked up (once per process) by the C backend; without a BLAS to link PyTensor warns that matrix
        # products will be slow, and these functions have none worth one: the advice would be noise
        warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS", category=UserWarning)
        _ = pytensor.config.blas__ldflags
    return Mode(linker="cvm", optimizer="fast_run")


def _mode_key(mode) -> str:
    """What the cache key adds for ``mode``: nothing for the default (so caches written before stay valid),
    else the name of its linker (a ``Mode``'s text holds object ids)."""
    return "" if mode == "FAST_RUN" else f"|{type(mode.linker).__name__}"


def cached_function(model, inputs, make_outputs, key_outputs, key_extra: str, mode="FAST_RUN"):
    """``pymc.pytensorf.compile(inputs, make_outputs(), mode=mode)``, with the *rewritten* function kept on disk under
    PyTensor's compiledir, keyed by the structure of ``key_outputs`` (the graph before gradient and
    rewrites) and ``key_extra`` (the flat layout's names and ranks): the graph rewrites cost 10-30 s per
    compile even when numba's own cache has every kernel, and since the graph does not depend on the
    data's shape, the stored function is reused for any dataset, its shared variables (the data)
    re-bound by name. Falls back to compiling when the cache cannot be read or written."""
    import pickle

    import cloudpickle
    import pytensor
    from pymc.pytensorf import compile as compile_pymc

    shared = _shared_inputs(key_outputs)
    path = None
    if shared is not None:
        folder = pytensor.config.base_compiledir / "rtanalysis_graphs"
        path = folder / f"{_graph_key(inputs, key_outputs, key_extra + _mode_key(mode))}.pkl"
        if path in _LOADED:
            _rebind(_LOADED[path], shared)
            return _LOADED[path]
        if path.exists():
            try:
                with open(path, "rb") as fh:
                    fn = pickle.load(fh)
                _rebind(fn, shared)
                # kept for the next fit in this process: its own (unpickled) storage, so re-binding it
                # never touches another model's data
                _LOADED[path] = fn
                return fn
            except Exception as e:  # a stale or partial file: compile afresh and overwrite it
                warnings.warn(f"compiled-graph cache {path.name} not usable ({e}); compiling", RuntimeWarning,
                              stacklevel=2)
    with model:
        fn = compile_pymc(inputs, make_outputs(), mode=mode, on_unused_input="ignore")
    if path is not None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            with open(tmp, "wb") as fh:
                # cloudpickle: the gradient graph holds OpFromGraph closures plain pickle refuses
                cloudpickle.dump(fn, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except Exception:  # caching is an optimisation: an unpicklable function is still a function
            if os.environ.get("RTANALYSIS_DEBUG_CACHE"):
                import traceback

                traceback.print_exc()
            with contextlib.suppress(OSError):
                tmp.unlink()
    return fn


#: functions loaded from the on-disk cache in this process, by file, re-bound for each model. Loading
#: (or compiling) again would leak: PyTensor's numba backend registers every fused elementwise kernel as
#: a global numba overload that is never released (~20 MiB per fit of a small design, 9.5 GB after the
#: 200 fits of an SBC run; ``benchmarks/fit_memory.py``). Users of a returned function must be done with
#: it before the next :func:`cached_function` call for the same graph (:data:`FUNCTIONS_LOCK`).
_LOADED: dict = {}

#: held while a function from :func:`cached_function` is bound and in use, so that threads fitting
#: models of the same structure in one process take turns instead of re-binding each other's data
FUNCTIONS_LOCK = threading.RLock()


def _rebind(fn, shared: dict) -> None:
    """Point a loaded function's shared inputs at this model's data (matched by name)."""
    for spec, container in zip(fn.maker.inputs, fn.input_storage, strict=True):
        name = getattr(spec.variable, "name", None)
        if spec.shared and name is not None:
            if name not in shared:
                raise KeyError(f"shared variable {name!r} not in this model")
            value = shared[name].get_value(borrow=True)
            container.storage[0] = spec.variable.type.filter(value, strict=False)


#: L-BFGS iterations from each chain's jittered start before NUTS's warm-up (0: start from the
#: jittered point itself). On informative data the jittered prior-centred start lies far out in the
#: tail (benchmarks/warmup_trace.py), where nutpie's early step-size adaptation could collapse to ~0
#: and spend 1,023 leapfrog steps a draw for dozens of draws: at 10^6 episodes of ``leaderboard60``
#: one chain of four spent 52.6k warm-up steps against 17-19k (benchmarks/bench_init.py). On such
#: data the walk stops well short of the mode, so the chains still start apart (over-dispersed, as
#: R-hat needs), and not in a funnel's neck: group scales (``sd_*``) stay where the jitter put them.
INIT_OPTIMISE_STEPS = 100


def towards_mode(logp_grad, x0: np.ndarray, free: np.ndarray, steps: int = INIT_OPTIMISE_STEPS) -> np.ndarray:
    """``x0`` moved by at most ``steps`` L-BFGS iterations uphill on ``logp_grad(x) -> (logp, grad)``,
    over the coordinates where ``free`` is true only; ``x0`` itself when that does not improve it
    (or when its log-density is not finite). Deterministic: same start, same result."""
    from scipy.optimize import minimize

    if steps <= 0 or not free.any():
        return x0
    x = x0.copy()

    def negative(z):
        x[free] = z
        lp, grad = logp_grad(x)
        lp = float(lp)
        if not np.isfinite(lp) or not np.all(np.isfinite(grad)):
            return np.inf, np.zeros(free.sum())
        return -lp, -np.asarray(grad)[free]

    start, _ = negative(x0[free])
    if not np.isfinite(start):
        return x0
    with np.errstate(all="ignore"):
        res = minimize(negative, x0[free], jac=True, method="L-BFGS-B",
                       options={"maxiter": steps, "maxfun": 2 * steps})
    if not np.isfinite(res.fun) or res.fun >= start:
        return x0
    out = x0.copy()
    out[free] = res.x
    return out


def compile_model_c(model, init_steps: int | None = None):
    """A nutpie ``CompiledModel`` for ``model`` whose logp/gradient are PyTensor functions (its default
    backend, with the on-disk cache), loaded here so that forked chains inherit them ready to run.
    Each chain starts from its jittered initial point moved uphill by at most
    :data:`INIT_OPTIMISE_STEPS` (or ``init_steps``) L-BFGS iterations (:func:`towards_mode`)."""
    # private nutpie API (the public compile_pymc_model does not use PyTensor's compiled functions and
    # their on-disk cache): nutpie is capped below 0.17 in pyproject.toml and
    # tests/test_nutpie_private.py checks the contract used here
    from nutpie.compile_pymc import _prepare_dims_and_coords
    from nutpie.compiled_pyfunc import from_pyfunc
    from pymc.initial_point import make_initial_point_fn

    # a variable given a starting value (a family's ``initial``) keeps it: only the others are jittered
    point_fn = make_initial_point_fn(model=model, default_strategy="support_point", return_transformed=True,
                                     jitter_rvs={v for v in model.free_RVs if model.rvs_to_initial_values.get(v) is None})

    lock = threading.Lock()
    import pytensor

    # set for the process, not in a context: numba compiles lazily, at the first call
    pytensor.config.numba__fastmath = False
    n_dim, logp_fn_pt, expand_fn_pt, names, free_shapes = flat_functions(model, point_fn)
    free_names = names[:len(free_shapes)]

    steps = INIT_OPTIMISE_STEPS if init_steps is None else init_steps
    # the group scales stay fixed on the walk uphill: a joint mode of a centred hierarchy can sit
    # at scale → 0 (a funnel's neck), the worst place to start NUTS
    fixed = np.concatenate([np.full(int(np.prod(s)), n.startswith("sd_")) for n, s in zip(free_names, free_shapes,
                                                                                           strict=True)])

    def initial_point_fn(seed):
        with lock:
            p = point_fn(seed)
        x0 = np.concatenate([np.asarray(p[n], dtype="float64").ravel() for n in free_names])
        with logp_lock:
            return towards_mode(logp_fn_pt, x0, ~fixed, steps)

    with np.errstate(all="ignore"):  # numba loads or compiles at the first call: do it once, here
        logp_fn_pt(np.zeros(n_dim))
        first = expand_fn_pt(np.zeros(n_dim))
    shapes = [tuple(np.shape(v)) for v in first]
    dtypes = [np.dtype("float64")] * len(names)
    sizes = np.cumsum([0] + [int(np.prod(s)) for s in shapes])
    slices = [slice(int(a), int(b)) for a, b in zip(sizes[:-1], sizes[1:], strict=True)]
    reparam = [model.rvs_to_values[v].name for v in model.free_RVs if model.rvs_to_transforms.get(v) is not None]

    logp_lock, expand_lock = threading.Lock(), threading.Lock()

    def make_logp_func():
        fn = logp_fn_pt

        def logp(x, **_):
            with logp_lock:
                lp, grad = fn(x)
                return float(lp), np.array(grad, dtype="float64", order="C")

        return logp

    def make_expand_func(seed1, seed2, chain):
        fn = expand_fn_pt

        def expand(x, **_):
            with expand_lock:
                return {n: np.array(v, order="C", dtype=t).reshape(s)
                        for n, v, t, s in zip(names, fn(x), dtypes, shapes, strict=True)}

        return expand

    dims, coords = _prepare_dims_and_coords(model, (names, slices, shapes), reparam)
    return from_pyfunc(ndim=n_dim, make_logp_fn=make_logp_func, make_expand_fn=make_expand_func,
                       make_initial_point_fn=initial_point_fn, expanded_dtypes=dtypes, expanded_shapes=shapes,
                       expanded_names=names, dims=dims, coords=coords, reparameterized_names=reparam)


def chain_seed(seed: int, chain: int) -> int:
    """The seed of chain ``chain``: a function of (seed, chain) only."""
    return int(np.random.SeedSequence([int(seed), int(chain)]).generate_state(1)[0])


# set in the parent before the fork; the workers inherit it (a compiled model does not pickle)
_JOB: dict = {}


#: the group of nutpie's result that holds the warm-up's draws (dropped: ``_run_chain``)
WARMUP_DRAWS = "warmup_posterior"


def _run_chain(chain: int):
    import nutpie

    job = _JOB
    progress = job.get("progress")

    def report(chains):
        if progress is not None and chains:
            progress[chain] = int(chains[0].finished_draws)

    tree = nutpie.sample(job["compiled"], draws=job["draws"], tune=job["tune"], chains=1, cores=1,
                         seed=chain_seed(job["seed"], chain), progress_bar=False, progress_callback=report,
                         progress_rate=250, **job.get("options", {}))
    # the warm-up's draws are not the posterior and nothing reads them (its sample stats, which say how the
    # tuning went, stay): as large as the draws, they doubled what each chain sends back and the fit holds
    if WARMUP_DRAWS in tree.children:
        del tree[WARMUP_DRAWS]
    return tree


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _jax_started() -> bool:
    """Whether JAX has started a backend in this process (the numpyro sampler ran): its threads would be
    orphaned by a fork (JAX warns of deadlocks), so the chains then run one after another. Merely
    imported (nutpie imports it when installed), it has no threads yet."""
    bridge = sys.modules.get("jax._src.xla_bridge")
    return bool(getattr(bridge, "_backends", None))


def can_fork() -> bool:
    """Whether work may go to forked worker processes here: the platform forks (Linux; macOS's fork is
    unsafe with its system libraries) and JAX has not started threads a fork would orphan."""
    import multiprocessing as mp

    return "fork" in mp.get_all_start_methods() and sys.platform != "darwin" and not _jax_started()


def _merge_chains(trees):
    """One DataTree from single-chain DataTrees, chains numbered 0..n-1."""
    import xarray as xr

    groups = {}
    for name in list(trees[0].children):
        parts = [t[name].to_dataset() for t in trees]
        merged = xr.concat(parts, dim="chain", combine_attrs="override")
        groups[name] = merged.assign_coords(chain=np.arange(len(trees)))
        del parts
        for t in trees:  # each chain's copy of the group goes as soon as it is merged: one group held twice, not all
            del t[name]
    return xr.DataTree.from_dict(groups)


def sample_chains(compiled, draws: int, tune: int, chains: int, seed: int, cores: int | None = None,
                  progress: bool = False, options: dict | None = None):
    """``chains`` single-chain nutpie runs, in parallel over forked processes where the platform forks
    (Linux) and JAX has not started, one after another otherwise; with ``progress``, one bar over all
    chains' iterations. ``options``: more keyword arguments of ``nutpie.sample`` (``target_accept``,
    ``adaptation``, ...)."""
    import multiprocessing as mp

    cores = min(chains, cores or usable_cores())
    parallel = cores > 1 and can_fork()
    cores = cores if parallel else 1
    ctx = mp.get_context("fork") if parallel else None
    counts = ctx.Array("q", chains, lock=False) if parallel else [0] * chains
    _JOB.update(compiled=compiled, draws=draws, tune=tune, seed=seed, progress=counts, options=dict(options or {}))
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=chains * (draws + tune), desc=f"sampling {chains} chains on {cores} core(s)",
                   unit="it", leave=False)
    try:
        if not parallel:
            trees = []
            for c in range(chains):
                trees.append(_run_chain(c))
                if bar is not None:
                    bar.update(draws + tune)
        else:
            with warnings.catch_warnings():
                # 3.12 warns on fork in a threaded process (Jupyter); the workers only sample
                warnings.filterwarnings("ignore", message=".*use of fork\\(\\) may lead to deadlocks.*")
                with ctx.Pool(cores) as pool:
                    pending = pool.map_async(_run_chain, range(chains), chunksize=1)
                    while not pending.ready():
                        pending.wait(0.5)
                        if bar is not None:
                            bar.update(sum(counts) - bar.n)
                    trees = pending.get()
    finally:
        _JOB.clear()
        if bar is not None:
            bar.close()
    return _merge_chains(trees)


def sample_model(model, draws: int, tune: int, chains: int, seed: int, sampler: str, progress: bool,
                 timings: dict | None = None, target_accept: float | None = None, adaptation: str | None = None,
                 reuse: dict | None = None):
    """Run NUTS: ``nutpie`` (default; its Rust sampler on a disk-cached PyTensor log-density,
    :func:`compile_model_c` and :func:`sample_chains`), PyMC's own ``pymc`` sampler, or ``numpyro`` (JAX; optional, the ``bench`` extra).
    Seeded: same seed, same draws. ``adaptation``: nutpie's mass-matrix adaptation (``"low_rank"`` learns the
    posterior's strongest correlations too; default: diagonal). ``reuse``: a dict the caller keeps between
    two samplings of ``model`` with nothing fitted in between (the gate's retry): the second takes the first's
    compiled model from it instead of setting it up again. Only then: the compiled functions are shared by
    every model of the same graph, and another fit in between re-binds them to its own data."""
    import pymc as pm

    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    if sampler == "nutpie":
        with FUNCTIONS_LOCK:
            t0 = time.time()
            compiled = (reuse or {}).get("compiled") or compile_model_c(model)
            if reuse is not None:
                reuse["compiled"] = compiled
            t1 = time.time()
            if progress:
                print(f"sampling {chains} chains x {draws} draws ({tune} tuning)...", file=sys.stderr)
            opts = {} if target_accept is None else {"target_accept": target_accept}
            if adaptation is not None:
                opts["adaptation"] = adaptation
            idata = sample_chains(compiled, draws=draws, tune=max(tune, 1), chains=chains, seed=seed,
                                  progress=progress, options=opts)
        if timings is not None:  # graph set-up and (cached) compilation apart from sampling
            timings["compile_seconds"] = round(t1 - t0, 2)
            timings["sampling_only_seconds"] = round(time.time() - t1, 2)
        return idata
    if sampler == "numpyro":
        try:
            import numpyro  # noqa: F401
        except ImportError:
            raise ValueError("sampler 'numpyro' needs jax and numpyro: pip install -e '.[bench]'") from None
    cores = min(chains, usable_cores())
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*number of samples is too small.*")
        kw = {"chain_method": "sequential"} if sampler == "numpyro" else {}
        extra = {} if target_accept is None else {"target_accept": target_accept}
        return pm.sample(draws=draws, tune=tune, chains=chains, cores=cores, random_seed=seed, **extra,
                         nuts_sampler=sampler, progressbar=progress, model=model, compute_convergence_checks=False,
                         **({"nuts_sampler_kwargs": kw} if kw else {}))
