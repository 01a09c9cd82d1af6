"""``fit()``: aggregate, build, sample; and :class:`FitResult`, the posterior with every derived table."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .data import MIN_DISTINCT_LATENCIES, ModelData, aggregate
from .derived import QUANTITIES, Deriver, ParamDraws, param_draws, summarise
from .sampler import sample_model

DECOMPOSITION_COLUMNS = [
    "model", "task_type", "clock", "n_episodes", "success_rate",
    "p_success", "p_success_lo", "p_success_hi", "p_capable", "p_capable_lo", "p_capable_hi",
    "p_timely", "p_timely_lo", "p_timely_hi", "share_timing", "share_timing_lo", "share_timing_hi",
    "diagnostics_ok",
]
COUNTERFACTUAL_COLUMNS = ["model", "task_type", "clock", "scenario", "lambda", "p_success", "p_success_lo",
                          "p_success_hi"]
#: fit()'s default sampling: enough for the diagnostics gate on the example data
DEFAULT_DRAWS = 1000
DEFAULT_CHAINS = 4


def _as_frames(data):
    """(episodes, steps) from a LoadResult, a pair of frames, or path(s) to load."""
    if hasattr(data, "episodes") and hasattr(data, "steps"):
        return data.episodes, data.steps
    if isinstance(data, tuple) and len(data) == 2 and all(isinstance(x, pd.DataFrame) for x in data):
        return data
    if isinstance(data, (str, os.PathLike, list)):
        from ..adapters import load

        lr = load(data)
        return lr.episodes, lr.steps
    raise TypeError(f"fit() needs a LoadResult, (episodes, steps) frames or path(s); got {type(data).__name__}")


#: rows per piece when hashing a text column (bounds the memory of its str copy)
HASH_CHUNK_ROWS = 1_000_000


def _column_digest(col: pd.Series) -> bytes:
    """Row hashes of one column. Numbers and booleans as float64 (NaN for missing), so the same
    values hash alike whatever the dtype a loader gave them (int64, Int64, boolean, float); the rest
    as text, a piece at a time."""
    numeric = (pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col)
               or (col.dtype == object and pd.api.types.infer_dtype(col, skipna=True)
                   in ("boolean", "integer", "floating", "mixed-integer-float")))
    if numeric:
        values = col.astype("Float64").to_numpy(dtype="float64", na_value=np.nan)
        return pd.util.hash_array(values).tobytes()
    return b"".join(pd.util.hash_pandas_object(col.iloc[i:i + HASH_CHUNK_ROWS].astype(str), index=False)
                    .to_numpy().tobytes() for i in range(0, len(col), HASH_CHUNK_ROWS))


def data_hash(episodes: pd.DataFrame, steps: pd.DataFrame) -> str:
    """sha256 of the episodes and steps frames sorted by their keys (independent of file order),
    column by column: no copy of a whole frame (at 10^6 episodes a str copy of the steps held
    gigabytes and took minutes)."""
    h = hashlib.sha256()
    ekeys = ["run_id", "episode_id"]
    for frame, keys in ((episodes, ekeys), (steps, ekeys + ["step"])):
        keys = [k for k in keys if k in frame.columns]
        order = (frame[keys].reset_index(drop=True).sort_values(keys, kind="stable").index.to_numpy() if keys
                 else np.arange(len(frame)))
        columns = [c for c in frame.columns if c not in ("source_file", "source_line")]
        h.update(",".join(map(str, columns)).encode())
        for c in columns:
            h.update(_column_digest(frame[c].iloc[order].reset_index(drop=True)))
    return h.hexdigest()


#: the retry's target acceptance when the first attempt diverged (nutpie's default is 0.8)
RETRY_TARGET_ACCEPT = 0.95
#: latency scales whose p_success draws a fit keeps once computed: the report's headline pools
#: p_success at λ = 0.5 over task types, a point of the counterfactual curve it has already drawn
#: (each kept λ costs rows × draws floats: 7.7 MB for leaderboard60's 240 rows at 4,000 draws)
KEPT_LAMBDAS = (0.5,)


def fit(data, draws: int = DEFAULT_DRAWS, chains: int = DEFAULT_CHAINS, seed: int = 0, ci_prob: float = 0.95,
        latency_family: str = "normal", progress: bool = True, tune: int | str | None = "auto",
        sampler: str = "nutpie", per_row: bool = False, item_latency: bool = False,
        clock_effects: bool = False, structure: str | None = None,
        latency_by_correctness: bool = False) -> "FitResult":
    """Fit the hierarchical capability × timing model.

    ``data``: a LoadResult, ``(episodes, steps)`` frames, or path(s) (loaded with
    :func:`rtanalysis.load`). ``latency_family``: ``normal`` (log-normal latency, sufficient
    statistics), ``t`` (Student-t on each cell's log-latency order statistics), ``mixture`` (a fast and a
    slow log-normal mode, on the same; :mod:`.families`) or ``auto`` (all, chosen by LOO on the order
    statistics' likelihood). ``tune``: ``"auto"`` (the default, as in the CLI): as many tuning steps
    as draws, then, if the diagnostics gate fails, once more with 3× the tuning and 2× the draws
    (recorded in ``diagnostics["retried"]``); a number (or ``None`` = draws) fixes the tuning and
    never retries (simulation studies, where the procedure must not depend on the draws). Same data and seed give identical tables. ``per_row``:
    the same likelihood without aggregation (one term per decision and episode; a benchmark
    baseline, much slower). ``item_latency``: each item (task id) also gets a time intensity on
    log-latency, paired with its capability effect in the derived quantities (for data where hard
    items are also slow: the ``latency_by_item`` check flags it); normal latency family only.
    ``clock_effects``: an agent may behave differently when the clock runs: each model's capability
    gets a timed-minus-paused effect κ_m (identified by its paused episodes) and the latency model
    is fitted to timed decisions only (for data where the success-rate check flags the timed rows).
    ``latency_by_correctness``: labelled data (``correct_at_obs`` logged): content-wrong decisions get
    their own log-latency shift per model × task type, so the latency that p_timely and the latency
    counterfactuals use is that of the correct decisions a capable episode is made of (for data where
    the ``latency_by_correctness`` check flags the cells: thinking longer helps); normal latency family,
    without ``item_latency``.
    ``structure``: a name of :data:`.structures.STRUCTURES` (``base``, ``item_latency``,
    ``clock_effects``, ``item_latency+clock_effects``, ``latency_by_correctness``,
    ``latency_by_correctness+clock_effects``: sets the options above), or ``auto``: every
    structure the data can tell apart is fitted and the simplest one that PSIS-LOO on the episodes'
    outcomes, the timed decisions' latencies and the silent decisions cannot beat is returned, with the comparison (:meth:`FitResult.structure_loo`).
    """
    from .build import build_model

    from .families import NAMES

    if latency_family not in ("auto",) + NAMES:
        raise ValueError(f"latency_family must be one of {', '.join(map(repr, ('auto',) + NAMES))}, "
                         f"got {latency_family!r}")
    if not 0 < ci_prob < 1:
        raise ValueError(f"ci_prob must be in (0, 1), got {ci_prob}")
    if item_latency and latency_family != "normal":
        raise ValueError(f"item_latency=True needs latency_family='normal', got {latency_family!r}")
    if latency_by_correctness and (latency_family != "normal" or item_latency):
        raise ValueError("latency_by_correctness=True needs latency_family='normal' and item_latency=False, got "
                         f"latency_family={latency_family!r}, item_latency={item_latency}")
    if not (tune is None or tune == "auto" or (isinstance(tune, (int, np.integer)) and tune >= 0)):
        raise ValueError(f"tune must be a number of steps >= 0, None or 'auto', got {tune!r}")
    if structure is not None:
        options = dict(draws=draws, chains=chains, seed=seed, ci_prob=ci_prob, latency_family=latency_family,
                       tune=tune, sampler=sampler, per_row=per_row)
        return _fit_structure(data, structure, item_latency or clock_effects or latency_by_correctness, progress,
                              options)
    episodes, steps = _as_frames(data)
    # hashed first: its per-decision temporaries then add to the tables alone, not to the tables, the
    # aggregates and the posterior (the fit's peak memory at 10^6 episodes was while hashing at the end)
    digest = data_hash(episodes, steps)
    d = aggregate(episodes, steps, per_row=per_row, clock_effects=clock_effects,
                  latency_by_correctness=latency_by_correctness)
    n_tune = draws if tune in (None, "auto") else int(tune)
    t0 = time.time()
    loo, chosen = None, latency_family
    if latency_family == "auto":
        from .compare import choose_family, latency_loo

        if progress:
            print(f"choosing the latency family ({', '.join(NAMES)}) by LOO on log-latency order statistics...",
                  file=sys.stderr)
        loo = latency_loo(d, draws=min(draws, 500), chains=max(2, chains), seed=seed, sampler=sampler)
        chosen = choose_family(loo)
    from .build import has_item_latency_data

    no_item_latency_data = item_latency and not has_item_latency_data(d)  # fits without, noted below
    item_latency = item_latency and not no_item_latency_data
    model = build_model(d, chosen, item_latency=item_latency)
    if progress:
        print(f"setting up the model ({chosen} latency; compiled once per machine, cached afterwards)...",
              file=sys.stderr)
    idata, diag, table = _sample_diagnosed(model, draws, n_tune, chains, seed, sampler, progress)
    if tune == "auto" and not diag["ok"]:
        first = {k: diag[k] for k in ("max_rhat", "min_ess_bulk", "min_ess_tail", "n_divergent", "failed_params")}
        asked = {"draws": draws, "tune": n_tune}
        draws, n_tune = 2 * draws, 3 * n_tune
        # divergences mean a step too large for the posterior's curvature: a higher target
        # acceptance (smaller steps) is the standard remedy; R-hat/ESS alone need only more tuning
        accept = RETRY_TARGET_ACCEPT if first["n_divergent"] else None
        if progress:
            print(f"diagnostics failed ({diag['advice'].splitlines()[0] if diag['advice'] else ''}); retrying once "
                  f"with tune={n_tune}, draws={draws}" + (f", target_accept={accept}" if accept else "") + "...",
                  file=sys.stderr)
        idata, diag, table = _sample_diagnosed(model, draws, n_tune, chains, seed, sampler, progress, accept)
        diag["retried"] = {"first": first, "tune": n_tune, "draws": draws, "asked": asked, "target_accept": accept}
    diag["sampling_seconds"] = round(time.time() - t0, 2)
    diag.update(_data_notes(d))
    diag["notes"] += _clock_effect_notes(d) + _correctness_notes(d)
    if loo is not None and not len(loo):
        diag["notes"].append("latency_family='auto': no latency cell has spread (tick lengths or caps logged every "
                             "time), so PSIS-LOO had nothing to compare the families on; the normal family was kept")
    if no_item_latency_data:
        diag["notes"].append("item_latency was asked for, but no item has informative latencies (task ids and "
                             "latencies that vary): fitted without item time intensities")
    return FitResult(idata=idata, data=d, diagnostics=diag, seed=seed, ci_prob=ci_prob,
                     data_hash=digest, latency_family=chosen, n_draws=draws, chains=chains,
                     tune=n_tune, sampler=sampler, _diag_table=table, _loo=loo, episodes=episodes, steps=steps,
                     item_latency=bool(item_latency), clock_effects=bool(clock_effects),
                     latency_by_correctness=bool(latency_by_correctness))


def _fit_structure(data, structure: str, flags: bool, progress: bool, options: dict) -> "FitResult":
    """:func:`fit` with ``structure`` (a registry name or ``auto``) in place of the two flags."""
    from .structures import STRUCTURES, choice_summary

    if flags:
        raise ValueError("give structure or item_latency / clock_effects / latency_by_correctness, not both")
    if structure in STRUCTURES:
        return fit(data, progress=progress, **options, **STRUCTURES[structure])
    if structure != "auto":
        raise ValueError(f"structure must be 'auto' or one of {', '.join(map(repr, STRUCTURES))}, got {structure!r}")
    if options["latency_family"] == "auto":
        raise ValueError("structure='auto' needs a fixed latency family (choose it first with latency_family='auto')")
    table, fits = compare_structures(data, progress=progress, **options)
    res = fits[str(table.loc[table["chosen"], "structure"].iloc[0])]
    res._structure_loo = table
    if progress:
        print(choice_summary(table), file=sys.stderr)
    return res


def compare_structures(data, structures=None, progress: bool = True, **fit_options):
    """Fit every structure of ``structures`` (default: :func:`.structures.applicable_structures`) to
    ``data`` with ``fit_options`` (:func:`fit`'s) and compare them by PSIS-LOO on the episodes'
    outcomes, the timed decisions' latencies and the silent decisions. Returns (the table of
    :func:`.structures.structure_table`, {name: FitResult})."""
    from .structures import STRUCTURES, applicable_structures, structure_table

    episodes, steps = _as_frames(data)
    family_name = fit_options.get("latency_family", "normal")
    if structures is None:
        structures = applicable_structures(aggregate(episodes, steps), family_name)
    unknown = [s for s in structures if s not in STRUCTURES]
    if unknown:
        raise ValueError(f"unknown structure(s) {unknown}; choose from {', '.join(STRUCTURES)}")
    fits = {}
    for name in (s for s in STRUCTURES if s in structures):
        if progress:
            print(f"structure {name}: fitting...", file=sys.stderr)
        fits[name] = fit((episodes, steps), progress=progress, **{**fit_options, **STRUCTURES[name]})
    return structure_table(fits), fits


def _correctness_notes(d: ModelData) -> list[str]:
    """With latency by correctness: the cells whose wrong-decision shift rests on the prior (no wrong or
    no correct labelled decision)."""
    if not d.latency_by_correctness:
        return []
    L = d.latency
    lacking = int(((L["q_wrong"] <= 0) | (L["q_wrong"] >= 1) | (L["n"] == 0)).sum())
    if not lacking:
        return []
    return [f"latency by correctness: {lacking} of {len(L)} latency cell(s) have no wrong or no correct labelled "
            "decision (or no labels): their wrong-minus-correct latency shift is the prior's, and their latency is "
            "taken as that of all their decisions"]


def _clock_effect_notes(d: ModelData) -> list[str]:
    """With clock effects: the models whose κ_m the data cannot identify (no paused or no timed episodes)."""
    if not d.clock_effects:
        return []
    e = d.episodes
    has = e.groupby("m")["timed"].agg(["any", "all"])
    lacking = [d.models[m] for m, r in has.iterrows() if r["all"] or not r["any"]]
    if not lacking:
        return []
    return [f"clock effects: {len(lacking)} model(s) ({', '.join(lacking[:5])}{', ...' if len(lacking) > 5 else ''}) "
            "were not run under both the paused and a timed clock: their timed-minus-paused capability effect is "
            "the prior's, so their timed capability and timing split rest on it (wide intervals); run them paused too"]


def _sample_diagnosed(model, draws, tune, chains, seed, sampler, progress, target_accept=None):
    """(idata, diagnostics with compile/sampling seconds, per-parameter table)."""
    from .build import MAIN_PARAMS
    from .diagnostics import diagnose

    timings: dict = {}
    idata = sample_model(model, draws, tune, chains, seed, sampler, progress, timings, target_accept)
    names = [v for v in MAIN_PARAMS if v in idata["posterior"]]
    diag, table = diagnose(idata, names)
    diag.update(timings)
    return idata, diag, table


def _data_notes(d: ModelData) -> dict:
    """What the data can and cannot separate, for the report: ``timing_separable`` (some episode ran
    under a timed clock), ``latency_uninformative_cells`` and plain-language ``notes``."""
    notes = []
    timed = bool(d.episodes["timed"].any())
    if not timed:
        notes.append("no timed clock: timing cannot be separated (every episode ran under the paused clock); "
                     "p_timely = 1 and share_timing = 0 by definition, only capability is estimated")
    flat = d.latency[~d.latency["informative"]] if "informative" in d.latency else d.latency.iloc[:0]
    # not capped: too few distinct values, repeated (or none at all)
    few, nd, n = flat["n_distinct"] < MIN_DISTINCT_LATENCIES, flat["n_distinct"], flat["n"]
    constant = flat[few & ((nd < n) | (n == 0))] if len(flat) else flat
    if len(constant):
        notes.append(f"{len(constant)} latency cell(s) have fewer than 3 distinct latencies, repeated (e.g. the "
                     "tick length logged for every decision): their P(miss) comes from the logged misses/fallbacks, "
                     "flagged latency_informative = False in the decomposition; their latency counterfactuals (λ, "
                     "as:<model>) keep that logged rate, so they say nothing about a change of latency")
    if len(flat) > len(constant):
        notes.append(f"{len(flat) - len(constant)} latency cell(s) have latencies piled up at the window close "
                     "(the harness cuts thinking off at the deadline and acts, e.g. a token budget): a latency "
                     "at the close is not a miss, so their P(miss) comes from the logged misses/fallbacks, "
                     "flagged latency_informative = False in the decomposition; their latency counterfactuals (λ, "
                     "as:<model>) keep that logged rate, so they say nothing about a change of latency")
    return {"timing_separable": timed, "latency_uninformative_cells": int(len(flat)), "notes": notes}


@dataclass
class FitResult:
    """A fitted model: the posterior, the data it saw, diagnostics, and the derived tables."""

    idata: object  # the posterior as an xarray DataTree (ArviZ 1)
    data: ModelData
    diagnostics: dict
    seed: int
    ci_prob: float
    data_hash: str
    latency_family: str = "normal"
    n_draws: int = 0
    chains: int = 0
    tune: int = 0
    sampler: str = "nutpie"
    _diag_table: pd.DataFrame | None = field(default=None, repr=False)
    _loo: pd.DataFrame | None = field(default=None, repr=False)
    _structure_loo: pd.DataFrame | None = field(default=None, repr=False)
    episodes: pd.DataFrame | None = field(default=None, repr=False)  # the tidy frames it was fitted on
    steps: pd.DataFrame | None = field(default=None, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)
    item_latency: bool = False  # items have time intensities (``fit(item_latency=True)``)
    clock_effects: bool = False  # capability under timed clocks has its own effect (``fit(clock_effects=True)``)
    latency_by_correctness: bool = False  # wrong decisions have their own latency (``fit(latency_by_correctness=True)``)

    # ---------------------------------------------------------------- internals
    @property
    def _params(self) -> ParamDraws:
        if "params" not in self._cache:
            self._cache["params"] = param_draws(self.idata["posterior"], self.data, seed=self.seed)
        return self._cache["params"]

    @property
    def _deriver(self) -> Deriver:
        if "deriver" not in self._cache:
            self._cache["deriver"] = Deriver(self.data, item_latency=self.item_latency)
        return self._cache["deriver"]

    def _draws(self, lam: float = 1.0, swap=None) -> dict[str, np.ndarray]:
        # only the observed scenario is kept whole: a λ grid of 8 quantities × rows × draws each would
        # hold gigabytes (37 λ × 61 MB on leaderboard60), and the grids are summarised once
        if swap:
            return self._deriver.compute(self._params, lam, swap)
        if lam != 1.0:
            out = self._deriver.compute(self._params, lam, swap)
            if lam in KEPT_LAMBDAS:
                self._cache[("p_success", lam)] = out["p_success"]
            return out
        if "draws" not in self._cache:
            self._cache["draws"] = self._deriver.compute(self._params, lam, swap)
        return self._cache["draws"]

    def _quantity_draws(self, quantity: str, lam: float = 1.0) -> np.ndarray:
        """Draws (rows × S) of one quantity at λ, from what is kept where it is."""
        kept = self._cache.get((quantity, lam))
        return kept if kept is not None else self._draws(lam)[quantity]

    def _median_latency(self) -> np.ndarray:
        """Per row, the posterior mean of exp(μ) in the row's usual time unit."""
        p, rows = self._params, self._deriver.rows
        return np.array([float(np.exp(p.mu[:, u, m, k]).mean())
                         for u, m, k in zip(self._deriver.modal_unit(), rows["m"], rows["k"])])

    def _rows(self) -> pd.DataFrame:
        return self._deriver.rows.drop(columns=["episodes", "m", "k"])

    # ---------------------------------------------------------------- public tables
    def diagnostics_table(self) -> pd.DataFrame:
        """Per-parameter convergence: param, rhat, ess_bulk, ess_tail."""
        return self._diag_table.copy()

    def decomposition(self, ci_prob: float | None = None) -> pd.DataFrame:
        """One row per model × task_type × clock: observed success rate, posterior p_success,
        p_capable, p_timely, share_timing (mean and equal-tailed interval), then decision-level
        p_on_time/p_early/p_late, fatality and median latency."""
        ci_prob = self.ci_prob if ci_prob is None else ci_prob
        out = summarise(self._rows(), self._draws(), QUANTITIES, ci_prob)
        for q in ("p_timely", "p_timely_lo", "p_timely_hi"):
            out.loc[out["clock"] == "paused", q] = 1.0
        for q in ("share_timing", "share_timing_lo", "share_timing_hi"):
            out.loc[out["clock"] == "paused", q] = 0.0
        out["diagnostics_ok"] = bool(self.diagnostics["ok"])
        rows = self._deriver.rows
        out["fatality"] = self._params.fatality.mean(axis=0)[rows["k"].to_numpy()]
        out["median_latency"] = self._median_latency()
        out["time_unit"] = [self.data.units[u] for u in self._deriver.modal_unit()]
        extra = [c for c in out.columns if c not in DECOMPOSITION_COLUMNS]
        return out[DECOMPOSITION_COLUMNS + extra].reset_index(drop=True)

    def counterfactuals(self, lambdas=(0.25, 0.5, 1, 2, 4), as_models: bool = True,
                        ci_prob: float | None = None) -> pd.DataFrame:
        """p_success when latencies are scaled by λ (``scale``) or replaced by another model's
        latency distribution for the same task type (``as:<model>``, λ = 1). Timed rows only."""
        ci_prob = self.ci_prob if ci_prob is None else ci_prob
        rows = self._rows()
        timed = (rows["clock"] != "paused").to_numpy()
        parts = []
        for lam in lambdas:
            s = summarise(rows, {"p_success": self._quantity_draws("p_success", float(lam))}, ["p_success"], ci_prob)
            parts.append(s.assign(scenario="scale", **{"lambda": float(lam)})[timed])
        if as_models:
            R = self._deriver.rows
            for j, other in enumerate(self.data.models):
                dr = self._draws(1.0, {m: j for m in range(len(self.data.models)) if m != j})
                s = summarise(rows, {"p_success": dr["p_success"]}, ["p_success"], ci_prob)
                keep = timed & (R["m"].to_numpy() != j)
                parts.append(s.assign(scenario=f"as:{other}", **{"lambda": 1.0})[keep])
        out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COUNTERFACTUAL_COLUMNS)
        return out[COUNTERFACTUAL_COLUMNS].reset_index(drop=True)

    def draws(self, quantity: str = "p_success", lam: float = 1.0, wide: bool = False) -> pd.DataFrame:
        """Long frame of posterior draws of a derived quantity: model, task_type, clock, draw, value.
        ``wide=True``: one row per model × task_type × clock (a MultiIndex), one column per draw."""
        if quantity not in QUANTITIES:
            raise ValueError(f"unknown quantity {quantity!r}; one of {QUANTITIES}")
        x = self._quantity_draws(quantity, float(lam))
        rows = self._rows()[["model", "task_type", "clock"]]
        if wide:
            return pd.DataFrame(x, index=pd.MultiIndex.from_frame(rows), columns=pd.RangeIndex(x.shape[1], name="draw"))
        S = x.shape[1]
        out = rows.loc[rows.index.repeat(S)].reset_index(drop=True)
        out["draw"] = np.tile(np.arange(S), len(rows))
        out["quantity"] = quantity
        out["value"] = x.reshape(-1)
        return out

    def compare(self, quantity: str = "p_success", a: str | None = None, b: str | None = None,
                over: str = "model", ci_prob: float | None = None) -> pd.DataFrame:
        """Posterior of ``quantity[a] − quantity[b]`` where ``over`` (``model``, ``clock`` or
        ``task_type``) equals a and b, matched on the other keys (the argument names of
        ``metrics.paired_difference``); columns: the keys, a, b, quantity, difference,
        difference_lo, difference_hi, p_a_gt_b."""
        if over not in ("model", "clock", "task_type"):
            raise ValueError(f"over must be 'model', 'clock' or 'task_type', got {over!r}")
        ci_prob = self.ci_prob if ci_prob is None else ci_prob
        x = self._draws()[quantity]
        rows = self._rows()
        keys = [k for k in ("model", "task_type", "clock") if k != over]
        ia = rows.index[rows[over] == a]
        ib = rows.index[rows[over] == b]
        if not len(ia) or not len(ib):
            raise ValueError(f"no rows with {over} = {a!r} and {b!r}; have {sorted(rows[over].unique())}")
        m = rows.loc[ia, keys].assign(ia=ia).merge(rows.loc[ib, keys].assign(ib=ib), on=keys)
        al = (1 - ci_prob) / 2
        diff = x[m["ia"].to_numpy()] - x[m["ib"].to_numpy()]
        out = m[keys].copy()
        out["a"], out["b"], out["quantity"] = a, b, quantity
        out["difference"] = diff.mean(axis=1)
        out["difference_lo"], out["difference_hi"] = np.quantile(diff, [al, 1 - al], axis=1)
        out["p_a_gt_b"] = (diff > 0).mean(axis=1)
        return out.reset_index(drop=True)

    def success_curve(self, lambdas=None, ci_prob: float | None = None) -> pd.DataFrame:
        """p_success and p_timely (mean/lo/hi) against the latency scale λ (λ = 1: as observed),
        per model × task_type × timed clock; ``rel_latency`` = median latency / median window close."""
        ci_prob = self.ci_prob if ci_prob is None else ci_prob
        lambdas = np.exp(np.linspace(np.log(0.1), np.log(10), 21)) if lambdas is None else lambdas
        rows = self._rows()
        timed = (rows["clock"] != "paused").to_numpy()
        med = self._median_latency()
        closes = self._deriver.median_close()
        parts = []
        for lam in lambdas:
            dr = self._draws(float(lam))
            s = summarise(rows, dr, ["p_success", "p_timely"], ci_prob)
            s["lambda"] = float(lam)
            s["rel_latency"] = lam * med / np.asarray(closes)
            parts.append(s[timed])
        return pd.concat(parts, ignore_index=True)

    def ppc(self, seed: int | None = None, ci_prob: float | None = None) -> pd.DataFrame:
        """Posterior predictive check (tidy): per row, observed vs predicted success rate, and per
        latency cell, observed vs predicted log-latency quantiles (p10/p50/p90); predictive
        intervals at ``ci_prob`` (default the fit's)."""
        from .checks import predictive_check

        return predictive_check(self, self._params, self.seed if seed is None else seed, "posterior",
                                self.ci_prob if ci_prob is None else ci_prob)

    def ppc_flags(self, seed: int | None = None) -> pd.DataFrame:
        """Which families of :meth:`ppc` are flagged: more extreme cells than chance gives
        (:func:`.checks.family_flags`), with what a flag points at."""
        from .checks import family_flags

        return family_flags(self.ppc(seed=seed))

    def prior_predictive(self, draws: int = 500, seed: int | None = None) -> pd.DataFrame:
        """Same table as :meth:`ppc`, from draws of the prior."""
        from .checks import predictive_check, prior_params

        seed = self.seed if seed is None else seed
        return predictive_check(self, prior_params(self.data, self.latency_family, draws, seed,
                                                             self.item_latency), seed, "prior")

    def frequentist(self) -> pd.DataFrame:
        """statsmodels cross-check beside the posterior, with a ``disagree`` flag."""
        from .frequentist import cross_check

        return cross_check(self)

    def prior_sensitivity(self) -> pd.DataFrame:
        """Power-scaling prior and likelihood sensitivity (arviz_stats) of share_timing and p_timely
        per timed row: quantity, model, task_type, clock, prior_sensitivity, likelihood_sensitivity,
        flag, diagnosis (:mod:`.sensitivity`)."""
        if "prior_sensitivity" not in self._cache:
            from .sensitivity import prior_sensitivity

            self._cache["prior_sensitivity"] = prior_sensitivity(self)
        return self._cache["prior_sensitivity"].copy()

    def loo_compare(self) -> pd.DataFrame | None:
        """Normal vs Student-t latency comparison (LOO on log-latency order statistics), if computed."""
        return None if self._loo is None else self._loo.copy()

    def structure_loo(self) -> pd.DataFrame | None:
        """The structures compared by PSIS-LOO on the episodes' outcomes and the timed decisions'
        latencies (``fit(structure="auto")``; :func:`.structures.structure_table`), if computed."""
        return None if self._structure_loo is None else self._structure_loo.copy()

    def silent_loo(self) -> pd.DataFrame:
        """PSIS-LOO of the silent decisions (:func:`.structures.silent_loo`): per group of
        ``data.censored``, one decision's elpd_loo, lpd and Pareto k."""
        if "silent_loo" not in self._cache:
            from .structures import silent_loo

            self._cache["silent_loo"] = silent_loo(self.idata["posterior"], self._params, self.data)
        return self._cache["silent_loo"].copy()

    def outcome_loo(self) -> pd.DataFrame:
        """PSIS-LOO of the episodes' outcomes (:func:`.structures.outcome_loo`): per class of
        identical episodes, one episode's elpd_loo, lpd and Pareto k, and the count ``n``; what
        :func:`compare_structures` compares structures on."""
        if "outcome_loo" not in self._cache:
            from .structures import outcome_loo

            self._cache["outcome_loo"] = outcome_loo(self.idata["posterior"], self._params, self.data)
        return self._cache["outcome_loo"].copy()

    def to_dir(self, out) -> Path:
        """Write decomposition.csv, counterfactuals.csv, diagnostics.json and posterior.nc (and
        latency_loo.csv when the latency family was chosen by LOO, structure_loo.csv when the
        structure was)."""
        from ..about import __version__

        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        self.decomposition().to_csv(out / "decomposition.csv", index=False)
        self.counterfactuals().to_csv(out / "counterfactuals.csv", index=False)
        info = {**self.diagnostics, "seed": self.seed, "draws": self.n_draws, "chains": self.chains,
                "tune": self.tune, "sampler": self.sampler, "latency_family": self.latency_family,
                "item_latency": self.item_latency, "clock_effects": self.clock_effects,
                "latency_by_correctness": self.latency_by_correctness, "ci_prob": self.ci_prob, "rtanalysis_version": __version__, "data_hash": self.data_hash,
                "data": self.data.summary()}
        if self._loo is not None:
            info["latency_loo"] = self._loo.to_dict(orient="records")
            self._loo.to_csv(out / "latency_loo.csv", index=False)
        if self._structure_loo is not None:
            info["structure_loo"] = self._structure_loo.to_dict(orient="records")
            self._structure_loo.to_csv(out / "structure_loo.csv", index=False)
        (out / "diagnostics.json").write_text(json.dumps(_jsonable(info), indent=2) + "\n")
        self.idata.to_netcdf(out / "posterior.nc", engine="h5netcdf")  # h5py is a dependency
        return out

    @classmethod
    def from_dir(cls, path, data) -> "FitResult":
        """The fit :meth:`to_dir` wrote into ``path`` (``posterior.nc`` and ``diagnostics.json``; no
        pickle is ever read), for ``data`` (a LoadResult, frames or paths) whose data hash must be
        the one the fit recorded. The model data are aggregated again from ``data`` (deterministic)."""
        import xarray as xr

        from .build import MAIN_PARAMS
        from .diagnostics import diagnose

        path = Path(path)
        info = json.loads((path / "diagnostics.json").read_text())
        episodes, steps = _as_frames(data)
        digest = data_hash(episodes, steps)
        if digest != info.get("data_hash"):
            raise ValueError(f"{path}: the fit was made from other data (data hash {str(info.get('data_hash'))[:12]}, "
                             f"this data {digest[:12]})")
        idata = xr.open_datatree(path / "posterior.nc", engine="h5netcdf").load()
        _, table = diagnose(idata, [v for v in MAIN_PARAMS if v in idata["posterior"]])
        diag = {k: v for k, v in info.items() if k not in _RUN_KEYS}
        loo = pd.DataFrame(info["latency_loo"]) if "latency_loo" in info else None
        structure_loo = pd.DataFrame(info["structure_loo"]) if "structure_loo" in info else None
        clock_effects = bool(info.get("clock_effects", False))
        by_correctness = bool(info.get("latency_by_correctness", False))
        return cls(idata=idata, data=aggregate(episodes, steps, clock_effects=clock_effects,
                                               latency_by_correctness=by_correctness), diagnostics=diag,
                   seed=info["seed"],
                   ci_prob=info.get("ci_prob", info.get("interval")), data_hash=digest, latency_family=info["latency_family"],
                   n_draws=info["draws"], chains=info["chains"], tune=info["tune"], sampler=info["sampler"],
                   _diag_table=table, _loo=loo, episodes=episodes, steps=steps,
                   item_latency=bool(info.get("item_latency", False)), clock_effects=clock_effects,
                   _structure_loo=structure_loo, latency_by_correctness=by_correctness)


#: keys of diagnostics.json that describe the run rather than the diagnostics
_RUN_KEYS = ("seed", "draws", "chains", "tune", "sampler", "latency_family", "item_latency", "clock_effects",
             "latency_by_correctness", "ci_prob",
             "rtanalysis_version",
             "data_hash", "data", "latency_loo", "structure_loo")


def _jsonable(x):
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return None if not np.isfinite(x) else float(x)
    return x
