"""Where benchmark scripts record what they measured, and on what: printed, and appended to
``benchmarks/results/<name>`` (a log kept in the repository, newest run last), every run's block
headed by :func:`machine_header` (the one function that describes the machine, used by the runner
``benchmarks/run.py`` and by scripts run on their own)."""

from __future__ import annotations

import os
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
#: set by ``benchmarks/run.py`` for the benchmark it runs: the runner records the whole output, so
#: :func:`append_result` only prints
RUNNER_ENV = "RTANALYSIS_BENCH_RUNNER"


def _first(path: str, key: str) -> str | None:
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def _git_commit() -> str:
    import subprocess

    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return head + (" (uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine() -> dict:
    """The machine and software a measurement ran on: CPU model, cores (usable / online), memory,
    Python, numpy / pymc / nutpie / pandas versions, the git commit, the date (UTC), OMP_NUM_THREADS
    and the load average (on a shared machine, seconds compare only within a run)."""
    import platform
    import sys
    import time

    mem_kib = _first("/proc/meminfo", "MemTotal")
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    try:
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "unknown"
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "cpu": _first("/proc/cpuinfo", "model name") or platform.processor() or platform.machine(),
        "cores": f"{usable} usable of {os.cpu_count()}",
        "memory": f"{int(mem_kib.split()[0]) / 2**20:.1f} GiB" if mem_kib else "unknown",
        "os": f"{platform.system()} {platform.release()}",
        "python": sys.version.split()[0],
        "numpy": _version("numpy"), "pymc": _version("pymc"), "nutpie": _version("nutpie"),
        "pandas": _version("pandas"),
        "git": _git_commit(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "unset"),
        "load average": load,
    }


def machine_header(command: str | None = None) -> str:
    """The header every recorded run starts with: ``# machine: ...`` lines (see :func:`machine`),
    and the command when given."""
    m = machine()
    lines = [f"# ==== run {m.pop('date')}" + (f": {command}" if command else "")]
    lines.append(f"# machine: {m.pop('cpu')}; cores {m.pop('cores')}; memory {m.pop('memory')}; {m.pop('os')}")
    lines.append(f"# software: python {m.pop('python')}, numpy {m.pop('numpy')}, pymc {m.pop('pymc')}, "
                 f"nutpie {m.pop('nutpie')}, pandas {m.pop('pandas')}; git {m.pop('git')}")
    lines.append("# " + "; ".join(f"{k} {v}" for k, v in m.items()))
    return "\n".join(lines)


def append_result(name: str, text: str) -> None:
    """Print ``text``; run on its own (not by ``run.py``, which records the whole output itself),
    also append it to ``results/<name>`` after :func:`machine_header`, followed by a blank line."""
    import sys

    print(text)
    if os.environ.get(RUNNER_ENV):
        return
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / name, "a") as fh:
        fh.write(machine_header(" ".join(["python"] + sys.argv)) + "\n" + text + "\n\n")

