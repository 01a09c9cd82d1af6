"""Leaderboard scale: the tidy tables as a partitioned Parquet dataset, the model's sufficient
statistics computed from it out of core by DuckDB, and the same ingest spread over a Dask cluster.

* :mod:`.dataset` — ``DIR/episodes/model=…/part-NNNNN.parquet`` and ``DIR/steps/…`` (hive
  partitions by model), written by ``rtanalysis ingest --dataset`` and read back into a
  :class:`~rtanalysis.LoadResult` identical to loading the logs.
* :mod:`.aggregate` — :func:`aggregate_dataset`: the :class:`~rtanalysis.model.data.ModelData` of a
  dataset, equal (to floating point) to :func:`rtanalysis.model.data.aggregate`, in bounded memory.
* :mod:`.distributed` — :func:`ingest_distributed`: log files across Dask workers, each running
  the same validated loader; quarantine and per-file counts gathered; one dataset written.

Imports are lazy: ``duckdb`` and ``dask`` are only needed by the functions that use them.
"""

from .dataset import is_dataset, read_dataset, write_dataset

__all__ = ["is_dataset", "read_dataset", "write_dataset", "aggregate_dataset", "ingest_distributed"]


def __getattr__(name):
    if name == "aggregate_dataset":
        from .aggregate import aggregate_dataset

        return aggregate_dataset
    if name == "ingest_distributed":
        from .distributed import ingest_distributed

        return ingest_distributed
    raise AttributeError(name)
