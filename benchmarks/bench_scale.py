"""Leaderboard scale, measured: a size ladder of the whole report, the memory of the aggregates,
and the ingest on 1 and 2 Dask workers.

``ladder``: ``leaderboard60`` at 10^4, 10^5, 10^6 episodes (``--quick``: 10^4 and 10^5, few draws).
Each rung runs in a fresh process and prints, per stage — ingest, aggregate (pandas and DuckDB),
set-up (fit minus sampling: aggregation inside fit, model graph, compile), sampling, derived
quantities, figures, report (figures again + tables + text) — the seconds and the peak resident
memory of that stage; the whole report is the sum of ingest, set-up, sampling, derived and report
(the two aggregate stages are measured apart: the pandas one runs again inside the fit's set-up,
DuckDB's is the alternative path; the figures are drawn again inside the report stage, as
``rtanalysis report`` draws them, once) (Linux: the high-water mark is reset before each stage), side by side, and the
ratio of the largest rung to the smallest; then each stage's core-seconds (CPU seconds of this process and of
the worker processes it reaped during the stage: the chains for sampling, the figures' workers for the report),
so that a reader can tell what more cores would give.

``memory``: a Parquet dataset of >= ``--decisions`` (default 10^7) decisions of ``leaderboard60``
(simulated in pieces, ingested part by part on one Dask worker), then the model's aggregates by
DuckDB in a fresh process: peak RSS (target <= 1 GB) and seconds; and, at a size the pandas path
manages, both paths side by side.

``dask``: the same log files ingested on 1 and 2 local Dask workers (processes): decisions per
second, wall clock.

``command``: ``rtanalysis report`` itself, as a user runs it (defaults), on the 10^6 rung's log: wall
clock, and per phase of its log (ingest, fit, derived = writing the fit and the report's derived
quantities, figures, tables) the seconds and the peak resident memory of its process, and the chain
workers' peak. The ladder measures the same stages inside one Python process; this is the number a user
sees.

The machine load (``os.getloadavg()``) is printed with every table: on a shared machine, seconds
are only comparable within a run. Results go to ``benchmarks/results/bench_scale*.txt``.

    python benchmarks/bench_scale.py ladder [--quick] [--draws N --chains N]
    python benchmarks/bench_scale.py memory [--decisions 10000000] [--data DIR]
    python benchmarks/bench_scale.py dask [--data DIR]
    python benchmarks/bench_scale.py command [--rung 1e6] [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import append_result

RUNGS = {"1e4": (10, 3), "1e5": (100, 3), "1e6": (100, 32)}  # leaderboard60 (tasks, seeds): ~9.6k, 96k, 1.0M episodes
#: the stages `rtanalysis report` runs, each once
WHOLE_REPORT = ("ingest", "setup", "sampling", "derived", "report")
STAGES = ("ingest", "aggregate_pandas", "aggregate_duckdb", "setup", "sampling", "derived", "figures", "report")


# --------------------------------------------------------------------------------------------
# measuring one stage in this process


def _reset_peak() -> None:
    try:  # Linux: "5" resets the peak RSS (VmHWM) of this process
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def _status_mib(field: str, pid: int | str = "self") -> float | None:
    """A memory field of /proc/PID/status (``VmHWM``, ``VmRSS``) in MiB, of this process by default; None
    where there is none (or the process is gone)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return None


def _peak_mib() -> float:
    peak = _status_mib("VmHWM")
    if peak is not None:
        return peak
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_seconds() -> tuple[float, float]:
    """(this process's CPU seconds, its reaped children's): user + system."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


class Stages:
    def __init__(self):
        #: name -> (seconds, peak MiB, core-seconds: this process's and its reaped children's CPU seconds)
        self.rows: dict[str, tuple[float, float, float]] = {}
        #: name -> (this process's CPU seconds, the children's) of the stage
        self.cpu: dict[str, tuple[float, float]] = {}

    def run(self, name: str, fn, *args, **kwargs):
        start = _status_mib("VmRSS") or 0.0  # resident before the stage: what its peak adds to
        _reset_peak()
        c0 = _cpu_seconds()
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        c1 = _cpu_seconds()
        self.cpu[name] = (c1[0] - c0[0], c1[1] - c0[1])
        self.rows[name] = (time.perf_counter() - t0, _peak_mib(), sum(self.cpu[name]))
        print(f"  {name:<18} {self.rows[name][0]:8.1f} s {self.rows[name][1]:8.0f} MiB (resident before "
              f"{start:.0f} MiB)", file=sys.stderr, flush=True)
        return out


# --------------------------------------------------------------------------------------------
# ladder


def rung(tasks: int, seeds: int, draws: int, chains: int, work: Path) -> dict:
    """One rung, in this process: simulate (untimed), then every stage of the report."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rtanalysis import plots
    from rtanalysis.reporting.ingest import ingest
    from rtanalysis.model import fit as fit_model
    from rtanalysis.model.data import aggregate
    from rtanalysis.reporting import write_report
    from rtanalysis.scale import aggregate_dataset
    from rtanalysis.scale.dataset import write_dataset
    from rtanalysis.schema import COMMAND_KEY_DTYPE
    from rtanalysis.simulate import simulate

    from rtanalysis.io.memory import map_large_allocations

    map_large_allocations()  # as the command line does (rtanalysis.cli.main)
    sim = simulate("leaderboard60", seed=0, tasks=tasks, seeds=seeds)
    logs = sim.write(work / "logs")["episodes"]
    del sim
    st = Stages()
    # the command line's tables (rtanalysis report loads with key_dtype=COMMAND_KEY_DTYPE)
    lr, metrics = st.run("ingest", ingest, [str(logs)], work / "out", key_dtype=COMMAND_KEY_DTYPE)
    st.run("aggregate_pandas", aggregate, lr.episodes, lr.steps)
    write_dataset(lr, work / "ds")
    st.run("aggregate_duckdb", aggregate_dataset, work / "ds")
    # the report's default tuning (tune="auto": as many steps as draws, one retry if the gate fails), so a rung
    # measures what `rtanalysis report` does; a retry is recorded with the rung
    fit = st.run("fit", fit_model, lr, draws=draws, chains=chains, seed=0, progress=False)
    d = fit.diagnostics
    fit_s, fit_peak, _ = st.rows.pop("fit")
    sampling = float(d.get("sampling_only_seconds", d.get("sampling_seconds", 0.0)))
    # the chains sample in worker processes: their CPU is the children's; this process's is the set-up's
    # (it only waits on the workers while they sample)
    own_cpu, chains_cpu = st.cpu["fit"]
    st.rows["setup"] = (fit_s - sampling, fit_peak, own_cpu)
    st.rows["sampling"] = (sampling, fit_peak, chains_cpu)
    # the chains sample in forked worker processes (rtanalysis.model.sampler.sample_chains), whose peaks
    # VmHWM of this process does not see; reaped by the pool, they are in RUSAGE_CHILDREN (a forked
    # worker's resident set counts the pages it shares with this process, so this is an upper bound)
    workers_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    lr.drop_record_only_columns()  # as `rtanalysis report` does once the fit has hashed the data
    frames = st.run("derived", plots.fit_outputs, fit)

    def figures():  # drawn as the report draws them: from its metrics tables, one figure at a time
        for _, fig in plots.iter_figures(lr.episodes, lr.steps, fit_frames=frames, metrics=metrics):
            plt.close(fig)

    st.run("figures", figures)
    st.run("report", write_report, lr, work / "out", fit=fit, fit_frames=frames, metrics=metrics)
    return {"episodes": len(lr.episodes), "decisions": len(lr.steps), "stages": st.rows,
            "chain_workers_peak_mib": workers_peak, "diagnostics_ok": bool(d.get("ok")), "max_rhat": d.get("max_rhat"),
            "min_ess_bulk": d.get("min_ess_bulk"), "retried": bool(d.get("retried"))}


def _child(args) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = rung(args.tasks, args.seeds, args.draws, args.chains, Path(tmp))
    print("RESULT " + json.dumps(out))
    return 0


def _run_rung(name: str, draws: int, chains: int) -> dict:
    tasks, seeds = RUNGS[name]
    cmd = [sys.executable, __file__, "_rung", "--tasks", str(tasks), "--seeds", str(seeds),
           "--draws", str(draws), "--chains", str(chains)]
    print(f"rung {name}: {' '.join(cmd[2:])}", file=sys.stderr, flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    lines = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
    if p.returncode or not lines:
        return {"error": f"exit {p.returncode}"}
    return json.loads(lines[-1][7:])


def _ladder_table(results: dict) -> str:
    names = [n for n in results if "stages" in results[n]]
    head = f"{'stage':<18}" + "".join(f"{n + ' s':>10}{n + ' MiB':>11}" for n in names)
    lines = [head]
    for s in STAGES:
        lines.append(f"{s:<18}" + "".join(f"{results[n]['stages'][s][0]:10.1f}{results[n]['stages'][s][1]:11.0f}"
                                          for n in names))
    # the aggregates are computed again inside the fit (set-up) and the report stage draws the figures
    # again (as `rtanalysis report` does each once): counted there only
    whole = {n: sum(v[0] for k, v in results[n]["stages"].items() if k in WHOLE_REPORT) for n in names}
    # the peak of the stages `rtanalysis report` runs (the alternatives measured apart, such as the
    # DuckDB aggregate, are not in it)
    peak = {n: max(v[1] for k, v in results[n]["stages"].items() if k in WHOLE_REPORT) for n in names}
    lines.append(f"{'whole report':<18}" + "".join(f"{whole[n]:10.1f}{peak[n]:11.0f}" for n in names))
    lines.append("core-seconds (CPU seconds of the stage's process and of the workers it reaped: the figures' "
                 "workers are the report stage's; cores a stage kept busy = core-seconds / seconds)")
    for s in STAGES:
        lines.append(f"{s:<18}" + "".join(f"{results[n]['stages'][s][2]:10.1f}{'':11}" if len(results[n]['stages'][s]) > 2
                                          else f"{'':21}" for n in names))
    cores = {n: sum(v[2] for k, v in results[n]["stages"].items() if k in WHOLE_REPORT and len(v) > 2) for n in names}
    lines.append(f"{'whole report':<18}" + "".join(f"{cores[n]:10.1f}{'':11}" for n in names))
    lines.append(f"{'chain workers MiB':<18}" + "".join(
        f"{results[n].get('chain_workers_peak_mib', float('nan')):21.0f}" for n in names))
    lines.append(f"{'episodes':<18}" + "".join(f"{results[n]['episodes']:>21,}" for n in names))
    lines.append(f"{'decisions':<18}" + "".join(f"{results[n]['decisions']:>21,}" for n in names))
    lines.append(f"{'diagnostics ok':<18}" + "".join(
        f"{str(results[n]['diagnostics_ok']) + ' (R-hat ' + format(results[n]['max_rhat'] or 0, '.3f') + ')':>21}"
        for n in names))
    lines.append(f"{'retried':<18}" + "".join(f"{str(results[n].get('retried', False)):>21}" for n in names))
    if len(names) > 1:
        a, b = names[0], names[-1]
        lines.append(f"ratio {b}/{a}: whole report {whole[b] / whole[a]:.2f}x time, "
                     f"{peak[b] / peak[a]:.2f}x peak memory; "
                     + ", ".join(f"{s} {results[b]['stages'][s][0] / max(results[a]['stages'][s][0], 1e-9):.2f}x"
                                 for s in STAGES))
    return "\n".join(lines)


def ladder(args) -> str:
    names = args.rungs or (["1e4", "1e5"] if args.quick else list(RUNGS))
    draws = args.draws or (200 if args.quick else 1000)
    chains = args.chains or (2 if args.quick else 4)
    results = {}
    for n in names:
        results[n] = _run_rung(n, draws, chains)
        print(f"  load now {os.getloadavg()}", file=sys.stderr, flush=True)
    failed = {n: r["error"] for n, r in results.items() if "error" in r}
    return (f"ladder ({'quick: ' if args.quick else ''}{chains} chains x {draws} draws; stage seconds and "
            f"stage peak RSS)\n" + _ladder_table(results) + (f"\nfailed rungs: {failed}" if failed else ""))


# --------------------------------------------------------------------------------------------
# the command itself: `rtanalysis report` as a user runs it


#: the phases of `rtanalysis report`, each from the first log line that starts with its marker on
PHASES = (("ingest", "ingesting"), ("fit", "fitting the model"), ("derived", "diagnostics:"),
          ("figures", "drawing figures"), ("tables", "writing tables"))


def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            out += [int(x) for x in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    except OSError:
        pass
    return out


def run_command(cmd: list[str], every: float = 0.25) -> dict:
    """Run ``cmd``; every ``every`` s read the resident set of it and of its child processes (the chain
    workers), and tag the samples with the phase its log lines say it is in. Returns the wall clock, each
    phase's seconds and peak resident MiB (the main process's VmHWM where it rose within the phase, else
    its largest VmRSS sample), and the largest child peak (VmHWM, which counts pages shared with the parent)."""
    import threading

    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, bufsize=1)
    marks: list[tuple[float, str]] = []

    def read_log():
        for line in proc.stderr:  # progress bars end in \r: only whole lines mark phases
            text = line.strip().removeprefix("[rtanalysis report] ")
            for name, marker in PHASES:
                if text.startswith(marker) and name not in [m for _, m in marks]:
                    marks.append((time.perf_counter() - t0, name))

    reader = threading.Thread(target=read_log, daemon=True)
    reader.start()
    samples, child_peak = [], 0
    while proc.poll() is None:
        samples.append((time.perf_counter() - t0, _status_mib("VmRSS", proc.pid) or 0.0,
                        _status_mib("VmHWM", proc.pid) or 0.0))
        child_peak = max([child_peak] + [_status_mib("VmHWM", c) or 0.0 for c in _children(proc.pid)])
        time.sleep(every)
    wall = time.perf_counter() - t0
    reader.join(timeout=10)
    bounds = [t for t, _ in marks] + [wall]
    phases, before = {}, 0
    for (start, name), end in zip(marks, bounds[1:]):
        inside = [(rss, hwm) for t, rss, hwm in samples if start <= t < end]
        hwm = max((h for _, h in inside), default=before)
        peak = hwm if hwm > before else max((r for r, _ in inside), default=0)  # the HWM did not rise here
        phases[name] = (end - start, peak)
        before = max(before, hwm)
    return {"wall": wall, "exit": proc.returncode, "phases": phases, "peak_mib": before,
            "children_peak_mib": child_peak}


def command(args) -> str:
    """`rtanalysis report` on the 10^6 rung's log (simulated once into ``--data``), defaults."""
    tasks, seeds = RUNGS[args.rung]
    data = Path(args.data or tempfile.mkdtemp(prefix="bench_scale_command_"))
    logs = data / f"logs_{args.rung}" / "episodes.jsonl.gz"
    if not logs.exists():
        from rtanalysis.simulate import simulate

        simulate("leaderboard60", seed=0, tasks=tasks, seeds=seeds).write(logs.parent)
    out = Path(tempfile.mkdtemp(prefix="bench_scale_report_"))
    exe = Path(sys.executable).with_name("rtanalysis")
    res = run_command([str(exe), "report", str(logs), "--out", str(out)])
    diag = json.loads((out / "diagnostics.json").read_text()) if (out / "diagnostics.json").exists() else {}
    lines = [f"`rtanalysis report` on leaderboard60 {args.rung} ({tasks} tasks x {seeds} seeds), defaults; "
             f"seconds and peak resident MiB of the command's process per phase (sampled every 0.25 s)",
             f"{'phase':<10}{'s':>9}{'MiB':>9}"]
    for name, (sec, mib) in res["phases"].items():
        lines.append(f"{name:<10}{sec:9.1f}{mib:9.0f}")
    gb = lambda mib: mib * 2**20 / 1e9  # noqa: E731
    lines += [f"{'whole':<10}{res['wall']:9.1f}{res['peak_mib']:9.0f}   ({gb(res['peak_mib']):.3f} GB); "
              f"exit {res['exit']}",
              f"chain workers' peak {res['children_peak_mib']:.0f} MiB ({gb(res['children_peak_mib']):.3f} GB)",
              f"sampling {diag.get('sampling_only_seconds', float('nan'))} s; diagnostics ok {diag.get('ok')} "
              f"(max R-hat {diag.get('max_rhat')})"]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# memory of the aggregates at 10^7 decisions


def build_dataset(data: Path, decisions: int) -> Path:
    """Simulated leaderboard60 logs (pieces of ~1.4M decisions, distinct run ids) ingested as a
    dataset on one Dask worker, part by part; reused when ``data`` already holds it."""
    from rtanalysis.scale.distributed import ingest_distributed, local_client
    from rtanalysis.schema import COMMAND_KEY_DTYPE
    from rtanalysis.simulate import simulate

    ds = data / "dataset"
    if (ds / "dataset.json").is_file() and json.loads((ds / "ingest.json").read_text())["n_accepted"]:
        meta = json.loads((data / "built.json").read_text()) if (data / "built.json").exists() else {}
        if meta.get("decisions", 0) >= decisions:
            return ds
    n, seed = 0, 0
    while n < decisions:
        piece = data / "logs" / f"seed{seed:03d}"
        sim = simulate("leaderboard60", seed=seed, tasks=100, seeds=8)
        n += len(sim.arrays["decisions"]["episode"])
        sim.write(piece)
        del sim
        seed += 1
        print(f"  simulated {n:,} decisions", file=sys.stderr, flush=True)
    client = local_client(1)
    try:
        res = ingest_distributed([str(data / "logs")], ds, client, n_parts=seed)
    finally:
        client.close()
        client.cluster.close()
    (data / "built.json").write_text(json.dumps({"decisions": res.n_steps, "episodes": res.n_episodes}))
    print(f"  {res}", file=sys.stderr)
    return ds


def _aggregate_child(args) -> int:
    t0 = time.perf_counter()
    if args.path == "duckdb":
        from rtanalysis.scale import aggregate_dataset

        d = aggregate_dataset(args.dataset, memory_limit=args.memory_limit, threads=args.threads)
    else:  # the in-memory path: read the tables into pandas, then model.data.aggregate
        from rtanalysis.model.data import aggregate
        from rtanalysis.scale import read_dataset

        lr = read_dataset(args.dataset)
        d = aggregate(lr.episodes, lr.steps)
    took = time.perf_counter() - t0
    peak = _peak_mib()  # VmHWM: ru_maxrss would carry the parent's peak across exec
    print("RESULT " + json.dumps({"seconds": took, "peak_mib": peak, "cells": len(d.latency),
                                  "episodes": len(d.episodes)}))
    return 0


def _measure_aggregate(path: str, dataset: Path, memory_limit: str, threads: int) -> dict:
    cmd = [sys.executable, __file__, "_aggregate", "--path", path, "--dataset", str(dataset),
           "--memory-limit", memory_limit, "--threads", str(threads)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    lines = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
    return json.loads(lines[-1][7:]) if lines and not p.returncode else {"error": f"exit {p.returncode}"}


def memory(args) -> str:
    data = Path(args.data or tempfile.mkdtemp(prefix="bench_scale_"))
    big = build_dataset(data / "big", args.decisions)
    small = build_dataset(data / "small", args.compare_decisions)
    built = {k: json.loads((p.parent / "built.json").read_text()) for k, p in (("big", big), ("small", small))}
    lines = [f"aggregates from a Parquet dataset, fresh process each (DuckDB memory_limit {args.memory_limit}, "
             f"{args.threads} threads); peak = VmHWM of the process"]
    lines.append(f"{'path':<34}{'decisions':>12}{'episodes':>11}{'seconds':>10}{'peak MiB':>10}")
    for label, ds, which in (("DuckDB aggregate_dataset", big, "duckdb"),
                             ("DuckDB aggregate_dataset", small, "duckdb"),
                             ("pandas read_dataset + aggregate", small, "pandas")):
        key = "big" if ds == big else "small"
        r = _measure_aggregate(which, ds, args.memory_limit, args.threads)
        if "error" in r:
            lines.append(f"{label:<34}{built[key]['decisions']:>12,}  failed: {r['error']}")
            continue
        lines.append(f"{label:<34}{built[key]['decisions']:>12,}{built[key]['episodes']:>11,}"
                     f"{r['seconds']:10.1f}{r['peak_mib']:10.0f}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# dask throughput


def dask_throughput(args) -> str:
    from rtanalysis.scale.distributed import ingest_distributed, local_client

    data = Path(args.data or tempfile.mkdtemp(prefix="bench_scale_"))
    logs = Path(args.logs) if args.logs else data / "small" / "logs"
    if not logs.exists():
        build_dataset(data / "small", args.compare_decisions)
    lines = [f"ingest of {logs} on local Dask workers (processes, 1 thread each); wall clock incl. writing Parquet"]
    lines.append(f"{'workers':>8}{'parts':>7}{'decisions':>12}{'seconds':>10}{'decisions/s':>13}")
    for n in args.workers:
        client = local_client(n)
        try:
            client.submit(sum, [1]).result()  # workers up before the clock starts
            t0 = time.perf_counter()
            res = ingest_distributed([str(logs)], data / f"dask{n}", client, n_parts=max(4, 2 * n))
            took = time.perf_counter() - t0
        finally:
            client.close()
            client.cluster.close()
        lines.append(f"{n:>8}{res.n_parts:>7}{res.n_steps:>12,}{took:10.1f}{res.n_steps / took:13,.0f}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------


def _header() -> str:
    return (f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {platform.processor() or platform.machine()}, "
            f"{os.cpu_count()} cores; load average at start {tuple(round(x, 1) for x in os.getloadavg())}; "
            f"python {platform.python_version()}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    lad = sub.add_parser("ladder")
    lad.add_argument("--quick", action="store_true")
    lad.add_argument("--draws", type=int, default=None)
    lad.add_argument("--chains", type=int, default=None)
    lad.add_argument("--rungs", nargs="+", choices=list(RUNGS), default=None,
                     help="these rungs only (default: all; --quick: 1e4 1e5)")
    mem = sub.add_parser("memory")
    mem.add_argument("--decisions", type=float, default=1e7)
    mem.add_argument("--compare-decisions", type=float, default=1.4e6)
    mem.add_argument("--memory-limit", default="512MB")
    mem.add_argument("--threads", type=int, default=2)
    mem.add_argument("--data", default=None, help="folder for the generated logs/datasets (kept; reused)")
    dk = sub.add_parser("dask")
    dk.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    dk.add_argument("--compare-decisions", type=float, default=1.4e6)
    dk.add_argument("--data", default=None)
    dk.add_argument("--logs", default=None, help="a folder of log files to ingest (default: DATA/small/logs)")
    cm = sub.add_parser("command")
    cm.add_argument("--rung", choices=list(RUNGS), default="1e6")
    cm.add_argument("--data", default=None, help="folder for the simulated log (kept; reused)")
    ch = sub.add_parser("_rung")
    for a in ("--tasks", "--seeds", "--draws", "--chains"):
        ch.add_argument(a, type=int, required=True)
    ag = sub.add_parser("_aggregate")
    ag.add_argument("--path", choices=("duckdb", "pandas"), required=True)
    ag.add_argument("--dataset", required=True)
    ag.add_argument("--memory-limit", default="512MB")
    ag.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    if args.cmd == "_rung":
        return _child(args)
    if args.cmd == "_aggregate":
        return _aggregate_child(args)
    head = _header()
    body = {"ladder": ladder, "memory": memory, "dask": dask_throughput, "command": command}[args.cmd](args)
    text = f"{head}\n{body}\n# load average at end {tuple(round(x, 1) for x in os.getloadavg())}\n"
    append_result({"ladder": "bench_scale.txt", "memory": "bench_scale_memory.txt",
                   "dask": "bench_scale_dask.txt", "command": "bench_scale_command.txt"}[args.cmd], text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
