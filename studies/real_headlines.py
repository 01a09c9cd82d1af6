"""Headline numbers of the real logs before and after the survival reading.

Fits every set of real logs whose episodes say how they ended (the episode field ``ended``) twice at the
package defaults, once reading the field (``ModelSpec(ended="read")``, the default) and once ignoring
it (``ended="ignore"``, the model before), and writes one row per set × model × reading to
``studies/results/real_headlines.csv``: the episodes, the logs' success rate and the modelled p_success,
p_capable, p_timely and share_timing pooled over the model's timed rows (episode weights), with
intervals, and whether the fit passed the gate. Logs without the field read the same either way and
are listed with ``ended_episodes`` 0. ``--no-episode-effects``: every fit with decisions independent
(``ModelSpec(episode_effects=False)``, the default model before), written to
``real_headlines_independent.csv``. Run from the repository root::

    python studies/real_headlines.py [--seed 0] [--no-episode-effects]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

import rtanalysis
from _common import RESULTS
from real_fixtures_gate import SETS

QUANTITIES = ("p_success", "p_capable", "p_timely", "share_timing")


def pooled(res) -> pd.DataFrame:
    """Per model: each quantity pooled over its timed rows with episode weights, from the draws."""
    keys = ["model", "task_type", "clock"]
    n = res.decomposition().set_index(keys)["n_episodes"]
    wide = {q: res.draws(q, wide=True) for q in QUANTITIES}
    rows = wide["p_success"].index.to_frame(index=False)
    w_all = n.reindex(wide["p_success"].index).to_numpy(float)
    out = []
    for model in sorted(rows["model"].unique()):
        sel = ((rows["model"] == model) & (rows["clock"] != "paused")).to_numpy()
        w = w_all[sel]
        row = {"model": model, "n_episodes": int(w.sum())}
        for q in QUANTITIES:
            x = (wide[q].to_numpy()[sel] * w[:, None]).sum(axis=0) / w.sum()
            row[q] = float(np.nanmean(x))
            row[f"{q}_lo"], row[f"{q}_hi"] = (float(v) for v in np.nanquantile(x, [0.025, 0.975]))
        out.append(row)
    return pd.DataFrame(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--episode-effects", action=argparse.BooleanOptionalAction, default=True,
                   help="episode slowness (the default); --no-episode-effects: decisions independent")
    p.add_argument("--out", default=None, help="default: studies/results/real_headlines[_independent].csv")
    args = p.parse_args(argv)
    out = args.out or str(RESULTS / f"real_headlines{'' if args.episode_effects else '_independent'}.csv")
    sets = {"llm_colosseum_season": [rtanalysis.example_data("llm-colosseum")], **SETS}
    frames = []
    for name, paths in sets.items():
        logs = rtanalysis.load([str(x) for x in paths])
        ep = logs.episodes
        n_ended = int((ep["ended"].astype(object) == "failure").sum()) if "ended" in ep else 0
        readings = ("read", "ignore") if n_ended else ("read",)
        observed = ep[ep["clock"] != "paused"].groupby("model")["success"].mean().rename("observed")
        for ended in readings:
            t0 = time.time()
            res = rtanalysis.fit(logs, rtanalysis.ModelSpec(ended=ended, episode_effects=args.episode_effects), progress=False, seed=args.seed)
            f = pooled(res).join(observed, on="model")
            f.insert(0, "set", name)
            f.insert(1, "reading", ended)
            f["ended_episodes"] = n_ended
            f["episode_effects"] = args.episode_effects
            f["gate_ok"] = bool(res.diagnostics["ok"])
            f["first_try"] = "retried" not in res.diagnostics
            f["max_rhat"] = round(float(res.diagnostics["max_rhat"]), 4)
            f["seconds"] = round(time.time() - t0, 1)
            frames.append(f)
            print(f.round(3).to_string(index=False), flush=True)
    pd.concat(frames, ignore_index=True).round(4).to_csv(out, index=False)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
