"""Does every real-format fixture pass the diagnostics gate at the defaults, on the first attempt?

Fits each set of logs the harnesses themselves wrote (``tests/data/real``) with ``rtanalysis.fit`` at
the package's defaults, once per seed, and appends one row per fit to
``studies/results/real_fixtures_gate.csv``: set, seed, episodes, first attempt passed or retried,
and the gate's numbers (of the attempt that was kept). Run from the repository root::

    python studies/real_fixtures_gate.py [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

import rtanalysis
from _common import RESULTS

REAL = Path("tests/data/real")
SETS = {"realtimegym": [REAL / "realtimegym/stub-a", REAL / "realtimegym/stub-b"], "inspect": [REAL / "inspect"],
        "response_slots": [REAL / "response_slots/slots.csv"], "llm_colosseum": [REAL / "llm_colosseum"],
        "terminal_bench": [REAL / "terminal_bench"], "harbor": [REAL / "harbor"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--out", default=str(RESULTS / "real_fixtures_gate.csv"))
    p.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS),
                   help="the sets to fit (default all); the rows of the others in --out are kept")
    args = p.parse_args(argv)
    rows = []
    for name, paths in ((n, SETS[n]) for n in args.sets):
        logs = rtanalysis.load([str(x) for x in paths])
        for seed in args.seeds:
            t0 = time.time()
            d = rtanalysis.fit(logs, progress=False, seed=seed).diagnostics
            rows.append({"set": name, "seed": seed, "episodes": logs.n_accepted, "ok": d["ok"],
                         "first_attempt": not d.get("retried"), "max_rhat": round(d["max_rhat"], 4),
                         "min_ess_bulk": round(d["min_ess_bulk"]), "min_ess_tail": round(d["min_ess_tail"]),
                         "n_divergent": d["n_divergent"], "seconds": round(time.time() - t0, 1)})
            print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    if Path(args.out).exists() and set(args.sets) != set(SETS):  # refit some sets: keep the others' rows
        kept = pd.read_csv(args.out)
        table = pd.concat([kept[~kept["set"].isin(args.sets)], table], ignore_index=True)
    table.to_csv(args.out, index=False)
    print(f"{int(table['first_attempt'].sum())} of {len(table)} fits passed on the first attempt; wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
