"""The one runner of the speed and memory benchmarks: runs each in a fresh process and appends its
output to ``benchmarks/results/<file>``, headed by the machine it ran on (``_results.machine_header``:
CPU model, cores, memory, Python and numpy / pymc / nutpie / pandas versions, git commit, date,
OMP_NUM_THREADS, load average).

    python benchmarks/run.py --list                  # the benchmarks, their commands and result files
    python benchmarks/run.py [NAME ...] [--quick]    # all of them (default) or the ones named
    python benchmarks/run.py scale --args "memory --decisions 1e7"   # other arguments for one benchmark

``--quick``: each benchmark's smallest setting (a smoke run; its figures are not the ones the docs
cite), recorded the same way but in ``benchmarks/results/quick/`` (ignored by git). Why a runner of our
own rather than pytest-benchmark or asv: ``benchmarks/README.md``. Run from the repository root with
the project's environment (``make bench`` does).
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _results import RESULTS, RUNNER_ENV, machine_header  # noqa: E402


@dataclass(frozen=True)
class Benchmark:
    script: str
    what: str
    args: tuple[str, ...] = ()
    quick: tuple[str, ...] = ()
    #: the result file, or {first argument: file} for a script with several modes
    results: str | dict = ""

    def result_file(self, argv: list[str]) -> str:
        if isinstance(self.results, dict):
            return self.results.get(argv[0] if argv else "", next(iter(self.results.values())))
        return self.results or Path(self.script).stem + ".txt"


#: at most ten, each printing its alternatives side by side with their ratio
BENCHMARKS = {
    "load": Benchmark("bench_load.py", "loader throughput (decisions per CPU-second) and peak RSS: load_rtlog on "
                      ".jsonl, .jsonl.gz and 500 files against stdlib json and orjson parse-only",
                      quick=("--decisions", "100000")),
    "load_memory": Benchmark("bench_load_memory.py", "memory a large load leaves behind, with and without "
                             "giving freed heap back to the OS, and the peaks of the stages after it",
                             args=("--rung", "1e6"), quick=("--rung", "1e4")),
    "hash": Benchmark("bench_hash.py", "the report's data hash: whole frame as text against column by column "
                      "(and per distinct text value): seconds and peak RSS growth", quick=("--tasks", "10")),
    "codes": Benchmark("bench_codes.py", "per-decision groupings and cell lookups by integer codes against pandas "
                       "group-bys and a dictionary lookup", quick=("--tasks", "10")),
    "setup": Benchmark("bench_setup.py", "model set-up (graph build + compile/load of the log-density) for three "
                       "data shapes (--backends: numba, C and JAX from empty caches)"),
    "fit": Benchmark("bench_fit.py", "fit time: N vs 100xN episodes, nutpie vs PyMC NUTS (and numpyro), "
                     "aggregated vs per-row likelihood, the CLI on data/example (--episode-effects-only: the defaults, "
                     "decisions independent vs episode slowness)", quick=("--quick",)),
    "kernel": Benchmark("bench_kernel.py", "the capability likelihood's gradient: PyTensor graph vs numba loop vs "
                        "NumPy, and the sampling time it implies", quick=("--tasks", "10", "--reps", "20")),
    "derived": Benchmark("bench_derived.py", "derived quantities: capability kept per set of draws vs recomputed "
                         "per scenario; P(capable) by distinct items vs per class",
                         quick=("--tasks", "10", "--draws", "500")),
    "scale": Benchmark("bench_scale.py", "the scale ladder 10^4/10^5/10^6 episodes: seconds and peak RSS per "
                       "report stage (other modes: memory, dask, command)", args=("ladder",),
                       quick=("ladder", "--quick"),
                       results={"ladder": "bench_scale.txt", "memory": "bench_scale_memory.txt",
                                "dask": "bench_scale_dask.txt", "command": "bench_scale_command.txt"}),
    "fit_memory": Benchmark("bench_fit_memory.py", "resident memory across repeated fits in one process: the "
                            "compiled log-density re-used vs loaded again per fit", quick=("--fits", "3")),
}


def run(name: str, quick: bool, extra: list[str] | None) -> int:
    b = BENCHMARKS[name]
    argv = list(extra) if extra is not None else list(b.quick if quick else b.args)
    cmd = [sys.executable, str(HERE / b.script), *argv]
    shown = " ".join(["python", f"benchmarks/{b.script}", *map(shlex.quote, argv)])
    header = machine_header(shown + ("  [quick]" if quick and extra is None else ""))
    print(header, flush=True)
    env = dict(os.environ, **{RUNNER_ENV: "1"})
    root = HERE.parent
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH")) if p)
    t0 = time.perf_counter()
    # stdout is the result (recorded); stderr (progress bars, sampler chatter) goes to the terminal only
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=root, bufsize=1)
    out = []
    try:
        for line in proc.stdout:
            sys.stdout.write(line)
            out.append(line)
        rc = proc.wait()
        footer = f"# exit status {rc}, {time.perf_counter() - t0:.0f} s wall"
    except (KeyboardInterrupt, SystemExit):  # interrupted or terminated: stop the benchmark, keep what it printed
        proc.terminate()
        proc.wait()
        rc = 130
        footer = f"# interrupted after {time.perf_counter() - t0:.0f} s wall"
    print(footer)
    # quick runs are smoke runs: recorded apart (results/quick/, not kept in git), not among the cited figures
    where = RESULTS / "quick" if quick and extra is None else RESULTS
    where.mkdir(parents=True, exist_ok=True)
    with open(where / b.result_file(argv), "a") as fh:
        fh.write(header + "\n" + "".join(out).rstrip("\n") + "\n" + footer + "\n\n")
    return rc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", metavar="NAME", help=f"of {', '.join(BENCHMARKS)} (default: all)")
    ap.add_argument("--quick", action="store_true", help="each benchmark's smallest setting")
    ap.add_argument("--args", default=None, help="the arguments for the (one) named benchmark instead of its own")
    ap.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a terminated runner stops its benchmark too
    if args.list:
        for name, b in BENCHMARKS.items():
            print(f"{name:<12} benchmarks/{b.script} {' '.join(b.args)}  -> results/{b.result_file(list(b.args))}"
                  f"  (--quick: {' '.join(b.quick) or 'the same'})\n             {b.what}")
        return 0
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        ap.error(f"unknown benchmark(s) {unknown}; known: {', '.join(BENCHMARKS)}")
    if args.args is not None and len(args.names) != 1:
        ap.error("--args needs exactly one NAME")
    failed = [n for n in (args.names or list(BENCHMARKS))
              if run(n, args.quick, shlex.split(args.args) if args.args is not None else None) != 0]
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
