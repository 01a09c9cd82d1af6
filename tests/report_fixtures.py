"""Shared data for the figure, table and report tests: simulated sets and contract-shaped fit frames.

The fit frames follow the column contract of ``rtanalysis.model`` (decomposition, counterfactuals,
posterior predictive, posterior draws) and are built from the simulator's exact truth, so the
figure and table code can be checked without sampling.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

PDF_MAGIC = b"%PDF-"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


_LOADS: dict[int, object] = {}


def _load_of(sim):
    if id(sim) not in _LOADS:
        _LOADS[id(sim)] = sim.load()
    return _LOADS[id(sim)]


@lru_cache(maxsize=None)
def simulated(preset: str, seed: int = 3):
    from rtanalysis.simulate import simulate

    sim = simulate(preset, seed=seed)
    return sim, _load_of(sim)


def _band(p: pd.Series, half: float) -> tuple[pd.Series, pd.Series]:
    return (p - half).clip(0, 1), (p + half).clip(0, 1)


def fit_frames(sim, failed: bool = False, seed: int = 0) -> dict:
    """Contract-shaped outputs of a fit, centred on the simulation's truth."""
    truth = sim.truth
    rng = np.random.default_rng(seed)
    load = _load_of(sim)
    n_eps = load.episodes.groupby(["model", "task_type", "clock"]).size().rename("n_episodes")
    obs = load.episodes.groupby(["model", "task_type", "clock"])["success"].mean().rename("success_rate")
    dec = truth[["model", "task_type", "clock", "p_capable", "p_timely", "p_success", "share_timing"]].copy()
    paused = dec.assign(clock="paused", p_timely=1.0, p_success=dec["p_capable"], share_timing=0.0)
    dec = pd.concat([dec, paused.drop_duplicates(["model", "task_type"])], ignore_index=True)
    for q in ("p_capable", "p_timely", "p_success", "share_timing"):
        dec[f"{q}_lo"], dec[f"{q}_hi"] = _band(dec[q], 0.06)
    dec = dec.join(n_eps, on=["model", "task_type", "clock"]).join(obs, on=["model", "task_type", "clock"])
    dec = dec.dropna(subset=["n_episodes"])
    dec["n_episodes"] = dec["n_episodes"].astype(int)
    dec["diagnostics_ok"] = not failed
    rows = []
    for lam in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0):
        sub = dec[dec["clock"] != "paused"]
        p = (sub["p_capable"] * sub["p_timely"] ** lam).clip(0, 1)
        lo, hi = _band(p, 0.05)
        rows.append(sub[["model", "task_type", "clock"]].assign(scenario="scale", **{"lambda": lam}, p_success=p,
                                                               p_success_lo=lo, p_success_hi=hi))
    cf = pd.concat(rows, ignore_index=True)
    ppc = dec[["model", "task_type", "clock", "success_rate"]].rename(columns={"success_rate": "observed"})
    ppc["predicted"] = dec["p_success"].to_numpy()
    ppc["predicted_lo"], ppc["predicted_hi"] = _band(ppc["predicted"], 0.08)
    ppc["check"] = "success_rate"
    lat = truth[["model", "task_type", "median_latency"]].drop_duplicates(["model", "task_type"])
    qs = [lat.assign(check=f"log_latency_{q}", clock="s", observed=np.log(lat["median_latency"]) + shift)
          for q, shift in (("p10", -0.6), ("p50", 0.0), ("p90", 0.6))]
    lat_ppc = pd.concat(qs, ignore_index=True).drop(columns="median_latency")
    lat_ppc["predicted"] = lat_ppc["observed"] + rng.normal(0, 0.05, len(lat_ppc))
    lat_ppc["predicted_lo"], lat_ppc["predicted_hi"] = lat_ppc["predicted"] - 0.1, lat_ppc["predicted"] + 0.1
    ppc = pd.concat([ppc, lat_ppc], ignore_index=True)
    draws = rng.normal(size=(2, 50))
    posterior = xr.Dataset({"mu_capability": (("chain", "draw"), draws),
                            "sigma_latency": (("chain", "draw"), np.exp(draws * 0.1)),
                            "beta": (("chain", "draw", "task_type"), rng.normal(size=(2, 50, 2)))},
                           coords={"chain": [0, 1], "draw": np.arange(50), "task_type": ["a", "b"]})
    diagnostics = {"max_rhat": 1.12 if failed else 1.003, "min_ess_bulk": 35.0 if failed else 900.0,
                   "min_ess_tail": 40.0 if failed else 800.0, "n_divergent": 7 if failed else 0, "ok": not failed}
    return {"decomposition": dec, "counterfactuals": cf, "ppc": ppc, "posterior": posterior, "success_curve": None,
            "diagnostics": diagnostics}


def pdf_font_types(data: bytes) -> set[str]:
    """Font subtypes named in a PDF (matplotlib writes its font dictionaries uncompressed)."""
    import re

    return {m.decode() for m in re.findall(rb"/Subtype\s*/(Type3|Type1|TrueType|CIDFontType2|Type0)", data)}


def check_figure_files(paths) -> None:
    """PDF and PNG magic bytes; the PDF embeds TrueType (Type 42) fonts and no Type 3 fonts."""
    pdf, png = (Path(p) for p in paths)
    assert pdf.read_bytes().startswith(PDF_MAGIC), pdf
    assert png.read_bytes().startswith(PNG_MAGIC), png
    fonts = pdf_font_types(pdf.read_bytes())
    assert "Type3" not in fonts and {"TrueType", "CIDFontType2"} & fonts, (pdf, fonts)


@lru_cache(maxsize=None)
def paused_leaderboard(seed: int = 3):
    """A leaderboard-shaped log like the one of issue 11: 60 models, paused clock only, one task
    type, latencies but no validity windows (so no relative latency and no timing outcome)."""
    import dataclasses

    _, load = simulated("leaderboard60", seed)
    ep = load.episodes
    keep = (ep["clock"] == "paused") & (ep["task_type"] == sorted(ep["task_type"].unique())[0])
    ep = ep[keep].reset_index(drop=True)
    st = load.steps.merge(ep[["run_id", "episode_id"]], on=["run_id", "episode_id"])
    st = st.assign(window_open=np.nan, window_close=np.nan)
    return dataclasses.replace(load, episodes=ep, steps=st)
