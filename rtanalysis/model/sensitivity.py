"""Prior and likelihood sensitivity of the decomposition by power-scaling (Kallioinen et al. 2024).

The posterior is reweighted as if the prior (or the likelihood) were raised to a power α near 1
(α = 0.99 and 1.01, Pareto-smoothed importance weights, no refit), and the sensitivity of a quantity
is the gradient of the cumulative Jensen-Shannon distance between its weighted and unweighted draws
with respect to log2 α: ``arviz_stats.psense``, with its threshold (0.05) and diagnosis rule
(``psense_summary``).

The likelihood is written as ``pm.Potential`` terms on aggregated tables (:mod:`.build`), so the
sampler has no pointwise log-likelihood (:mod:`~rtanalysis.model.choice` recomputes one for the outcomes and
the timed latencies, not the silences): the per-draw *sum* of the potentials is the log-likelihood. That is
enough here, since power-scaling perturbs the likelihood as a whole (one weight per draw); it rules out only
the per-observation selections ``priorsense`` offers. Where the sampler recorded its own log-density at each
draw (nutpie's ``logp``: prior, potentials and the transforms' log-Jacobians, on the unconstrained scale), the
log-likelihood is that minus the prior part, which costs a few parameters a draw; evaluating the potentials
again cost the likelihood over every group at every draw (12 s of a report at 10^6 episodes). The two agree to
rounding (``tests/test_model_sensitivity.py``).

The log prior is the sum of the free variables' prior log-densities on the constrained scale (the
parameters' own densities, what ``pm.compute_log_prior`` evaluates), without the item level
``z_item_cap``: its Normal(0, sd) is part of the hierarchy, not a prior choice (brms leaves
group-level effects out of ``lprior`` likewise), and ``sd_item_cap``'s prior is scaled instead.
Derived quantities (share_timing, p_timely) are not posterior variables: their draws enter a DataTree
of their own beside the two log-densities, and arviz_stats' own functions do the rest.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: arviz_stats' threshold for a sensitivity that matters (psense_summary's default)
THRESHOLD = 0.05
#: the free variables whose prior densities are left out of the log prior (see the module docstring)
HIERARCHY_LEVEL = ("z_item_cap", "z_item_lat")
#: the derived quantities checked by default
SENSITIVITY_QUANTITIES = ("share_timing", "p_timely")
SENSITIVITY_COLUMNS = ["quantity", "model", "task_type", "clock", "prior_sensitivity", "likelihood_sensitivity",
                       "flag", "diagnosis"]


def _unconstrained_prior(model, umodel):
    """The part of the sampler's log-density that is not the likelihood: every free variable's prior
    log-density on the unconstrained scale, the transforms' log-Jacobians included, as a graph of
    ``umodel``'s (constrained) value variables."""
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.replace import graph_replace
    from pytensor.graph.traversal import graph_inputs

    logp = model.logp(vars=model.free_RVs, jacobian=True)
    # umodel's copies of the data (and dims), by name: one set of shared variables in the function,
    # as its on-disk cache needs
    own = {v.name: v for v in [*umodel.named_vars.values(), *umodel.dim_lengths.values()]
           if isinstance(v, SharedVariable)}
    to_unconstrained = {v: own[v.name] for v in graph_inputs([logp])
                        if isinstance(v, SharedVariable) and v.name in own}
    for rv in model.free_RVs:
        value = umodel.rvs_to_values[umodel[rv.name]]
        transform = model.rvs_to_transforms.get(rv)
        to_unconstrained[model.rvs_to_values[rv]] = (value if transform is None
                                                     else transform.forward(value, *rv.owner.inputs))
    return graph_replace(logp, to_unconstrained, strict=False)


def log_prior_likelihood(model, posterior, logp_draws: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(log prior, log likelihood), each (chain, draw), of ``model`` at every draw of ``posterior``
    (a dataset of the free variables on their constrained scale, as the fit stores them).
    ``logp_draws`` (chain, draw): the sampler's log-density at those draws (unconstrained scale,
    with the log-Jacobians); given, the log likelihood is it minus the prior part, without evaluating
    the potentials again."""
    from pymc.model.transform.conditioning import remove_value_transforms

    from .sampler import FUNCTIONS_LOCK, cached_function, once_per_draw_mode

    # without transforms the value variables are the constrained parameters the posterior holds
    umodel = remove_value_transforms(model)
    prior_rvs = [rv for rv in umodel.free_RVs if rv.name not in HIERARCHY_LEVEL]
    second = (umodel.logp(vars=umodel.potentials) if logp_draws is None
              else _unconstrained_prior(model, umodel))
    outs = [umodel.logp(vars=prior_rvs), second]
    # on PyTensor's on-disk cache like the sampler's log-density: compiled once per machine
    n_chain, n_draw = posterior.sizes["chain"], posterior.sizes["draw"]
    n = n_chain * n_draw
    values = [np.asarray(posterior[v.name].values, dtype=v.type.dtype).reshape(n, *posterior[v.name].shape[2:])
              for v in umodel.value_vars]
    what = "log likelihood" if logp_draws is None else "unconstrained log prior"
    with FUNCTIONS_LOCK:
        fn = cached_function(umodel, umodel.value_vars, lambda: outs, outs, f"power-scaling log prior, {what}",
                             mode=once_per_draw_mode())
        out = np.array([[float(x) for x in fn(*(v[s] for v in values))] for s in range(n)])
    log_prior = out[:, 0].reshape(n_chain, n_draw)
    if logp_draws is None:
        return log_prior, out[:, 1].reshape(n_chain, n_draw)
    log_lik = np.asarray(logp_draws, dtype=float).reshape(n_chain, n_draw) - out[:, 1].reshape(n_chain, n_draw)
    return log_prior, log_lik


def sampler_logp(res) -> np.ndarray | None:
    """nutpie's log-density at each kept draw of the fit ``res`` (chain, draw), or None (another
    sampler, or a fit stored without it)."""
    if res.sampler != "nutpie" or "sample_stats" not in res.idata.children:
        return None
    stats = res.idata["sample_stats"]
    return np.asarray(stats["logp"].values, dtype=float) if "logp" in stats.data_vars else None


def sensitivity_tree(draws: dict[str, np.ndarray], log_prior: np.ndarray, log_lik: np.ndarray):
    """A DataTree arviz_stats' ``psense`` reads: ``posterior`` with each quantity's draws (rows × S,
    S = chain × draw in chain-major order) as a variable over ``row``, ``log_prior`` and
    ``log_likelihood`` with one variable each."""
    import xarray as xr

    n_chain, n_draw = log_prior.shape
    post = xr.Dataset({q: (("chain", "draw", "row"), np.asarray(x).T.reshape(n_chain, n_draw, -1))
                       for q, x in draws.items()})
    return xr.DataTree.from_dict({
        "posterior": post,
        "log_prior": xr.Dataset({"prior": (("chain", "draw"), log_prior)}),
        "log_likelihood": xr.Dataset({"potentials": (("chain", "draw"), log_lik)}),
    })


def diagnose(prior: float, likelihood: float, threshold: float = THRESHOLD) -> str:
    """arviz_stats' ``psense_summary`` diagnosis ("" where it prints ✓)."""
    if prior >= threshold and likelihood >= threshold:
        return "potential prior-data conflict"
    if prior > threshold > likelihood:
        return "potential strong prior / weak likelihood"
    return ""


def power_scaling(tree, rows: pd.DataFrame, threshold: float = THRESHOLD) -> pd.DataFrame:
    """Tidy table of prior and likelihood power-scaling sensitivity of every variable of ``tree``'s
    posterior, one row per (quantity, ``rows`` row); ``flag`` where arviz_stats diagnoses a problem."""
    from arviz_stats import psense

    # a quantity constant over the draws (p_timely = 1 where nothing can miss) has no distance to
    # measure: NaN, not flagged, and no 0/0 warning
    with np.errstate(invalid="ignore", divide="ignore"):
        by_group = {g: psense(tree, group=g) for g in ("prior", "likelihood")}
    parts = []
    for q in tree["posterior"].data_vars:
        part = rows[["model", "task_type", "clock"]].copy()
        part.insert(0, "quantity", q)
        part["prior_sensitivity"] = np.asarray(by_group["prior"][q].values, dtype=float)
        part["likelihood_sensitivity"] = np.asarray(by_group["likelihood"][q].values, dtype=float)
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    out["diagnosis"] = [diagnose(p, lik, threshold) for p, lik in
                        zip(out["prior_sensitivity"], out["likelihood_sensitivity"])]
    out["flag"] = out["diagnosis"] != ""
    return out[SENSITIVITY_COLUMNS]


def prior_sensitivity(res, quantities=SENSITIVITY_QUANTITIES, threshold: float = THRESHOLD) -> pd.DataFrame:
    """Power-scaling sensitivity of ``quantities`` per timed decomposition row of the fit ``res``
    (paused rows have p_timely = 1 and share_timing = 0 by definition: nothing to perturb)."""
    from .build import build_model

    model = build_model(res.data, res.spec.latency_family, item_latency=res.spec.item_latency,
                        episode_latency=res.spec.episode_latency)
    log_prior, log_lik = log_prior_likelihood(model, res.idata["posterior"], sampler_logp(res))
    rows = res._deriver.rows
    timed = (rows["clock"] != "paused").to_numpy()
    if not timed.any():
        return pd.DataFrame(columns=SENSITIVITY_COLUMNS)
    derived = res._draws()
    tree = sensitivity_tree({q: derived[q][timed] for q in quantities}, log_prior, log_lik)
    return power_scaling(tree, rows[timed].reset_index(drop=True), threshold)
