"""Ingest on a Dask cluster: log files spread over workers, one partitioned Parquet dataset out.

Each task loads a contiguous batch of files with the package's own loader (:func:`rtanalysis.load`:
the same validation, the same quarantine; no second implementation of the rules) and writes its
tables as one *part* of the dataset (:mod:`.dataset`). The client gathers what is small — the
quarantine rows, the per-file counts and the episode keys — and writes ``quarantine.jsonl``,
``ingest.json`` and ``dataset.json``. The result is exactly the single-process one:

* file order is kept (batches are contiguous; parts are concatenated in order);
* a ``(run_id, episode_id)`` seen in an earlier batch is a duplicate, as in one process: the batches
  holding such keys are loaded again with a sink that already knows the earlier keys, so their
  quarantine rows (reason, order, raw text) come from the loader itself.

The aggregates the model needs are then computed from the dataset by DuckDB
(:func:`~rtanalysis.scale.aggregate_dataset`), run as one task on a worker: order statistics and
medians are holistic, so that step streams the dataset out of core rather than summing partials.
``DIR`` must be visible to every worker under the same path (a shared file system).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .. import schema
from ..io import EpisodeSink, LoadResult, find_log_files
from .dataset import remove_part, write_meta, write_part


@dataclass
class DatasetIngest:
    """What a distributed ingest produced: the dataset folder, quarantine and per-file counts."""

    root: Path
    quarantine: pd.DataFrame
    files: pd.DataFrame = field(repr=False)
    n_episodes: int = 0
    n_steps: int = 0
    n_parts: int = 0
    reloaded_parts: int = 0
    seconds: float = 0.0

    def as_load_summary(self) -> LoadResult:
        """A :class:`~rtanalysis.LoadResult` without tables, for its counts and ``summary()``."""
        return LoadResult(schema.empty(schema.EPISODE_COLUMNS), schema.empty(schema.STEP_COLUMNS),
                          self.quarantine, self.files)

    def __str__(self) -> str:
        s = self.as_load_summary()
        return (f"read {s.n_read} records from {len(self.files)} file(s): {s.n_accepted} accepted, "
                f"{s.n_quarantined} quarantined; {self.n_episodes} episodes, {self.n_steps} decisions "
                f"({self.n_parts} parts)")


class _SeededSink(EpisodeSink):
    """A sink that already knows the episode keys earlier batches accepted (key -> (file, line)),
    so it quarantines their duplicates exactly as a single pass over all files would."""

    def __init__(self, seen: dict):
        super().__init__()
        self._seen.update(seen)


def _load(units: list[tuple[str, str]], sink: EpisodeSink, options: dict) -> LoadResult:
    from ..adapters import load as load_any

    fmt = {f for f, _ in units}
    return load_any([p for _, p in units], format=fmt.pop() if len(fmt) == 1 else "auto", _sink=sink, **options)


def load_part(part: int, units: list[tuple[str, str]], root: str, options: dict, seen: dict | None = None) -> dict:
    """Worker task: load one batch of files, write it as dataset part ``part``; return the small
    things the client gathers (quarantine, per-file counts, episode keys, extra columns)."""
    result = _load(units, _SeededSink(seen) if seen else EpisodeSink(), options)
    remove_part(root, part)
    extra = write_part(result, root, part)
    keys = result.episodes[["run_id", "episode_id", "source_file", "source_line"]].copy()
    fb = result.steps[["run_id", "fallback"]]
    return {"part": part, "quarantine": result.quarantine, "files": result.files, "extra": extra, "keys": keys,
            "n_episodes": len(result.episodes), "n_steps": len(result.steps),
            # for the fallback rule across batches (a run that logs fallback anywhere logs it everywhere)
            "fallback_runs": set(fb.loc[fb["fallback"].notna(), "run_id"]),
            "unlabelled_runs": set(fb.loc[fb["fallback"].isna(), "run_id"])}


def fill_fallback_part(root: str, part: int, runs: set) -> None:
    """Worker task: the loader's fallback rule across batches. In part ``part``, a decision of a run
    in ``runs`` (runs that log ``fallback`` in some batch) without the field did not fall back."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    for f in (Path(root) / "steps").glob(f"model=*/part-{part:05d}.parquet"):
        t = pq.read_table(f)
        i = t.schema.get_field_index("fallback")
        col = t.column(i)
        fill = pc.and_(pc.is_null(col), pc.is_in(t.column("run_id"), value_set=pa.array(sorted(runs))))
        fixed = pc.if_else(fill, pa.scalar(False, col.type), col)
        pq.write_table(t.set_column(i, t.schema.field(i), fixed), f)


def log_units(paths, format: str = "auto") -> list[tuple[str, str]]:

    """(format, path) of every unit of work, in the order the single-process loader reads them:
    rtlog directories expand to their files; other formats' paths stay whole."""
    from ..adapters import detect_format

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    groups: dict[str, list] = {}
    for p in paths:
        name = detect_format(p) if format == "auto" else format
        groups.setdefault(name, []).append(p)
    units = []
    for name, items in groups.items():
        if name == "rtlog":
            units += [(name, str(f)) for f in find_log_files(items)]
        else:
            units += [(name, str(p)) for p in items]
    return units


def batches(units: list, n: int) -> list[list]:
    """``units`` cut into at most ``n`` contiguous batches of about equal bytes."""
    if not units:
        return []
    sizes = [max(Path(p).stat().st_size if Path(p).is_file() else 1, 1) for _, p in units]
    total, target = sum(sizes), sum(sizes) / max(1, min(n, len(units)))
    out, cur, acc = [], [], 0.0
    for u, s in zip(units, sizes):
        if cur and acc + s / 2 > target * (len(out) + 1) and len(out) < n - 1:
            out.append(cur)
            cur = []
        cur.append(u)
        acc += s
    out.append(cur)
    assert sum(map(len, out)) == len(units) and total > 0
    return out


def _duplicates_of_earlier_parts(results: list[dict]) -> dict[int, dict]:
    """For each part holding a key accepted by an earlier part: {key: (file, line) of the first}."""
    keys = pd.concat([r["keys"].assign(part=r["part"]) for r in results], ignore_index=True)
    if keys.empty:
        return {}
    # a part's own keys are unique (its sink saw to that): every repeat is in a later part
    first = keys.drop_duplicates(["run_id", "episode_id"], keep="first")
    later = keys[keys.duplicated(["run_id", "episode_id"], keep="first")]
    out: dict[int, dict] = {}
    where = first.set_index(["run_id", "episode_id"])
    for part, rows in later.groupby("part"):
        out[int(part)] = {(r, e): (str(where.loc[(r, e), "source_file"]), int(where.loc[(r, e), "source_line"]))
                          for r, e in rows[["run_id", "episode_id"]].itertuples(index=False)}
    return out


def ingest_distributed(paths, out_dir, client, format: str = "auto", n_parts: int | None = None,
                       **options) -> DatasetIngest:
    """Load ``paths`` on the Dask ``client``'s workers into the dataset ``out_dir``.

    ``n_parts``: batches of files (default: 4 per worker, at most one per file). ``options`` go to
    the format readers, as for :func:`rtanalysis.load`. Writes ``quarantine.jsonl``, ``ingest.json``
    and ``dataset.json`` next to the tables; no metrics (``rtanalysis report DIR`` computes them)."""
    from dask.distributed import wait

    from ..reporting.ingest import write_quarantine_and_counts

    t0 = time.time()
    root = Path(out_dir).resolve()
    root.mkdir(parents=True, exist_ok=True)
    _clear_tables(root)
    options = {k: v for k, v in options.items() if k != "progress"}
    units = log_units(paths, format)
    n_workers = max(1, len(client.scheduler_info().get("workers", {})))
    plan = batches(units, n_parts or 4 * n_workers)
    futures = [client.submit(load_part, i, b, str(root), options, pure=False) for i, b in enumerate(plan)]
    wait(futures)
    results = client.gather(futures)
    redo = _duplicates_of_earlier_parts(results)
    if redo:  # rare: keys repeated across batches; those batches again, knowing the earlier keys
        again = [client.submit(load_part, p, plan[p], str(root), options, seen, pure=False) for p, seen in redo.items()]
        for r in client.gather(again):
            results[r["part"]] = r
    runs = set().union(*(r["fallback_runs"] for r in results)) if results else set()
    fill = [r["part"] for r in results if r["unlabelled_runs"] & runs]
    client.gather([client.submit(fill_fallback_part, str(root), p, runs, pure=False) for p in fill])
    out = _combine(root, results, len(plan), len(redo), t0)
    write_quarantine_and_counts(out.quarantine, out.as_load_summary().summary(), root)
    return out


def _clear_tables(root: Path) -> None:
    import shutil

    for table in ("episodes", "steps"):
        if (root / table).exists():
            shutil.rmtree(root / table)


def _combine(root: Path, results: list[dict], n_parts: int, n_reloaded: int, t0: float) -> DatasetIngest:
    extra: dict[str, str] = {}
    for r in results:
        for c, d in r["extra"].items():
            if c in extra and extra[c] != d:
                extra[c] = "str"  # text in one batch, numbers in another: text, as in one pass
            extra.setdefault(c, d)
    write_meta(root, n_parts, extra)
    quarantine = schema.conform(pd.concat([r["quarantine"] for r in results], ignore_index=True)
                                if results else schema.empty(schema.QUARANTINE_COLUMNS), schema.QUARANTINE_COLUMNS)
    files = (pd.concat([r["files"] for r in results], ignore_index=True) if results else
             pd.DataFrame({"path": [], "n_read": [], "n_accepted": [], "n_quarantined": []}))
    files = files.astype({"path": "str", "n_read": "int64", "n_accepted": "int64", "n_quarantined": "int64"})
    return DatasetIngest(root, quarantine, files, sum(r["n_episodes"] for r in results),
                         sum(r["n_steps"] for r in results), n_parts, n_reloaded, round(time.time() - t0, 3))


def aggregate_on_cluster(root, client, **kwargs):
    """:func:`~rtanalysis.scale.aggregate_dataset` as one task on a worker (the client holds nothing)."""
    from .aggregate import aggregate_dataset

    return client.submit(aggregate_dataset, str(root), pure=False, **kwargs).result()


def local_client(n_workers: int, processes: bool = True):
    """A client on a new local cluster of ``n_workers`` single-threaded workers."""
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=processes,
                           dashboard_address=":0")
    return Client(cluster)
