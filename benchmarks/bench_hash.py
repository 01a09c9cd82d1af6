"""The data hash every report records, three ways side by side on `leaderboard60` logs: the whole
frame sorted and copied as text, then hashed (before 2026-12-03); column by column with numbers
hashed as float64 and text rows in pieces (``rtanalysis.model.fit.data_hash``); and the same digest
with each distinct text value hashed once and looked up per row (tried 2026-12-04, not adopted:
no faster). Seconds, the peak RSS growth of each, in a fresh process each, the digests (the last two
must agree) and the ratios.

    .venv/bin/python benchmarks/bench_hash.py [--tasks 100 --seeds 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path


def whole_frame_as_text(episodes, steps) -> str:
    """The former data hash: a sorted copy of each frame, all of it converted to str."""
    import pandas as pd

    h = hashlib.sha256()
    for frame, keys in ((episodes, ["run_id", "episode_id"]), (steps, ["run_id", "episode_id", "step"])):
        f = frame.sort_values(keys).reset_index(drop=True)
        f = f.drop(columns=[c for c in ("source_file", "source_line") if c in f.columns])
        h.update(",".join(map(str, f.columns)).encode())
        h.update(pd.util.hash_pandas_object(f.astype(str), index=False).to_numpy().tobytes())
    return h.hexdigest()


def distinct_text_values(episodes, steps) -> str:
    """``data_hash`` with each distinct value of a text column hashed once, then looked up per row
    (the same row hashes, so the same digest)."""
    import importlib

    import pandas as pd

    fit_module = importlib.import_module("rtanalysis.model.fit")
    rows = fit_module._column_digest

    def digest(col):
        if not isinstance(col.dtype, (pd.StringDtype, pd.CategoricalDtype)):
            return rows(col)
        codes, uniques = pd.factorize(col, use_na_sentinel=False)
        return pd.util.hash_pandas_object(pd.Series(uniques).astype(str), index=False).to_numpy()[codes].tobytes()

    fit_module._column_digest = digest
    try:
        return fit_module.data_hash(episodes, steps)
    finally:
        fit_module._column_digest = rows


WAYS = ("whole_frame_as_text", "column_by_column", "distinct_text_values")


def _peak_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _child(args) -> int:
    import tempfile

    from rtanalysis import load
    from rtanalysis.model.inputs import data_hash
    from rtanalysis.simulate import simulate

    with tempfile.TemporaryDirectory() as tmp:
        logs = simulate("leaderboard60", seed=0, tasks=args.tasks, seeds=args.seeds).write(Path(tmp))["episodes"]
        lr = load([str(logs)])
    fn = {"whole_frame_as_text": whole_frame_as_text, "column_by_column": data_hash,
          "distinct_text_values": distinct_text_values}[args.way]
    Path("/proc/self/clear_refs").write_text("5")
    before = _peak_kib()
    t = time.perf_counter()
    digest = fn(lr.episodes, lr.steps)
    print("RESULT " + json.dumps({"seconds": time.perf_counter() - t, "peak_growth_mib": (_peak_kib() - before) / 1024,
                                  "decisions": len(lr.steps), "digest": digest}))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--way", default=None)
    args = ap.parse_args(argv)
    if args.way:
        return _child(args)
    got = {}
    for way in WAYS:
        p = subprocess.run([sys.executable, __file__, "--tasks", str(args.tasks), "--seeds", str(args.seeds),
                            "--way", way], stdout=subprocess.PIPE, text=True, check=True)
        got[way] = json.loads(p.stdout.split("RESULT ", 1)[1])
    n = got["column_by_column"]["decisions"]
    print(f"data hash of leaderboard60 --tasks {args.tasks} --seeds {args.seeds} ({n:,} decisions)")
    for way, r in got.items():
        print(f"  {way:<22} {r['seconds']:8.2f} s  peak RSS growth {r['peak_growth_mib']:8.0f} MiB  {r['digest'][:16]}")
    b = got["column_by_column"]
    for way in (WAYS[0], WAYS[2]):
        a = got[way]
        print(f"  column_by_column against {way}: {a['seconds'] / b['seconds']:.1f}x faster, "
              f"{a['peak_growth_mib'] / max(b['peak_growth_mib'], 1):.1f}x less peak memory")
    print(f"  distinct_text_values gives the same digest: {got['distinct_text_values']['digest'] == b['digest']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
