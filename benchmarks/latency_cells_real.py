"""Which latency cells of the real fixtures the model learns latency from (``informative``), with and
without clock effects, and how many of them only the rule of 2026-12-04 lets in (one or two acted
latencies that do not repeat; before, fewer than 3 distinct values always meant "constant").

    .venv/bin/python benchmarks/latency_cells_real.py
"""

from __future__ import annotations

import rtanalysis
from _results import append_result
from rtanalysis.model.data import MIN_DISTINCT_LATENCIES, aggregate

FIXTURES = {"realtimegym": "tests/data/real/realtimegym", "inspect": "tests/data/real/inspect"}


def main() -> str:
    lines = ["fixture       clock_effects  cells  informative  informative only under the new rule"]
    for name, path in FIXTURES.items():
        lr = rtanalysis.load(path)
        for clock_effects in (False, True):
            L = aggregate(lr.episodes, lr.steps, clock_effects=clock_effects).latency
            new = int((L["informative"] & (L["n_distinct"] < MIN_DISTINCT_LATENCIES)).sum())
            lines.append(f"{name:<13} {str(clock_effects):<14} {len(L):5d}  {int(L['informative'].sum()):11d}  {new:5d}")
    return "\n".join(lines)


if __name__ == "__main__":
    append_result("latency_cells_real.txt", main())
