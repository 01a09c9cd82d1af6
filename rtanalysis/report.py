"""``rtanalysis report``: logs → ingest, metrics, model fit, figures, tables and the written report.

:func:`run_report` is the whole pipeline; :func:`write_report` makes the figures, tables,
``report.md`` and the standalone ``report.html`` from what is already loaded and fitted (the
notebooks call it). Without :mod:`rtanalysis.model` (or with ``fit_model=False``) the report
has the observed metrics only and says so.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import time
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from . import plots, tables
from . import report_content as content
from .report_template import to_html, to_markdown

TITLE = "Capability versus timing failures"


def _log(progress: bool, msg: str) -> None:
    if progress:
        print(f"[rtanalysis report] {msg}", file=sys.stderr, flush=True)


def model_available() -> bool:
    try:
        from .model import fit  # noqa: F401
    except ModuleNotFoundError:
        return False
    return True


def data_hash(episodes: pd.DataFrame, steps: pd.DataFrame) -> str:
    """The fit's data hash when the model package is present, else a hash of the tidy tables."""
    try:
        from .model.fit import data_hash as model_hash
    except ModuleNotFoundError:
        h = hashlib.sha256()
        for frame in (episodes, steps):
            h.update(pd.util.hash_pandas_object(frame.astype(str), index=False).to_numpy().tobytes())
        return h.hexdigest()[:16]
    return model_hash(episodes, steps)


def cached_fit(load_result, path, draws: int = 1000, chains: int = 4, seed: int = 0, interval: float = 0.95,
               progress: bool = False, **fit_options):
    """Fit the model, or reuse the fit pickled at ``path`` when it was made from the same data
    (same data hash) with the same draws, chains, seed and interval; the notebooks share one fit
    this way. Only load pickles you wrote yourself."""
    import pickle

    from .model import fit as fit_fn

    path = Path(path)
    key = {"data_hash": data_hash(load_result.episodes, load_result.steps), "draws": draws, "chains": chains,
           "seed": seed, "interval": interval, **fit_options}
    if path.exists():
        with open(path, "rb") as fh:
            stored_key, fit = pickle.load(fh)
        if stored_key == key:
            return fit
    fit = fit_fn(load_result, draws=draws, chains=chains, seed=seed, interval=interval, progress=progress,
                 **fit_options)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        pickle.dump((key, fit), fh)
    return fit


# --------------------------------------------------------------------------------------------
# tables


def report_tables(episodes: pd.DataFrame, frames: dict, fit=None, level: float = 0.95,
                  metrics: dict | None = None) -> dict[str, tuple]:
    """``{name: (frame, caption)}``: the observed success, latency and failure-type tables (from
    ``metrics``, the :func:`rtanalysis.metrics.compute_all` tables, when given) and, with a fit,
    the decomposition, counterfactual and pairwise-comparison tables."""
    out = {"success": (tables.success_table(episodes, level),
                       f"Observed success per model, task type and clock, with {level:.0%} Wilson intervals.")}
    metrics = metrics or {}
    if metrics.get("latency") is not None and len(metrics["latency"]):
        out["latency"] = (tables.latency_table(metrics["latency"]),
                          "Decision latency: median (p50) and 90th percentile, absolute and relative to the window "
                          "close (rel_; 1 = the deadline).")
    od = metrics.get("observed_decomposition")
    if od is not None and len(od):
        out["observed_failure_types"] = (tables.observed_decomposition_table(od),
                                         "Observed failure types: share of failed episodes whose decision labels "
                                         "show a capability, timing or both failure, or cannot tell (unknown), with "
                                         "Wilson intervals.")
    dec = frames.get("decomposition")
    if dec is not None:
        out["decomposition"] = (tables.decomposition_table(dec),
                                "Posterior decomposition: P(success) = P(capable) × P(timely), and the share of "
                                "failures that are timing failures, with posterior intervals.")
    cf = frames.get("counterfactuals")
    if cf is not None:
        out["counterfactuals"] = (tables.counterfactual_table(cf),
                                  "Posterior success if latencies were scaled by λ (columns), timed clocks.")
    comps = comparison_rows(fit, dec) if fit is not None and dec is not None else []
    if comps:
        out["comparisons"] = (tables.comparison_table(comps),
                              "Posterior differences in P(success): paused minus timed clock per model (the cost "
                              "of time), and each model minus the best model per task type.")
    return out


def comparison_rows(fit, decomposition: pd.DataFrame) -> list[dict]:
    compare = getattr(fit, "compare", None)
    if not callable(compare):
        return []
    rows = []
    clocks = set(decomposition["clock"])
    for timed in ("wall", "step"):
        if "paused" in clocks and timed in clocks:
            c = compare("p_success", "paused", timed, by="clock")
            rows += _comparison_records(c, f"p_success: paused − {timed}", by="clock")
    clock = "wall" if "wall" in clocks else next(iter(sorted(clocks - {"paused"})), None)
    if clock is None:
        return rows
    timed = decomposition[decomposition["clock"] == clock]
    best = timed.groupby("model")["p_success"].mean().idxmax()
    for model in sorted(timed["model"].unique()):
        if model == best:
            continue
        c = compare("p_success", model, best, by="model")
        rows += _comparison_records(c[c["clock"] == clock], f"p_success: model − {best}")
    return rows


def _comparison_records(c: pd.DataFrame, quantity: str, by: str = "model") -> list[dict]:
    """Rows of ``fit.compare`` as table records; for a clock contrast the model is the subject."""
    recs = []
    for r in c.to_dict("records"):
        a, b = (r["model"], "—") if by == "clock" else (r["a"], r["b"])
        recs.append({"quantity": quantity, "task_type": r.get("task_type"),
                     "clock": f"{r['a']} − {r['b']}" if by == "clock" else r.get("clock"),
                     "a": a, "b": b, "difference": r["diff"],
                     "difference_lo": r["diff_lo"], "difference_hi": r["diff_hi"], "p_a_better": r.get("p_a_gt_b")})
    return recs


# --------------------------------------------------------------------------------------------
# the document


def report_blocks(load_result, frames: dict, fit, figure_paths: dict, table_frames: dict,
                  interval: float, seed, data_digest: str) -> list[dict]:
    """The report as blocks (see :mod:`rtanalysis.report_template`)."""
    ep = load_result.episodes
    models = sorted(ep["model"].unique())
    diag = frames.get("diagnostics") if fit is not None or frames.get("decomposition") is not None else None
    has_fit = frames.get("decomposition") is not None
    clock = content.headline_clock(ep)
    warn = content.diagnostics_warning(diag)
    blocks: list[dict] = [{"kind": "h1", "text": TITLE}]
    if warn:
        blocks.append({"kind": "warning", "text": warn})
    blocks += methods_blocks(load_result, fit, frames, interval, seed, data_digest)

    blocks.append({"kind": "h2", "text": "Headline numbers"})
    if clock is None:
        blocks.append({"kind": "p", "text": "No episode ran under a timed clock (wall or step), so timing could not "
                                            "fail and the report has no timing decomposition."})
    else:
        pooled = content.pooled_posterior(fit, frames["decomposition"], clock, interval) if has_fit and fit else None
        head = pooled if pooled is not None and len(pooled) else content.observed_headline(ep, clock, interval)
        posterior = pooled is not None and len(pooled) > 0
        source = ("Posterior means with " if posterior else "Observed rates with ") + \
                 (f"{interval:.0%} equal-tailed intervals, pooled over task types with episode weights."
                  if posterior else f"{interval:.0%} Wilson intervals; no model was fitted.")
        if warn and posterior:
            blocks.append({"kind": "warning", "text": "the headline numbers below come from a fit whose "
                                                      "diagnostics failed."})
        blocks.append({"kind": "p", "text": source})
        head = head.sort_values("p_success", ascending=False)
        blocks.append({"kind": "list", "items": [content.headline_sentence(r, clock, posterior)
                                                 for r in head.to_dict("records")]})
        missing = [m for m in models if m not in set(head["model"])]
        if missing:
            blocks.append({"kind": "p", "text": "Not run under the " + content.CLOCK_WORDS.get(clock, clock)
                           + " clock: " + ", ".join(f"**{m}**" for m in missing) + "."})

    for task_type in sorted(ep["task_type"].unique()):
        blocks += task_type_blocks(task_type, ep, frames, interval)

    blocks.append({"kind": "h2", "text": "Figures"})
    many = plots.style.many(models)
    for name, path in figure_paths.items():
        needs_fit = plots.FIGURES[name][0]
        blocks.append({"kind": "figure", "title": plots.FIGURES[name][1], "path": path,
                       "caption": content.caption(name, has_fit, many, diag, needs_fit)})

    blocks.append({"kind": "h2", "text": "Tables"})
    blocks.append({"kind": "p", "text": "Every table is also written as CSV (full precision), Markdown and LaTeX "
                                        "(booktabs) under `tables/`."})
    for name, (frame, cap) in table_frames.items():
        if len(frame) > 60 or (name == "decomposition" and len(frame) > 40):
            blocks.append({"kind": "p", "text": f"{cap} ({len(frame)} rows: `tables/{name}.csv`, `.md`, `.tex`.)"})
            continue  # too long to read inline; the decomposition is shown per task type above
        blocks.append({"kind": "table", "frame": frame, "caption": cap})

    blocks.append({"kind": "h2", "text": "Power for the next run"})
    blocks.append({"kind": "p", "text": " ".join(content.power_note(ep, clock))})
    return blocks


def methods_blocks(load_result, fit, frames: dict, interval: float, seed, data_digest: str) -> list[dict]:
    ep = load_result.episodes
    steps = load_result.steps
    n_models, n_types = ep["model"].nunique(), ep["task_type"].nunique()
    clocks = ", ".join(f"{c} ({(ep['clock'] == c).sum()})" for c in ("paused", "wall", "step") if (ep["clock"] == c).any())
    text = (f"**Data.** {load_result.n_read} episode records read from {len(load_result.files)} file(s); "
            f"{load_result.n_accepted} accepted and {load_result.n_quarantined} quarantined (see `quarantine.jsonl`). "
            f"{len(ep)} episodes and {len(steps)} decisions of {n_models} model(s) on {n_types} task type(s); "
            f"episodes per clock: {clocks}. Data hash `{data_digest}`.")
    blocks = [{"kind": "h2", "text": "Methods"}, {"kind": "p", "text": text}]
    if fit is not None:
        d = getattr(fit, "diagnostics", {}) or {}
        sampler = getattr(fit, "sampler", "NUTS")
        blocks.append({"kind": "p", "text": (
            "**Model.** A hierarchical capability × timing model (PyMC): an episode succeeds when the model is "
            "capable (logit-scale model, task-type, model × task-type and item effects, partially pooled) and every "
            "decision lands inside its validity window (latency "
            f"{'log-normal' if getattr(fit, 'latency_family', 'normal') == 'normal' else 'Student-t on the log scale'}"
            " with model and task-type effects; a missed window is fatal with a per-task-type probability). Under "
            "the paused clock timing cannot fail, which identifies capability. Priors are weakly informative "
            "(normal on logits and log-latencies, half-normal on scales; `docs/model.md`).")})
        blocks.append({"kind": "p", "text": (
            f"**Sampler.** NUTS ({sampler}), {getattr(fit, 'chains', '—')} chains × {getattr(fit, 'draws_n', '—')} "
            f"draws after {getattr(fit, 'tune', '—')} tuning steps, seed {getattr(fit, 'seed', seed)}; intervals are "
            f"{interval:.0%} equal-tailed posterior intervals. **Diagnostics:** {plots.style.diagnostics_text(d) or '—'}"
            f" — {'passed' if d.get('ok', True) else '**failed**'}.")})
    else:
        blocks.append({"kind": "p", "text": (
            "**Model.** " + ("No model was fitted (the model stage is not installed); " if not model_available()
                             else "No model was fitted for this report; ")
            + "the numbers below are observed rates with Wilson intervals, and the decomposition comes from the "
              "step labels.")})
    versions = ", ".join(f"{k} {v}" for k, v in content.package_versions().items())
    blocks.append({"kind": "p", "text": f"**Software.** {versions}. Seed {seed}."})
    return blocks


def task_type_blocks(task_type: str, episodes: pd.DataFrame, frames: dict, interval: float) -> list[dict]:
    dec = frames.get("decomposition")
    blocks = [{"kind": "h2", "text": f"Task type: {task_type}"}]
    ep = episodes[episodes["task_type"] == task_type]
    n_by_clock = ep.groupby("clock").size()
    blocks.append({"kind": "p", "text": f"{len(ep)} episodes ("
                   + ", ".join(f"{c}: {n}" for c, n in n_by_clock.items()) + f") of {ep['model'].nunique()} models."})
    if dec is not None:
        d = dec[(dec["task_type"] == task_type)]
        timed = d[d["clock"] != "paused"].sort_values("p_success", ascending=False)
        if len(timed):
            best = timed.iloc[0]
            most_timing = timed.sort_values("share_timing", ascending=False).iloc[0]
            blocks.append({"kind": "p", "text": (
                f"Highest success: **{best['model']}** at "
                f"{content.pct_interval(best['p_success'], best['p_success_lo'], best['p_success_hi'])} "
                f"({best['clock']} clock). Largest timing share of failures: **{most_timing['model']}**, "
                f"{content.pct_interval(most_timing['share_timing'], most_timing['share_timing_lo'], most_timing['share_timing_hi'])}.")})
        cols = ["model", "clock", "n_episodes", "p_success", "p_success_lo", "p_success_hi", "p_capable", "p_capable_lo",
                "p_capable_hi", "p_timely", "p_timely_lo", "p_timely_hi", "share_timing", "share_timing_lo",
                "share_timing_hi"]
        table = d[[c for c in cols if c in d.columns]].sort_values(["clock", "p_success"], ascending=[True, False])
        blocks.append({"kind": "table", "frame": table.reset_index(drop=True),
                       "caption": f"Posterior decomposition, {task_type}."})
    else:
        t = tables.success_table(ep, interval)
        blocks.append({"kind": "table", "frame": t.drop(columns=["task_type"]),
                       "caption": f"Observed success, {task_type}, with {interval:.0%} Wilson intervals."})
    return blocks


# --------------------------------------------------------------------------------------------
# the pipeline


def write_report(load_result, out_dir, fit=None, interval: float = 0.95, seed=None, figures_dir=None,
                 width: str = "double", progress: bool = False, fit_frames: dict | None = None,
                 started: float | None = None, metrics: dict | None = None) -> dict:
    """Figures, tables, ``report.md`` and ``report.html`` into ``out_dir`` from a loaded data set and
    (optionally) a fit result. Returns ``{"figures": [...], "tables": [...], "markdown": path, "html": path}``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    frames = fit_frames if fit_frames is not None else plots.fit_outputs(fit)
    ep, steps = load_result.episodes, load_result.steps
    _log(progress, "drawing figures")
    figs = plots.build_figures(ep, steps, fit_frames=frames, width=width)
    fig_dir = out / "figures"
    written, figure_paths = [], {}
    for name, fig in figs.items():
        paths = plots.save_figure(fig, fig_dir / name)
        plt.close(fig)
        written += paths
        figure_paths[name] = f"figures/{name}.png"
        _log(progress, f"  figure {name}")
    _log(progress, "writing tables")
    if metrics is None:
        from .metrics import latency_summary, observed_decomposition

        metrics = {"latency": latency_summary(ep, steps), "observed_decomposition": observed_decomposition(ep)}
    table_frames = report_tables(ep, frames, fit, interval, metrics)
    table_paths = []
    for name, (frame, cap) in table_frames.items():
        table_paths += tables.write_table(frame, out / "tables", name, cap)
    seed = getattr(fit, "seed", seed)
    digest = getattr(fit, "data_hash", None) or data_hash(ep, steps)
    blocks = report_blocks(load_result, frames, fit, figure_paths, table_frames, interval, seed, digest)
    md = out / "report.md"
    md.write_text(to_markdown(blocks), encoding="utf-8")
    html_path = out / "report.html"
    html_path.write_text(to_html(blocks, TITLE, out), encoding="utf-8")
    if figures_dir is not None:
        dest = Path(figures_dir)
        dest.mkdir(parents=True, exist_ok=True)
        for p in written:
            shutil.copy2(p, dest / p.name)
    took = "" if started is None else f" ({time.time() - started:.0f} s)"
    _log(progress, f"report: {md} and {html_path}{took}")
    return {"figures": written, "tables": table_paths, "markdown": md, "html": html_path}


def run_report(paths, out_dir, draws: int = 1000, chains: int = 4, seed: int = 0, interval: float = 0.95,
               figures_dir=None, fit_model: bool = True, progress: bool = True, format: str = "auto") -> dict:
    """Ingest ``paths``, compute metrics, fit the model (when available), then :func:`write_report`."""
    from .ingest import ingest

    started = time.time()
    out = Path(out_dir)
    _log(progress, f"ingesting {', '.join(str(p) for p in paths)}")
    try:
        load_result, metrics = ingest(paths, out, format=format)
    except ValueError as e:  # an unknown format or unreadable input: a user error, not a crash
        from .cli import CLIError

        raise CLIError(str(e)) from e
    _log(progress, str(load_result))
    if load_result.n_accepted == 0:
        from .cli import CLIError

        raise CLIError("no episode could be read from the given paths; see quarantine.jsonl in the output folder")
    fit = None
    if fit_model and model_available():
        from .model import fit as fit_fn

        _log(progress, f"fitting the model ({chains} chains × {draws} draws, seed {seed})")
        fit = fit_fn(load_result, draws=draws, chains=chains, seed=seed, interval=interval, progress=progress)
        fit.to_dir(out)
        _log(progress, "diagnostics: " + (plots.style.diagnostics_text(fit.diagnostics) or "—")
             + (" (ok)" if fit.diagnostics.get("ok", True) else " (FAILED)"))
    elif fit_model:
        _log(progress, "model stage not installed: report with observed metrics only")
    return write_report(load_result, out, fit=fit, interval=interval, seed=seed, figures_dir=figures_dir,
                        progress=progress, started=started, metrics=metrics)


# --------------------------------------------------------------------------------------------
# CLI


def example_data_path(name: str = "example") -> Path:
    """The bundled example logs (shipped inside the package; see :func:`rtanalysis.example_data`)."""
    from . import example_data
    from .cli import CLIError

    path = Path(str(example_data(name)))
    if not path.is_dir():
        raise CLIError(f"the bundled example data is missing from this installation ({path})")
    return path


def _add_fit_options(p, out=None, draws=1000, chains=4) -> None:
    if out is None:
        p.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    else:
        p.add_argument("--out", default=out, metavar="DIR", help=f"output folder (default {out})")
    p.add_argument("--draws", type=int, default=draws, help=f"posterior draws per chain (default {draws})")
    p.add_argument("--chains", type=int, default=chains, help=f"chains (default {chains})")
    p.add_argument("--seed", type=int, default=0, help="random seed: same inputs + seed give identical tables")
    p.add_argument("--interval", type=float, default=0.95, help="interval probability (default 0.95)")
    p.add_argument("--figures", default=None, metavar="DIR", help="also copy the figures into DIR")
    p.add_argument("--no-fit", action="store_true", help="observed metrics only: skip the model")
    p.add_argument("--quiet", action="store_true", help="no progress messages")


def add_cli(sub) -> None:
    p = sub.add_parser("report", help="ingest + metrics + fit + figures + tables + written report",
                       description="Run the whole analysis on trajectory logs and write figures/, tables/, "
                                   "report.md and report.html (plus the ingest and fit outputs) into --out.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="log files or directories")
    p.add_argument("--format", default="auto", help="input format (default: detect)")
    _add_fit_options(p)
    p.set_defaults(func=_run)
    d = sub.add_parser("demo", help="the full report on the bundled example data",
                       description="Run `rtanalysis report` on a bundled example: the simulated benchmark "
                                   "with known truth (default), or RealtimeGym runs converted to rtlog.")
    d.add_argument("--example", choices=["example", "realtimegym"], default="example",
                   help="which bundled example (default: example, the simulated benchmark)")
    _add_fit_options(d, out="rtanalysis-demo", draws=500, chains=2)
    d.set_defaults(func=_run_demo)


def _check_args(args) -> None:
    from .cli import CLIError

    if args.draws < 1 or args.chains < 1:
        raise CLIError("--draws and --chains must be positive")
    if not 0 < getattr(args, "interval", 0.95) < 1:
        raise CLIError("--interval must be between 0 and 1")


def _run(args) -> int:
    _check_args(args)
    res = run_report(args.paths, args.out, draws=args.draws, chains=args.chains, seed=args.seed,
                     interval=args.interval, figures_dir=args.figures, fit_model=not args.no_fit,
                     progress=not args.quiet, format=args.format)
    print(f"report written: {res['markdown']}, {res['html']} ({len(res['figures']) // 2} figures, "
          f"{len(res['tables']) // 3} tables)")
    return 0


def _run_demo(args) -> int:
    _check_args(args)
    res = run_report([example_data_path(args.example)], args.out, draws=args.draws, chains=args.chains, seed=args.seed,
                     interval=args.interval, figures_dir=args.figures, fit_model=not args.no_fit, progress=not args.quiet)
    print(f"demo report written: {res['markdown']}, {res['html']}")
    return 0
