"""The model's sufficient statistics from a Parquet dataset, by DuckDB, in bounded memory.

:func:`aggregate_dataset` returns the same :class:`~rtanalysis.model.data.ModelData` as
:func:`rtanalysis.model.data.aggregate` on the loaded tables (equal to floating point; a test holds
the two together on every simulate preset), without ever holding the steps table in pandas: every
per-decision reduction runs in DuckDB, which streams the Parquet files and spills to disk past its
``memory_limit``. What reaches pandas is per episode (the success groups, the length covariate)
or per cell. The per-episode steps mirror ``aggregate`` line by line, with the same NumPy/pandas
code, so the groups (and their float keys) are bit-identical; sums and order statistics of log-latency
differ from NumPy's only in rounding (DuckDB's ``ln``, Kahan sums ``fsum``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..schema import TIMED_CLOCKS
from .dataset import connect, read_meta, table_glob


#: DuckDB's memory for the aggregates: 10^7 decisions peak at ~1 GiB in all (docs/user-guide/scale.md); more
#: is faster
AGGREGATE_MEMORY_LIMIT = "256MB"


def aggregate_dataset(root, memory_limit: str = AGGREGATE_MEMORY_LIMIT, threads: int | None = None,
                      temp_dir=None, read_ended: bool = True):
    """:class:`~rtanalysis.model.data.ModelData` of the dataset at ``root`` (see
    :mod:`rtanalysis.scale.dataset`).

    ``memory_limit``: DuckDB's (it spills beyond it, to ``temp_dir`` or its default); ``threads``:
    DuckDB's worker threads (default: all cores); ``read_ended``: as
    :func:`~rtanalysis.model.data.aggregate`'s. Raises ``ValueError`` on unusable input."""
    root = Path(root)
    read_meta(root)
    eglob, sglob = table_glob(root, "episodes"), table_glob(root, "steps")
    if eglob is None:
        raise ValueError("no episodes to fit: the data has 0 accepted episodes")
    with connect(memory_limit, threads, temp_dir) as con:
        levels = _levels(con, eglob)
        e = _episode_codes(con, eglob, levels, read_ended)
        _step_view(con, sglob)
        type_log_g = _add_episode_counts(con, e, len(levels["task_types"]))
        return _assemble(con, e, levels, type_log_g)


#: the level lists of ModelData and the episode column each comes from
_LEVELS = {"models": "model", "task_types": "task_type", "units": "time_unit", "items": "task", "clocks": "clock"}


def _levels(con, eglob: str) -> dict[str, list[str]]:
    """Sorted distinct names (Python's order, as ``aggregate``); ``items`` without a missing task."""
    out = {}
    for name, col in _LEVELS.items():
        values = con.sql(f"SELECT DISTINCT {col} FROM read_parquet('{eglob}', union_by_name = true)").fetchall()
        out[name] = sorted(v for (v,) in values if v is not None)
    return out


def _episode_codes(con, eglob: str, levels: dict, read_ended: bool = True) -> pd.DataFrame:
    """The per-episode frame ``e`` of ``aggregate`` (its first columns), in the loader's row order
    (``ep`` = position). Only integer codes leave DuckDB; names are rebuilt from the level lists, so
    a million episodes cost a few integer columns, not a million strings."""
    from ..model.data import add_ended_flags

    for name, col in _LEVELS.items():
        con.register(f"lv_{name}", pd.DataFrame({col: pd.Series(levels[name], dtype=object),
                                                 "code": np.arange(len(levels[name]), dtype=np.int64)}))
    joins = " ".join(f"LEFT JOIN lv_{name} ON e.{col} = lv_{name}.{col}" for name, col in _LEVELS.items())
    codes = ", ".join(f"coalesce(lv_{name}.code, -1) AS c_{name}" for name in _LEVELS)
    columns = {c for (c,) in con.execute(f"SELECT column_name FROM (DESCRIBE SELECT * FROM "
                                         f"read_parquet('{eglob}', union_by_name = true))").fetchall()}
    ended = "e.ended" if "ended" in columns and read_ended else "NULL::VARCHAR"
    con.execute(f"""CREATE TEMP TABLE epc AS
        SELECT (row_number() OVER (ORDER BY e._part, e._row) - 1)::BIGINT AS ep, e._part, e._row, e.n_steps,
               {codes}, e.success, {ended} AS ended
        FROM read_parquet('{eglob}', union_by_name = true) e {joins}""")
    got = con.execute("SELECT c_models, c_task_types, c_units, c_items, c_clocks, success, ended FROM epc ORDER BY ep"
                      ).fetchnumpy()
    ended_values = np.asarray(got.pop("ended"), dtype=object)
    clocks = np.array(levels["clocks"], dtype=object)[np.asarray(got.pop("c_clocks"))]
    e = pd.DataFrame({"m": np.asarray(got.pop("c_models"), dtype=np.int64),
                      "k": np.asarray(got.pop("c_task_types"), dtype=np.int64),
                      "u": np.asarray(got.pop("c_units"), dtype=np.int64),
                      "i": np.asarray(got.pop("c_items"), dtype=np.int64),
                      "clock": clocks, "y": np.asarray(got.pop("success"), dtype=bool).astype(np.int64)})
    e["timed"] = e["clock"].isin(TIMED_CLOCKS)
    # the survival reading's flags (:func:`rtanalysis.model.data._episode_ends`); the last decision's, later
    add_ended_flags(e, ended_values)
    timed = np.array([c in TIMED_CLOCKS for c in levels["clocks"]], dtype=bool)
    con.register("lv_timed", pd.DataFrame({"c_clocks": np.arange(len(timed), dtype=np.int64), "timed": timed}))
    # where each episode's decisions start in its part's steps (written in episode order): decisions
    # find their episode by position (an ASOF join on integers), not by the text keys
    con.execute("""CREATE TEMP TABLE epk AS
        SELECT epc._part, (sum(epc.n_steps) OVER (PARTITION BY epc._part ORDER BY epc._row) - epc.n_steps)::BIGINT
               AS start, epc.ep, epc.c_models AS m, epc.c_task_types AS k, epc.c_units AS u, epc.c_clocks AS c,
               epc.c_items AS i, lv_timed.timed
        FROM epc JOIN lv_timed USING (c_clocks) WHERE epc.n_steps > 0""")
    return e


def _step_view(con, sglob: str | None) -> None:
    """``s``: every decision with its episode's codes and the flags ``aggregate`` derives."""
    if sglob is None:
        source = ("(SELECT NULL::INTEGER _part, NULL::BIGINT _row, NULL::DOUBLE latency, "
                  "NULL::DOUBLE window_open, NULL::DOUBLE window_close, NULL::BOOLEAN too_early, "
                  "NULL::BOOLEAN too_late, NULL::BOOLEAN no_action, NULL::BOOLEAN correct_at_obs, "
                  "NULL::BOOLEAN fallback, NULL::VARCHAR outcome WHERE false)")
    else:
        source = f"read_parquet('{sglob}', union_by_name = true)"
    _check_counts(con, source)
    # materialised once, narrow and numeric (DuckDB spills it to disk if need be): the holistic
    # aggregates below (median, quantiles) then scan only numbers
    con.execute(f"""CREATE TEMP TABLE s AS
        SELECT epk.ep, epk.m, epk.k, epk.u, epk.c, epk.i, epk.timed, st.latency AS lat,
               coalesce(st.window_open, 0) AS opn, st.window_close AS close,
               st.latency IS NOT NULL AND NOT isnan(st.latency) AS acted,
               -- "missed" of rtanalysis.io.vocabulary (a played fallback is already too_late there)
               (coalesce(st.too_early, false) OR coalesce(st.too_late, false) OR coalesce(st.no_action, false))
                AND epk.timed AS miss,
               st.correct_at_obs, st._row AS row_
        FROM {source} st ASOF JOIN epk ON st._part = epk._part AND st._row >= epk.start
        -- failed calls inform neither timing nor capability (rtanalysis.io.vocabulary.failed_call)
        WHERE st.outcome IS DISTINCT FROM 'error'""")
    con.execute("DROP TABLE epk")


def _check_counts(con, source: str) -> None:
    """Every part holds as many decisions as its episodes' ``n_steps`` say (else the positions lie)."""
    bad = con.execute(f"""WITH a AS (SELECT _part, count(*) AS n FROM {source} GROUP BY _part),
            b AS (SELECT _part, sum(n_steps) AS n FROM epc GROUP BY _part)
        SELECT coalesce(a._part, b._part), coalesce(a.n, 0), coalesce(b.n, 0)
        FROM a FULL JOIN b USING (_part) WHERE coalesce(a.n, 0) <> coalesce(b.n, 0) LIMIT 1""").fetchone()
    if bad:
        raise ValueError(f"dataset part {bad[0]} has {bad[1]} decisions but its episodes list {bad[2]} "
                         "(steps frame and episodes disagree; write the dataset again)")


def _add_episode_counts(con, e: pd.DataFrame, n_types: int) -> np.ndarray:
    """``M`` (timing misses under timed clocks), ``labelled``, ``capable`` and the length covariate
    ``x`` of every episode, as ``aggregate``; reduced in DuckDB, fetched as arrays in episode order.
    Returns the per-type log geometric-mean length."""
    got = con.execute("""WITH c AS (SELECT ep, count(*) AS n_dec, count(*) FILTER (miss) AS n_miss,
                count(*) FILTER (acted) AS n_acted, count(*) FILTER (acted AND correct_at_obs IS NULL) AS n_unl,
                count(*) FILTER (acted AND NOT correct_at_obs) AS n_wrong,
                -- the last logged decision (steps are written in episode order): missed, labelled right
                arg_max(miss, row_) AS miss_last, arg_max(coalesce(correct_at_obs, false), row_) AS right_last
                FROM s GROUP BY ep)
        SELECT coalesce(c.n_dec, 0)::BIGINT AS n_dec, coalesce(c.n_miss, 0)::BIGINT AS n_miss,
               coalesce(c.n_acted, 0) > 0 AND coalesce(c.n_unl, 0) = 0 AS labelled,
               coalesce(c.n_wrong, 0) = 0 AS no_wrong, coalesce(c.miss_last, false) AS miss_last,
               coalesce(c.right_last, false) AS right_last
        FROM epc LEFT JOIN c USING (ep) ORDER BY epc.ep""").fetchnumpy()
    e["n_dec"] = np.asarray(got["n_dec"], dtype=np.int64)
    e["miss_last"] = np.asarray(got["miss_last"], dtype=bool).astype(np.int64)
    e["right_last"] = np.asarray(got["right_last"], dtype=bool).astype(np.int64)
    e["M"] = np.asarray(got["n_miss"], dtype=np.int64)
    e["labelled"] = np.asarray(got["labelled"], dtype=bool)
    e["capable"] = e["labelled"] & np.asarray(got["no_wrong"], dtype=bool)
    e["x"], type_log_g = _length_covariate(e["n_dec"].to_numpy(), e["k"].to_numpy(), n_types)
    return type_log_g


def _assemble(con, e: pd.DataFrame, levels: dict, type_log_g: np.ndarray):
    # the per-episode tables from the same code as the in-memory path (the episodes frame is small)
    from ..model.data import (ModelData, _grouper, _item_types, _prefix_length, _success_tables, _truncated_table,
                              natural_lengths)

    type_offset = -np.log(np.expm1(np.log(2.0) / np.exp(type_log_g)))
    latency, censored, exposure, latency_item, latency_episodes, silent_episodes = _latency_tables(
        con, len(levels["units"]))
    log_ref = _log_ref(con, levels["units"])
    edges, binned, edge_weight = _bins(con, latency, log_ref)
    windows, episode_windows = _windows(con)
    timed_misses = _timed_misses(con, levels["clocks"])
    # DuckDB's work is done: its tables go before pandas groups the episodes (they held a third of the peak)
    for table in ("s", "obs", "epc", "win", "floors"):
        con.execute(f"DROP TABLE IF EXISTS {table}")
    _prefix_length(e, type_log_g)
    unlabelled, cap_labelled, timing_labelled, not_capable = _success_tables(e, _grouper(per_row=False))
    truncated = _truncated_table(e, _grouper(per_row=False))
    e["x_nat"], natural_windows, e["no_donor"] = natural_lengths(e, episode_windows)
    e["model"] = np.array(levels["models"], dtype=object)[e["m"].to_numpy()]
    e["task_type"] = np.array(levels["task_types"], dtype=object)[e["k"].to_numpy()]
    return ModelData(levels["models"], levels["task_types"], levels["units"], levels["items"], latency, censored,
                     exposure, binned, edges, unlabelled, cap_labelled, timing_labelled, not_capable, e, windows,
                     episode_windows, log_ref, _item_types(e, len(levels["items"])), type_log_g, type_offset,
                     timed_misses, latency_item, False, edge_weight, False, truncated, natural_windows,
                     latency_episodes, silent_episodes)


def _length_covariate(n_decisions, k, n_types):
    from ..model.data import _length_covariate as same_as_aggregate

    return same_as_aggregate(n_decisions, k, n_types)


def _latency_tables(con, n_units: int):
    """(latency, censored, exposure, latency_item, latency_episodes, silent_episodes) as ``aggregate`` builds
    them; log-latency ``x`` is computed in DuckDB with each unit's floor (half its smallest positive latency) for zero latencies."""
    from ..model.data import latency_item_table

    con.execute("""CREATE TEMP TABLE floors AS
        SELECT u, coalesce(min(lat) FILTER (acted AND lat > 0) / 2, 1e-3) AS floor FROM s GROUP BY u""")
    con.execute("""CREATE TEMP TABLE obs AS
        SELECT s.ep, s.m, s.k, s.u, s.i, ln(greatest(s.lat, f.floor)) AS x FROM s JOIN floors f USING (u) WHERE s.acted""")
    latency = con.sql("""SELECT m::BIGINT m, k::BIGINT k, u::BIGINT u, count(*)::BIGINT n, fsum(x) s1, fsum(x * x) s2
        FROM obs GROUP BY m, k, u""").df()
    silences = """WITH cmax AS (SELECT m, k, u, max(lat) FILTER (acted AND timed) AS cmax FROM s GROUP BY m, k, u)
        SELECT s.ep, s.m, s.k, s.u, s.i, CASE WHEN cmax.cmax > s.close THEN cmax.cmax ELSE s.close END AS censor_at
        FROM s JOIN cmax USING (m, k, u) WHERE NOT s.acted AND s.timed AND s.close > 0 AND NOT isnan(s.close)"""
    cens = con.sql(f"""SELECT m::BIGINT m, k::BIGINT k, u::BIGINT u, i::BIGINT i, censor_at, count(*)::BIGINT AS count
        FROM ({silences}) GROUP BY ALL""").df()
    # the log in NumPy, grouped again in pandas: the keys are those of ``aggregate``, bit for bit
    cens = cens.assign(log_close=np.log(cens["censor_at"].to_numpy(float)))
    censored = (cens.groupby(["m", "k", "u", "i", "log_close"], as_index=False)["count"].sum()
                .astype({"count": np.int64}))
    exposure = con.sql("""SELECT m::BIGINT m, count(*)::BIGINT n_acted FROM s
        WHERE acted AND timed AND close > 0 AND NOT isnan(close) GROUP BY m ORDER BY m""").df()
    cells = pd.concat([latency[["m", "k", "u"]], censored[["m", "k", "u"]]]).drop_duplicates()
    latency = cells.merge(latency, how="left", on=["m", "k", "u"]).fillna({"n": 0, "s1": 0.0, "s2": 0.0})
    latency = _add_distinct(con, latency.sort_values(["m", "k", "u"]).reset_index(drop=True).astype({"n": np.int64}))
    from ..model.data import cell_index_of, cell_rows

    cell_index = cell_index_of(latency)

    censored["cell"] = cell_rows(cell_index, censored)
    per_item = con.sql("""SELECT m::BIGINT m, k::BIGINT k, u::BIGINT u, i::BIGINT i, count(*)::BIGINT n, fsum(x) s1
        FROM obs WHERE i >= 0 GROUP BY m, k, u, i""").df()
    return (latency, censored, exposure, latency_item_table(per_item, cell_index),
            *_episode_latencies(con, cell_index, silences))


def _episode_latencies(con, cell_index: dict, censored_where: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`~rtanalysis.model.data.episode_latency_table` from DuckDB's per-episode sums (two passes:
    the within-episode sum of squares around the episode's own mean), and
    :func:`~rtanalysis.model.data.silent_episode_table` of the silences ``censored_where`` selects (columns
    ``ep``, ``m``, ``k``, ``u``, ``censor_at``)."""
    from ..model.data import cell_rows, episode_latency_table, silent_episode_table

    per = con.sql("""WITH a AS (SELECT ep, avg(x) AS mu FROM obs GROUP BY ep)
        SELECT obs.ep::BIGINT ep, obs.m::BIGINT m, obs.k::BIGINT k, obs.u::BIGINT u, count(*)::BIGINT n,
               fsum(obs.x) / count(*) AS mean, fsum((obs.x - a.mu) * (obs.x - a.mu)) AS w
        FROM obs JOIN a USING (ep) GROUP BY obs.ep, obs.m, obs.k, obs.u""").df()
    table = episode_latency_table(per["n"].to_numpy(), per["mean"].to_numpy(float), per["w"].to_numpy(float),
                                  cell_rows(cell_index, per))
    sil = con.sql(f"""SELECT ep::BIGINT ep, m::BIGINT m, k::BIGINT k, u::BIGINT u, censor_at, count(*)::BIGINT count
        FROM ({censored_where}) GROUP BY ALL""").df()
    # per episode (codes compacted over the episodes that have acted or silent decisions)
    eps = np.union1d(per["ep"].to_numpy(np.int64), sil["ep"].to_numpy(np.int64))
    pos = lambda ep: np.searchsorted(eps, ep.to_numpy(np.int64))  # noqa: E731
    n, mean, cell = np.zeros(len(eps), np.int64), np.zeros(len(eps)), np.zeros(len(eps), np.int64)
    n[pos(per["ep"])], mean[pos(per["ep"])] = per["n"].to_numpy(), per["mean"].to_numpy(float)
    cell[pos(sil["ep"])] = cell_rows(cell_index, sil)
    silent = silent_episode_table(pos(sil["ep"]), np.log(sil["censor_at"].to_numpy(float)), sil["count"].to_numpy(),
                                  n, mean, cell)
    return table, silent


def _add_distinct(con, latency: pd.DataFrame) -> pd.DataFrame:
    """``n_distinct`` acted latencies (raw, not log), ``n_at_close`` and ``informative`` per cell
    (:func:`~rtanalysis.model.data.informative_latency`), as ``aggregate``."""
    from ..model.data import informative_latency

    # at the close to 1e-9 relative, as model.data.at_close
    got = con.sql("""SELECT m, k, u, count(*) AS nn, count(DISTINCT lat) AS nd,
            count(*) FILTER (close > 0 AND abs(lat - close) <= 1e-9 * abs(close)) AS nc
        FROM s WHERE acted GROUP BY m, k, u""").df()
    per_cell = (got.set_index(["m", "k", "u"])[["nn", "nd", "nc"]]
                .reindex(pd.MultiIndex.from_frame(latency[["m", "k", "u"]])).fillna(0))
    latency["n_distinct"] = per_cell["nd"].to_numpy(np.int64)
    latency["n_at_close"] = per_cell["nc"].to_numpy(np.int64)
    latency["informative"] = informative_latency(per_cell["nn"], per_cell["nd"], per_cell["nc"])
    return latency


def _timed_misses(con, clocks: list[str]) -> pd.DataFrame:
    """Per (m, k, clock, u): timed decisions ``n`` and logged misses ``miss``, in ``aggregate``'s
    (pandas groupby) order; clock codes follow the sorted clock names, so ordering by code is it."""
    got = con.execute("""SELECT m, k, c, u, count(*) AS n, count(*) FILTER (miss) AS miss FROM s
        WHERE timed GROUP BY m, k, c, u ORDER BY m, k, c, u""").fetchnumpy()
    names = np.array(clocks, dtype=object)[np.asarray(got["c"], dtype=np.int64)]
    return pd.DataFrame({"m": np.asarray(got["m"], dtype=np.int64), "k": np.asarray(got["k"], dtype=np.int64),
                         "clock": names, "u": np.asarray(got["u"], dtype=np.int64),
                         "n": np.asarray(got["n"], dtype=np.int64), "miss": np.asarray(got["miss"], dtype=np.int64)})


def _order_statistics(con, source: str, keys: list[str], wanted: pd.DataFrame) -> dict:
    """``{(key..., r): value}``: the ``r``-th smallest ``x`` (from 0) of each group of ``source``, for
    the (group, r) pairs in ``wanted``. A sort (DuckDB spills it to disk), not a holistic aggregate
    holding every value of a group in memory."""
    con.register("wanted_df", wanted)
    k = ", ".join(keys)
    got = con.execute(f"""SELECT {k}, r, x FROM (
            SELECT {k}, x, (row_number() OVER (PARTITION BY {k} ORDER BY x) - 1)::BIGINT AS r FROM {source})
        SEMI JOIN wanted_df USING ({k}, r)""").fetchall()
    con.unregister("wanted_df")
    return {tuple(int(v) for v in row[:-1]): row[-1] for row in got}


def _log_ref(con, units: list[str]) -> pd.DataFrame:
    """Per unit: median of observed log-latencies and log window closes of the censored decisions;
    population SD of the observed ones (1 with fewer than two; at least 0.05)."""
    con.execute("""CREATE TEMP VIEW ref_values AS
        SELECT u, x, true AS observed FROM obs
        UNION ALL
        SELECT u, ln(close), false FROM s WHERE NOT acted AND timed AND close > 0 AND NOT isnan(close)""")
    got = con.sql("""SELECT u, count(*) AS n, stddev_pop(x) FILTER (observed) AS sd,
            count(*) FILTER (observed) AS n_obs FROM ref_values GROUP BY u""").df()
    n = got["n"].to_numpy(np.int64)
    wanted = pd.DataFrame({"u": np.repeat(got["u"].to_numpy(np.int64), 2),
                           "r": np.column_stack([(n - 1) // 2, n // 2]).ravel()})
    mid = _order_statistics(con, "ref_values", ["u"], wanted)
    by_unit = {int(r.u): r for r in got.itertuples(index=False)}
    rows = []
    for u, name in enumerate(units):
        r = by_unit.get(u)
        # NumPy's median: the middle value, or the mean of the two middle ones
        center = float(np.mean([mid[(u, (r.n - 1) // 2)], mid[(u, r.n // 2)]])) if r is not None else 0.0
        scale = float(r.sd) if r is not None and r.n_obs > 1 else 1.0
        rows.append((name, center, max(scale, 0.05)))
    return pd.DataFrame(rows, columns=["unit", "center", "scale"])


def _bins(con, latency: pd.DataFrame, log_ref: pd.DataFrame):
    """Per-cell edges (the kept order statistics), counts between them and edge weights, as ``aggregate``'s
    (:func:`rtanalysis.model.data.order_statistic_layout`: all but the edges follow from each cell's size)."""
    from ..model.data import BIN_QUANTILES, cell_index_of, order_statistic_layout

    ref_z = np.array([-2.3, -2.0, -1.6, -1.3, -0.8, -0.4, 0.0, 0.4, 0.8, 1.3, 1.6, 2.0, 2.3])
    ref = log_ref[["center", "scale"]].to_numpy()
    u = latency["u"].to_numpy()
    edges = ref[u, :1] + ref_z[None, :] * ref[u, 1:]
    counts = np.zeros((len(latency), len(BIN_QUANTILES) + 1), dtype=np.int64)
    weights = np.zeros((len(latency), len(BIN_QUANTILES)), dtype=np.int64)
    row_of = cell_index_of(latency)
    cells = latency[latency["n"] > 0]
    if len(cells):
        index, count, weight = order_statistic_layout(cells["n"].to_numpy(np.int64))
        keys = cells[["m", "k", "u"]].to_numpy(np.int64)
        wanted = pd.DataFrame({c: np.repeat(keys[:, j], index.shape[1]) for j, c in enumerate(("m", "k", "u"))})
        wanted["r"] = index.ravel()
        stats = _order_statistics(con, "obs", ["m", "k", "u"], wanted.drop_duplicates())
        for j, key in enumerate(map(tuple, keys)):
            r = row_of[key]
            # every row of the cell shares its edges (as in ``aggregate``); counts and weights on the last
            same = (latency[["m", "k", "u"]].to_numpy() == np.asarray(key)).all(axis=1)
            edges[same] = [stats[(*key, int(i))] for i in index[j]]
            counts[r], weights[r] = count[j], weight[j]
    return edges, pd.DataFrame(counts, columns=[f"b{j}" for j in range(counts.shape[1])]), weights


def _windows(con) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Distinct decision windows of timed decisions (``wid`` in (unit, open, close) order) and
    their counts per episode."""
    con.execute("""CREATE TEMP TABLE win AS
        SELECT u::BIGINT u, opn AS open, close,
               (row_number() OVER (ORDER BY u, opn, close) - 1)::BIGINT AS wid
        FROM (SELECT DISTINCT u, opn, close FROM s WHERE timed AND close IS NOT NULL AND NOT isnan(close))""")
    windows = con.sql('SELECT u, "open", "close", wid FROM win ORDER BY wid').df()
    episode_windows = con.sql("""SELECT s.ep::BIGINT ep, win.wid, count(*)::BIGINT AS count
        FROM s JOIN win ON s.u = win.u AND s.opn = win.open AND s.close = win.close
        WHERE s.timed GROUP BY ALL ORDER BY ep, wid""").df()
    return windows, episode_windows
