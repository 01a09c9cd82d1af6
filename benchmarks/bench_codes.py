"""Per-decision groupings by integer codes against pandas group-bys, side by side, on the same data:

* the predictive checks' latency cells (model × task_type × time_unit): ``checks.latency_cell_split``
  (each key factorised once, one stable sort by code) against a group-by of the acted decisions'
  three text key columns (what ``_latency_groups`` did before 2026-12-05);
* the censor points' cell maximum in ``model.data.aggregate``: ``data._cell_max`` (one pass over the
  integer cell codes) against a group-by ``transform("max")`` over a frame of every decision;
* the latency-cell lookup of every decision in the aggregation: ``data.cell_rows`` (vectorised) against
  the per-decision Python dictionary lookup it replaced (merged from ``bench_cell_lookup.py``), with the
  whole ``aggregate`` timed for scale.

Prints the seconds of each way, the ratio, and whether the results are the same (same groups, same
order, equal arrays / rows).

    .venv/bin/python benchmarks/bench_codes.py [--tasks 100 --seeds 3]
    .venv/bin/python benchmarks/bench_codes.py --tables DIR   # episodes.parquet + steps.parquet (rtanalysis ingest)
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from _results import append_result


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def latency_groups_groupby(st: pd.DataFrame, x: np.ndarray) -> dict:
    """The alternative: a group-by of the acted decisions' text key columns."""
    acted = ~np.isnan(x)
    frame = st.loc[acted, ["model", "task_type", "time_unit"]].assign(x=x[acted])
    return {tuple(map(str, k)): g["x"].to_numpy()
            for k, g in frame.groupby(["model", "task_type", "time_unit"], observed=True)}


def cell_max_groupby(cell: tuple, values: np.ndarray) -> np.ndarray:
    """The alternative: transform("max") over a frame of every decision."""
    m, k, u = cell
    return pd.DataFrame({"m": m, "k": k, "u": u, "v": values}).groupby(["m", "k", "u"])["v"].transform("max").to_numpy()


def main(argv=None) -> str:
    from rtanalysis.model import data as D
    from rtanalysis.model.checks import latency_cell_split, log_latency

    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", default=None, help="a folder with episodes.parquet and steps.parquet")
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args(argv)
    if args.tables:
        ep = pd.read_parquet(f"{args.tables}/episodes.parquet")
        st = pd.read_parquet(f"{args.tables}/steps.parquet")
        label = args.tables
    else:
        from rtanalysis.simulate import simulate

        lr = simulate("leaderboard60", seed=0, tasks=args.tasks, seeds=args.seeds).load()
        ep, st, label = lr.episodes, lr.steps, f"leaderboard60 --tasks {args.tasks} --seeds {args.seeds}"
    x = log_latency(st)
    t_old, old = _timed(lambda: latency_groups_groupby(st, x))
    t_new, new = _timed(lambda: {k: v[0] for k, v in latency_cell_split(st, ~np.isnan(x), x).items()})
    same = list(old) == list(new) and all(np.array_equal(old[k], new[k]) for k in old)
    lines = [f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {label}; {len(ep):,} episodes, "
             f"{len(st):,} decisions",
             f"latency cells: group-by {t_old:6.2f} s, codes {t_new:6.2f} s, ratio {t_old / t_new:5.1f}x, "
             f"same groups and arrays: {same}"]
    e, _ = D._episode_frame(ep.reset_index(drop=True))
    S = D._step_arrays(ep.reset_index(drop=True), st, e)
    values = np.where(S["acted"] & S["timed"], S["lat"], np.nan)
    t_old, old = _timed(lambda: cell_max_groupby(S["cell"], values))
    t_new, new = _timed(lambda: D._cell_max(S["cell"], values))
    lines.append(f"cell maximum:  group-by {t_old:6.2f} s, codes {t_new:6.2f} s, ratio {t_old / t_new:5.1f}x, "
                 f"same values: {np.array_equal(old, new, equal_nan=True)}")
    # the latency-cell lookup of every decision: one row per decision, drawn from the observed cells
    whole, d = _timed(lambda: D.aggregate(ep, st))
    lat = d.latency[["m", "k", "u"]]
    cell_index = {tuple(r): j for j, r in enumerate(lat.to_numpy())}
    obs = lat.iloc[np.random.default_rng(0).integers(0, len(lat), len(st))].reset_index(drop=True)
    t_old, old = _timed(lambda: np.array([cell_index[tuple(r)] for r in obs[["m", "k", "u"]].to_numpy()]))
    t_new, new = _timed(lambda: D.cell_rows(cell_index, obs))
    lines.append(f"cell lookup:   dict    {t_old:6.2f} s, codes {t_new:6.2f} s, ratio {t_old / t_new:5.1f}x, "
                 f"same rows: {np.array_equal(old, new)} ({len(obs):,} lookups); whole aggregate {whole:.2f} s")
    return "\n".join(lines)


if __name__ == "__main__":
    append_result("bench_codes.txt", main())
