"""nutpie's NUTS on a log-density compiled by PyTensor's default backend, with its on-disk cache.

``nutpie.compile_pymc_model`` compiles the model into one numba function for its Rust side, which
costs minutes on a small machine and is not cached between processes. PyTensor's own compiled
functions are cached in ``compiledir`` (``PYTENSOR_FLAGS=base_compiledir=...``, set by the Makefile),
so here the log-density and its gradient are compiled by PyTensor and handed to nutpie's Rust
sampler as Python callables (``nutpie.compiled_pyfunc.from_pyfunc``; the route nutpie takes for
JAX). The chains share one compiled function behind a lock (PyTensor functions are not thread-safe;
a copy per chain cost ≈ 1 s each, and :func:`sample_chains` never runs two chains in one process).

Compiled without numba's fastmath: with it, vectorised reductions depend on memory alignment, the
log-density differs in the last bits between processes and NUTS amplifies that into different
draws; without it, same data and seed give bit-identical posteriors in any process.
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np

SAMPLERS = ("nutpie", "pymc", "numpyro")


def compile_model_c(model):
    """A nutpie ``CompiledModel`` for ``model`` whose logp/gradient are PyTensor functions (its default
    backend, with the on-disk cache), loaded here so that forked chains inherit them ready to run."""
    # private nutpie API (the public compile_pymc_model has no PyTensor C backend): nutpie is capped
    # below 0.17 in pyproject.toml and tests/test_nutpie_private.py checks the contract used here
    from nutpie.compile_pymc import _make_functions, _prepare_dims_and_coords
    from nutpie.compiled_pyfunc import from_pyfunc
    from pymc.initial_point import make_initial_point_fn

    point_fn = make_initial_point_fn(model=model, default_strategy="support_point",
                                     jitter_rvs=set(model.free_RVs), return_transformed=True)
    import threading

    lock = threading.Lock()

    def locked_point_fn(seed):
        with lock:
            return point_fn(seed)

    import pytensor

    # set for the process, not in a context: numba compiles lazily, at the first call
    pytensor.config.numba__fastmath = False
    n_dim, _, logp_fn_pt, expand_fn_pt, initial_point_fn, shape_info, reparam = _make_functions(
        model, mode="FAST_RUN", compute_grad=True, join_expanded=False,
        pymc_initial_point_fn=locked_point_fn)
    names, _, shapes = shape_info
    dtypes = [np.dtype("float64")] * len(names)
    with np.errstate(all="ignore"):  # numba loads or compiles at the first call: do it once, here
        logp_fn_pt(np.zeros(n_dim))
        expand_fn_pt(np.zeros(n_dim))

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

    dims, coords = _prepare_dims_and_coords(model, shape_info, reparam)
    return from_pyfunc(ndim=n_dim, make_logp_fn=make_logp_func, make_expand_fn=make_expand_func,
                       make_initial_point_fn=initial_point_fn, expanded_dtypes=dtypes, expanded_shapes=shapes,
                       expanded_names=names, dims=dims, coords=coords, reparameterized_names=reparam)


def chain_seed(seed: int, chain: int) -> int:
    """The seed of chain ``chain``: a function of (seed, chain) only."""
    return int(np.random.SeedSequence([int(seed), int(chain)]).generate_state(1)[0])


# set in the parent before the fork; the workers inherit it (a compiled model does not pickle)
_JOB: dict = {}


def _run_chain(chain: int):
    import nutpie

    job = _JOB
    progress = job.get("progress")

    def report(chains):
        if progress is not None and chains:
            progress[chain] = int(chains[0].finished_draws)

    return nutpie.sample(job["compiled"], draws=job["draws"], tune=job["tune"], chains=1, cores=1,
                         seed=chain_seed(job["seed"], chain), progress_bar=False, progress_callback=report,
                         progress_rate=250)


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


def _merge_chains(trees):
    """One DataTree from single-chain DataTrees, chains numbered 0..n-1."""
    import xarray as xr

    groups = {}
    for name in trees[0].children:
        parts = [t[name].to_dataset() for t in trees]
        merged = xr.concat(parts, dim="chain", combine_attrs="override")
        groups[name] = merged.assign_coords(chain=np.arange(len(trees)))
    return xr.DataTree.from_dict(groups)


def sample_chains(compiled, draws: int, tune: int, chains: int, seed: int, cores: int | None = None,
                  progress: bool = False):
    """``chains`` single-chain nutpie runs, in parallel over forked processes where the platform forks
    (Linux) and JAX has not started, one after another otherwise; with ``progress``, one bar over all
    chains' iterations."""
    import multiprocessing as mp

    cores = min(chains, cores or usable_cores())
    parallel = (cores > 1 and "fork" in mp.get_all_start_methods() and sys.platform != "darwin"
                and not _jax_started())
    cores = cores if parallel else 1
    ctx = mp.get_context("fork") if parallel else None
    counts = ctx.Array("q", chains, lock=False) if parallel else [0] * chains
    _JOB.update(compiled=compiled, draws=draws, tune=tune, seed=seed, progress=counts)
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
                 timings: dict | None = None):
    """Run NUTS: ``nutpie`` (default; its Rust sampler on a disk-cached PyTensor log-density,
    :func:`compile_model_c` and :func:`sample_chains`), PyMC's own ``pymc`` sampler, or ``numpyro`` (JAX; optional, the ``bench`` extra).
    Seeded: same seed, same draws."""
    import pymc as pm

    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    if sampler == "nutpie":
        t0 = time.time()
        compiled = compile_model_c(model)
        t1 = time.time()
        if progress:
            print(f"sampling {chains} chains x {draws} draws ({tune} tuning)...", file=sys.stderr)
        idata = sample_chains(compiled, draws=draws, tune=max(tune, 1), chains=chains, seed=seed, progress=progress)
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
        return pm.sample(draws=draws, tune=tune, chains=chains, cores=cores, random_seed=seed,
                         nuts_sampler=sampler, progressbar=progress, model=model, compute_convergence_checks=False,
                         **({"nuts_sampler_kwargs": kw} if kw else {}))
