"""The report pipeline: logs → ingest, metrics, model fit, then figures, tables, ``report.md`` and
the standalone ``report.html``. :func:`~rtanalysis.reporting.pipeline.write_report` starts from what is
already loaded (and fitted); the notebooks call it and share one fit through :func:`load_or_fit`."""

from __future__ import annotations

import gc
import os
import shutil
import sys
import time
from pathlib import Path

import matplotlib.pyplot as plt
import orjson

from .. import plots
from . import tables
from ..metrics import DEFAULT_CI_PROB, compute_all, write_metrics
from ..model import DEFAULT_CHAINS, DEFAULT_DRAWS
from ..schema import COMMAND_KEY_DTYPE
from .document import TITLE, report_blocks, report_tables
from .template import to_html, to_markdown


def _log(progress: bool, msg: str) -> None:
    if progress:
        print(f"[rtanalysis report] {msg}", file=sys.stderr, flush=True)


def load_or_fit(load_result, fit_dir, spec=None, *, draws: int = DEFAULT_DRAWS, chains: int = DEFAULT_CHAINS,
                seed: int = 0, ci_prob: float = DEFAULT_CI_PROB, progress: bool = False):
    """The fit :meth:`FitResult.to_dir <rtanalysis.FitResult.to_dir>` left in ``fit_dir`` when it was made
    from the same data (data hash) with the same spec, draws, chains, seed and ``ci_prob``; otherwise fit and
    write it there. Reads only ``posterior.nc`` and ``diagnostics.json`` (no pickle)."""
    from ..model import FitResult, ModelSpec, fit
    from ..model.inputs import data_hash

    spec = ModelSpec.coerce(spec)
    fit_dir = Path(fit_dir)
    info_path = fit_dir / "diagnostics.json"
    if info_path.exists() and (fit_dir / "posterior.nc").exists() and spec.structure != "auto" \
            and spec.latency_family != "auto":
        info = orjson.loads(info_path.read_bytes())
        wanted = {"data_hash": data_hash(load_result.episodes, load_result.steps), "draws": draws, "chains": chains,
                  "seed": seed, "ci_prob": ci_prob, "spec": spec.to_dict()}
        # a fit that retried (tune="auto") holds more draws than were asked for: compare the request
        info["draws"] = info.get("retried", {}).get("asked", {}).get("draws", info.get("draws"))
        if all(info.get(k) == v for k, v in wanted.items()):
            return FitResult.from_dir(fit_dir, load_result)
    result = fit(load_result, spec, draws=draws, chains=chains, seed=seed, ci_prob=ci_prob, progress=progress)
    result.to_dir(fit_dir)
    return result


#: the figure makers of the report being written, set before the workers fork (they inherit them: a
#: maker is a closure over the report's frames and does not pickle)
_MAKERS: dict = {}


def _draw_and_write(make, out: Path, name: str) -> list[Path]:
    """Draw one figure with ``make``, write it (PDF and PNG) and let it go."""
    fig = make()
    paths = plots.write_figure(fig, out / "figures" / name)
    plt.close(fig)
    # a drawn figure keeps its raster, and figures are reference cycles: collect it before the next
    del fig
    gc.collect()
    return paths


def _worker_figure(job) -> list[Path]:
    """In a worker: one figure of :data:`_MAKERS`."""
    name, out = job
    return _draw_and_write(_MAKERS[name], Path(out), name)


def _start_figures(makers: dict, out: Path):
    """Start drawing and writing the figures ``makers`` in forked worker processes, one per usable core,
    while the caller goes on with the tables; ``(pool, pending)``, or ``(None, None)`` where work cannot
    fork (:func:`rtanalysis.model.sampler.can_fork`) or one core is all there is. The figures are most of
    a report's time outside the sampler, and matplotlib draws on one core."""
    import multiprocessing as mp
    import warnings

    from ..model.sampler import can_fork, usable_cores

    workers = min(len(makers), usable_cores())
    if workers < 2 or not can_fork():
        return None, None
    _MAKERS.clear()
    _MAKERS.update(makers)
    with warnings.catch_warnings():
        # 3.12 warns on fork in a threaded process (Jupyter); the workers only draw
        warnings.filterwarnings("ignore", message=".*use of fork\\(\\) may lead to deadlocks.*")
        pool = mp.get_context("fork").Pool(workers)
    return pool, pool.map_async(_worker_figure, [(name, str(out)) for name in makers], chunksize=1)


def _finish_figures(makers: dict, out: Path, pool, pending, progress: bool) -> tuple[list[Path], dict]:
    """The figures' paths: collected from the workers of :func:`_start_figures`, or drawn and written here
    one at a time (so one figure's raster is held at a time) where there are none."""
    if pool is None:
        paths = []
        for name in makers:
            paths.append(_draw_and_write(makers[name], out, name))
            _log(progress, f"  figure {name}")
    else:
        try:
            paths = pending.get()
        finally:
            pool.close()
            pool.join()
            _MAKERS.clear()
        for name in makers:
            _log(progress, f"  figure {name}")
    return [p for ps in paths for p in ps], {name: f"figures/{name}.png" for name in makers}


def write_report(load_result, out_dir, fit=None, ci_prob: float = DEFAULT_CI_PROB, seed=None, figures_dir=None,
                 width: str = "double", progress: bool = False, fit_frames: dict | None = None,
                 started: float | None = None, metrics: dict | None = None) -> dict:
    """Figures, tables, ``report.md`` and ``report.html`` into ``out_dir`` from a loaded data set and
    (optionally) a fit result; every interval at probability ``ci_prob``. ``metrics``: the
    :func:`rtanalysis.metrics.compute_all` tables at that ``ci_prob`` (computed when not given).
    Returns ``{"figures": [...], "tables": [...], "markdown": path, "html": path}``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ep, steps = load_result.episodes, load_result.steps
    metrics = metrics if metrics is not None else compute_all(ep, steps, ci_prob=ci_prob)
    frames = fit_frames if fit_frames is not None else plots.fit_outputs(fit, ci_prob)
    _log(progress, "drawing figures")
    makers = plots.figure_makers(ep, steps, fit_frames=frames, width=width, ci_prob=ci_prob, metrics=metrics)
    # everything alive before the figures (the fit, the compiled model's millions of objects) is set
    # aside from the collector while they are drawn: each collection after a figure then walks only what
    # the figures made (0.4 s -> ms per figure after a fit), and forked workers leave those pages shared;
    # what is garbage already goes first, and all is unfrozen after, so nothing is kept for good
    gc.collect()
    gc.freeze()
    try:
        pool, pending = _start_figures(makers, out)
        try:
            _log(progress, "writing tables")
            table_frames = report_tables(metrics, frames, fit, ci_prob)
            table_paths = [p for name, (frame, cap) in table_frames.items()
                           for p in tables.write_table(frame, out / "tables", name, cap)]
        except BaseException:
            if pool is not None:  # the figures' workers go with the error
                pool.terminate()
                pool.join()
                _MAKERS.clear()
            raise
        written, figure_paths = _finish_figures(makers, out, pool, pending, progress)
    finally:
        gc.unfreeze()
    seed = fit.seed if fit is not None else seed
    digest = fit.data_hash if fit is not None else _data_hash(ep, steps)
    blocks = report_blocks(load_result, metrics, frames, fit, figure_paths, table_frames, ci_prob, seed, digest)
    md, html_path = out / "report.md", out / "report.html"
    md.write_text(to_markdown(blocks), encoding="utf-8")
    html_path.write_text(to_html(blocks, TITLE, out), encoding="utf-8")
    if figures_dir is not None:
        Path(figures_dir).mkdir(parents=True, exist_ok=True)
        for p in written:
            shutil.copy2(p, Path(figures_dir) / p.name)
    _log(progress, f"report: {md} and {html_path}" + ("" if started is None else f" ({time.time() - started:.0f} s)"))
    return {"figures": written, "tables": table_paths, "markdown": md, "html": html_path}


def _data_hash(episodes, steps) -> str:
    from ..model.inputs import data_hash

    return data_hash(episodes, steps)


def run_report(paths, out_dir, spec=None, *, draws: int = DEFAULT_DRAWS, chains: int = DEFAULT_CHAINS, seed: int = 0,
               ci_prob: float = DEFAULT_CI_PROB, tune: int | str | None = "auto", figures_dir=None,
               fit_model: bool = True, progress: bool = True, format: str = "auto") -> dict:
    """The whole analysis: ingest ``paths``, compute metrics, fit the model ``spec`` (a
    :class:`~rtanalysis.ModelSpec`, a structure name or ``None`` for the default; skipped with
    ``fit_model=False``), then :func:`~rtanalysis.reporting.pipeline.write_report` into ``out_dir``.
    ``draws``, ``chains``, ``seed``, ``ci_prob`` and ``tune`` are :func:`rtanalysis.fit`'s. Raises
    ``ValueError`` for input that cannot be read. Returns
    ``{"figures": [...], "tables": [...], "markdown": path, "html": path}``."""
    from .ingest import ingest

    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    started = time.time()
    out = Path(out_dir)
    _log(progress, f"ingesting {', '.join(str(p) for p in paths)}")
    load_result, metrics = ingest(paths, out, format=format, key_dtype=COMMAND_KEY_DTYPE)
    _log(progress, str(load_result))
    if load_result.n_accepted == 0:
        raise ValueError("no episode could be read from the given paths; see quarantine.jsonl in the output folder")
    if ci_prob != DEFAULT_CI_PROB:  # ingest wrote its metrics at the default probability: rewrite them
        metrics = compute_all(load_result.episodes, load_result.steps, ci_prob=ci_prob)
        write_metrics(metrics, out)
    fit = None
    if fit_model:
        from ..model import fit as fit_fn

        _log(progress, f"fitting the model ({chains} chains × {draws} draws, seed {seed})")
        fit = fit_fn(load_result, spec, draws=draws, chains=chains, seed=seed, ci_prob=ci_prob, progress=progress,
                     tune=tune)
        _log(progress, "diagnostics: " + (plots.style.diagnostics_text(fit.diagnostics) or "—")
             + (" (ok)" if fit.diagnostics.get("ok", True) else " (FAILED)"))
        # hashed by the fit and written by ingest: what no later stage reads need not stay in memory, not even
        # while to_dir derives the fit's tables (the report's peak at 10^6 episodes was there)
        load_result.drop_record_only_columns()
        fit.to_dir(out)
    return write_report(load_result, out, fit=fit, ci_prob=ci_prob, seed=seed, figures_dir=figures_dir,
                        progress=progress, started=started, metrics=metrics)
