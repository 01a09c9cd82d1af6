"""The result of :func:`~rtanalysis.model.fit.fit`: :class:`FitResult`, the posterior with the data it saw,
its diagnostics, and every derived table (decomposition, counterfactuals, checks, LOO), written to and read
back from a folder (:meth:`FitResult.to_dir`, :meth:`FitResult.from_dir`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .data import ModelData, aggregate
from .derived import QUANTITIES, Deriver, ParamDraws, param_draws, summarise
from .inputs import as_frames, data_hash
from .spec import ModelSpec

DECOMPOSITION_COLUMNS = [
    "model", "task_type", "clock", "n_episodes", "success_rate",
    "p_success", "p_success_lo", "p_success_hi", "p_capable", "p_capable_lo", "p_capable_hi",
    "p_timely", "p_timely_lo", "p_timely_hi", "share_timing", "share_timing_lo", "share_timing_hi",
    "diagnostics_ok",
]
COUNTERFACTUAL_COLUMNS = ["model", "task_type", "clock", "scenario", "lambda", "p_success", "p_success_lo",
                          "p_success_hi"]
#: latency scales whose p_success draws a fit keeps once computed: the report's headline pools
#: p_success at λ = 0.5 over task types, a point of the counterfactual curve it has already drawn
#: (each kept λ costs rows × draws floats: 7.7 MB for leaderboard60's 240 rows at 4,000 draws)
KEPT_LAMBDAS = (0.5,)
#: the λ grid of :meth:`FitResult.success_curve`: quarter steps of log2 λ from 0.105 to 9.51. It holds the
#: figures' counterfactual grid (``plots.CURVE_LAMBDAS``, 0.25 to 4), so a report computes each λ once for both
LAMBDA_GRID = tuple(float(x) for x in np.round(2.0 ** (np.arange(-13, 14) / 4), 4))


@dataclass
class FitResult:
    """A fitted model: the posterior, the data it saw, diagnostics, and the derived tables."""

    idata: object  # the posterior as an xarray DataTree (ArviZ 1)
    data: ModelData
    diagnostics: dict
    seed: int
    ci_prob: float
    data_hash: str
    spec: ModelSpec = field(default_factory=ModelSpec)  # the model fitted (an ``auto`` family or structure resolved)
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

    # ---------------------------------------------------------------- internals
    @property
    def _params(self) -> ParamDraws:
        if "params" not in self._cache:
            self._cache["params"] = param_draws(self.idata["posterior"], self.data, seed=self.seed)
        return self._cache["params"]

    @property
    def _deriver(self) -> Deriver:
        if "deriver" not in self._cache:
            self._cache["deriver"] = Deriver(self.data, item_latency=self.spec.item_latency)
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

    def _chains_of(self, p: ParamDraws) -> int:
        """The chains draws ``p`` come from, in chain-major order (1 where they do not divide evenly)."""
        return self.chains if self.chains and p.n % self.chains == 0 else 1

    def _thinned(self, draws: int | None) -> ParamDraws:
        """The posterior's draws, or at most ``draws`` of them: every ``step``-th draw of each chain, so
        each chain gives the same number (:meth:`curve_ess` reads them by chain)."""
        p = self._params
        if draws is None or draws >= p.n:
            return p
        key = ("thinned", int(draws))
        if key not in self._cache:
            chains = self._chains_of(p)
            per_chain = p.n // chains
            step = -(-p.n // int(draws))
            idx = (np.arange(chains)[:, None] * per_chain + np.arange(0, per_chain, step)[None, :]).ravel()
            self._cache[key] = p.take(idx)
        return self._cache[key]

    def _lambda_summary(self, lam: float, ci_prob: float, draws: int | None) -> pd.DataFrame:
        """Per row, p_success and p_timely (mean, interval) at latency scale λ from at most ``draws`` draws
        (None: all); kept, so that the figures' two λ curves compute a λ they share once."""
        key = ("lambda_summary", float(lam), float(ci_prob), draws)
        if key not in self._cache:
            p = self._thinned(draws)
            dr = self._draws(float(lam)) if p is self._params else self._deriver.compute(p, float(lam))
            self._cache[key] = summarise(self._rows(), dr, ["p_success", "p_timely"], ci_prob)
        return self._cache[key]

    def curve_ess(self, draws: int | None) -> float:
        """The smallest bulk ESS of p_success at λ = 1 over the timed rows, from the draws
        ``success_curve(draws=...)`` and ``counterfactuals(draws=...)`` use: what the Monte Carlo
        error of their means is, sd / √ESS (NaN without a timed row)."""
        from arviz_stats.base import array_stats

        p = self._thinned(draws)
        chains = self._chains_of(p)
        timed = (self._rows()["clock"] != "paused").to_numpy()
        x = self._draws()["p_success"] if p is self._params else self._deriver.compute(p, 1.0)["p_success"]
        x = x[timed]
        if not len(x):
            return float("nan")
        return float(np.nanmin(array_stats.ess(x.reshape(len(x), chains, -1), chain_axis=-2, draw_axis=-1)))

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

    def highest_probability(self, quantity: str = "p_success") -> pd.DataFrame:
        """Per model × task_type × clock: ``p_highest``, the posterior probability that this model's
        ``quantity`` is the highest of the models in its task type and clock (the share of draws where it
        is; a tie goes to the first model). What a ranking's decision rule reads (the report names a
        model best only where it passes :data:`rtanalysis.reporting.document.HIGHEST_PROBABILITY`)."""
        if quantity not in QUANTITIES:
            raise ValueError(f"unknown quantity {quantity!r}; one of {QUANTITIES}")
        x = self._draws()[quantity]
        out = self._rows()[["model", "task_type", "clock"]].copy()
        p = np.zeros(len(out))
        for idx in out.groupby(["task_type", "clock"], sort=False).indices.values():
            top = np.argmax(np.nan_to_num(x[idx], nan=-np.inf), axis=0)
            p[idx] = np.bincount(top, minlength=len(idx)) / x.shape[1]
        out["quantity"] = quantity
        out["p_highest"] = p
        return out.reset_index(drop=True)

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
                        ci_prob: float | None = None, draws: int | None = None) -> pd.DataFrame:
        """p_success when latencies are scaled by λ (``scale``) or replaced by another model's
        latency distribution for the same task type (``as:<model>``, λ = 1). Timed rows only.
        ``draws``: from at most this many of the posterior's draws, evenly thinned (None: all; the report's
        figure curve uses ``plots.CURVE_DRAWS`` and states the Monte Carlo error, :meth:`curve_ess`)."""
        ci_prob = self.ci_prob if ci_prob is None else ci_prob
        rows = self._rows()
        timed = (rows["clock"] != "paused").to_numpy()
        parts = []
        for lam in lambdas:
            s = self._lambda_summary(float(lam), ci_prob, draws)
            parts.append(s.assign(scenario="scale", **{"lambda": float(lam)})[timed])
        if as_models:
            R = self._deriver.rows
            p = self._thinned(draws)
            for j, other in enumerate(self.data.models):
                swap = {m: j for m in range(len(self.data.models)) if m != j}
                dr = self._draws(1.0, swap) if p is self._params else self._deriver.compute(p, 1.0, swap)
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

    def success_curve(self, lambdas=LAMBDA_GRID, ci_prob: float | None = None, draws: int | None = None) -> pd.DataFrame:
        """p_success and p_timely (mean/lo/hi) against the latency scale λ (λ = 1: as observed),
        per model × task_type × timed clock; ``rel_latency`` = median latency / median window close.
        ``draws``: as in :meth:`counterfactuals`."""
        ci_prob = self.ci_prob if ci_prob is None else ci_prob
        lambdas = LAMBDA_GRID if lambdas is None else lambdas
        rows = self._rows()
        timed = (rows["clock"] != "paused").to_numpy()
        med = self._median_latency()
        closes = self._deriver.median_close()
        parts = []
        for lam in lambdas:
            s = self._lambda_summary(float(lam), ci_prob, draws).copy()
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
        return predictive_check(self, prior_params(self.data, self.spec.latency_family, draws, seed,
                                                             self.spec.item_latency, self.spec.episode_latency),
                                seed, "prior")

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
        latencies (``fit(structure="auto")``; :func:`~rtanalysis.model.choice.structure_table`), if
        computed."""
        return None if self._structure_loo is None else self._structure_loo.copy()

    def silent_loo(self) -> pd.DataFrame:
        """PSIS-LOO of the silent decisions (:func:`~rtanalysis.model.choice.silent_loo`): per group of
        ``data.censored``, one decision's elpd_loo, lpd and Pareto k."""
        if "silent_loo" not in self._cache:
            from .choice import silent_loo

            self._cache["silent_loo"] = silent_loo(self.idata["posterior"], self._params, self.data)
        return self._cache["silent_loo"].copy()

    def outcome_loo(self) -> pd.DataFrame:
        """PSIS-LOO of the episodes' outcomes (:func:`~rtanalysis.model.choice.outcome_loo`): per class of
        identical episodes, one episode's elpd_loo, lpd and Pareto k, and the count ``n``; what
        :func:`~rtanalysis.model.fit.compare_structures` compares structures on."""
        if "outcome_loo" not in self._cache:
            from .choice import outcome_loo

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
                "tune": self.tune, "sampler": self.sampler, "spec": self.spec.to_dict(), "ci_prob": self.ci_prob,
                "rtanalysis_version": __version__, "data_hash": self.data_hash,
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
        episodes, steps = as_frames(data)
        digest = data_hash(episodes, steps)
        if digest != info.get("data_hash"):
            raise ValueError(f"{path}: the fit was made from other data (data hash {str(info.get('data_hash'))[:12]}, "
                             f"this data {digest[:12]})")
        idata = xr.open_datatree(path / "posterior.nc", engine="h5netcdf").load()
        _, table = diagnose(idata, [v for v in MAIN_PARAMS if v in idata["posterior"]])
        diag = {k: v for k, v in info.items() if k not in _RUN_KEYS}
        loo = pd.DataFrame(info["latency_loo"]) if "latency_loo" in info else None
        structure_loo = pd.DataFrame(info["structure_loo"]) if "structure_loo" in info else None
        spec = ModelSpec.from_dict(info["spec"])
        d = aggregate(episodes, steps, clock_effects=spec.clock_effects,
                      latency_by_correctness=spec.latency_by_correctness, read_ended=spec.read_ended)
        return cls(idata=idata, data=d, diagnostics=diag, seed=info["seed"], ci_prob=info["ci_prob"], data_hash=digest,
                   spec=spec, n_draws=info["draws"], chains=info["chains"], tune=info["tune"], sampler=info["sampler"],
                   _diag_table=table, _loo=loo, _structure_loo=structure_loo, episodes=episodes, steps=steps)


#: keys of diagnostics.json that describe the run rather than the diagnostics
_RUN_KEYS = ("seed", "draws", "chains", "tune", "sampler", "spec", "ci_prob", "rtanalysis_version", "data_hash", "data",
             "latency_loo", "structure_loo")


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
