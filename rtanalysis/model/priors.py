"""The priors of the capability × timing model, in one documented registry.

Each entry: parameter name → (PyMC distribution name, keyword arguments, why). Scales are on the
logit scale for capability and on the log-latency scale for latency. ``center``/``log_scale`` in a
latency entry are replaced by fixed numbers per declared time unit (:data:`UNIT_LATENCY_PRIOR`:
log-seconds or log-tokens), never by the data: a prior that depends on the data it is fitted to
breaks simulation-based calibration (the prior predictive is no longer the model's) and double-counts
the data.
"""

from __future__ import annotations

#: every prior of the model, by parameter name: ``(distribution, its arguments, rationale)``
PRIORS: dict[str, tuple[str, dict, str]] = {
    # capability, per decision: logit = a0 + a_m + b_k + g_mk + d_i + offset_k; an episode of n
    # decisions is capable with that probability to the power g_k (n / g_k)^β_k
    "a0": ("Normal", {"mu": 0.0, "sigma": 1.5}, "baseline logit of capability; ±3 covers p 0.05–0.95"),
    # models and task types are few (2-10) and data-rich: a hierarchical SD over 2-3 levels is not
    # estimable and makes a funnel NUTS cannot sample, so their zero-sum effects get a fixed,
    # weakly informative scale ("Fixed"), and so does their interaction (a fixed Normal(0, 1) logit,
    # not a hierarchical SD); only the items (many per type) keep a hierarchical SD
    "sd_model_cap": ("Fixed", {"value": 1.5}, "models' capability effects, zero-sum, Normal(0, 1.5) logit"),
    "sd_type_cap": ("Fixed", {"value": 1.5}, "task types' difficulty effects, zero-sum, Normal(0, 1.5) logit"),
    "sd_model_type_cap": ("Fixed", {"value": 1.0}, "model × task-type interaction, zero-sum, Normal(0, 1) logit"),
    "sd_item_cap": ("HalfNormal", {"sigma": 1.0}, "spread of items (tasks) within each task type (logit)"),
    "timed_cap": ("Normal", {"mu": 0.0, "sigma": 1.0},
                  "per model, capability logit under a timed clock minus paused (structure part ``clock_effects``): an "
                  "agent that thinks less when the clock runs; identified by the model's paused episodes"),
    "length_cap": ("Normal", {"mu": 1.0, "sigma": 0.5},
                   "P(capable) = P(decision right)^(g·(n/g)^β): β = 1 when every decision must be right "
                   "(how `capable` is defined), 0 when length does not matter"),
    # timing fatality: P(one missed window kills the episode), a hurdle with a point mass at f = 1
    "always_fatal": ("Beta", {"alpha": 1.0, "beta": 1.0},
                     "P(a task type's missed window always kills the episode, f = 1); uniform"),
    "fatality": ("Beta", {"alpha": 1.0, "beta": 1.0},
                 "f of a type where a miss is not always fatal; uniform: no prior view on how forgiving"),
    # latency: log L ~ Normal(c0[unit] + u_m + v_k + w_mk, exp(s0[unit] + s_m + s_k))
    "c0": ("Normal", {"mu": "center", "sigma": 2.0},
           "log-latency intercept per time unit, centred at a fixed typical latency of the unit "
           "(UNIT_LATENCY_PRIOR: 1.5 s, 400 tokens); e² ≈ 7× either way"),
    "sd_model_lat": ("Fixed", {"value": 1.5}, "models' log-latency effects, zero-sum, Normal(0, 1.5)"),
    "sd_type_lat": ("Fixed", {"value": 1.5}, "task types' log-latency effects, zero-sum, Normal(0, 1.5)"),
    "sd_model_type_lat": ("Fixed", {"value": 1.0}, "model × task-type log-latency interaction, zero-sum, Normal(0, 1)"),
    "s0": ("Normal", {"mu": "log_scale", "sigma": 1.0},
           "log of the within-cell SD of log-latency, centred at log 0.5 (SD 0.07-3.6 in 95%)"),
    "sd_item_lat": ("HalfNormal", {"sigma": 1.0},
                    "item time intensity (structure part ``item_latency``): spread of items' log-latency effects within "
                    "each task type (van der Linden's lognormal response-time model; LNIRT)"),
    "item_cap_per_lat": ("Normal", {"mu": 0.0, "sigma": 1.5},
                         "per task type, item capability logit per unit of item time intensity (structure part ``item_latency``;"
                         " LNIRT's difficulty-intensity correlation in regression form); < 0: slow items are hard"),
    "wrong_lat": ("Normal", {"mu": 0.0, "sigma": 1.0},
                  "per model × task type, log-latency of content-wrong decisions minus correct ones "
                  "(structure part ``latency_by_correctness``, labelled data): thinking longer helps (> 0 when wrong "
                  "answers are slower, < 0 when they are faster); e ≈ 2.7× either way"),
    "latency_icc": ("Beta", {"alpha": 1.0, "beta": 3.0},
                    "per task type, the share of a cell's log-latency variance that lies between episodes (episode "
                    "slowness: a hard state slows every decision of the episode); mean 0.25, 0 = decisions independent"),
    "sd_model_sigma": ("Fixed", {"value": 0.5}, "models' log-SD effects, zero-sum, Normal(0, 0.5)"),
    "sd_type_sigma": ("Fixed", {"value": 0.5}, "task types' log-SD effects, zero-sum, Normal(0, 0.5)"),
    # silence: a hurdle. With probability `silence_prevalence` a model has a "no answer" mode with
    # P(silent whatever the latency) = `silence`; otherwise its silences are latencies past the censor point
    "silence_prevalence": ("Beta", {"alpha": 1.0, "beta": 1.0},
                           "share of models with a no-answer mode; uniform. Lets π be exactly 0"),
    "silence": ("Beta", {"alpha": 1.0, "beta": 19.0},
                "P(no answer) of a model that has the mode; mean 0.05, 95% below ~0.15"),
    # heavier-tailed variant
    "nu": ("Gamma", {"alpha": 2.0, "beta": 0.1}, "Student-t degrees of freedom (Juárez & Steel 2010)"),
    # two-mode variant (``mixture``, :mod:`.families`): per model, a second mode (share w_m) δ_m
    # within-mode SDs from the first; μ and σ stay the mean and total SD of log-latency. (w, δ) and
    # (1 − w, −δ) are the same distribution: the labels are free, what is reported is label-free
    "mode_share": ("Uniform", {"lower": 0.0, "upper": 1.0},
                   "per model, share of decisions in the second latency mode; uniform"),
    "mode_shift": ("Normal", {"mu": 0.0, "sigma": 3.0},
                   "per model, offset of the second mode from the first in within-mode SDs (either sign); 0 "
                   "is one log-normal"),
}

#: fixed prior centres per declared time unit: (typical latency, typical SD of log-latency). Not
#: estimated from the data (that made the priors data-dependent; see the module docstring).
UNIT_LATENCY_PRIOR: dict[str, tuple[float, float]] = {"s": (1.5, 0.5), "tokens": (400.0, 0.5)}


def latency_prior_fill(units) -> dict:
    """The ``center``/``log_scale`` values of the c0/s0 priors for these time units (arrays)."""
    import numpy as np

    unknown = [u for u in units if u not in UNIT_LATENCY_PRIOR]
    if unknown:
        raise ValueError(f"no latency prior for time unit(s) {unknown}; known: {sorted(UNIT_LATENCY_PRIOR)}")
    ref = np.array([UNIT_LATENCY_PRIOR[u] for u in units], dtype=float).reshape(-1, 2)
    return {"center": np.log(ref[:, 0]), "log_scale": np.log(ref[:, 1])}


#: P(success | not capable) and P(failure | capable, no miss) for labelled episodes: a benchmark may
#: forgive one wrong decision or fail a clean run; a fixed small leak keeps such data from breaking the
#: fit without adding a parameter.
LEAK = 0.01


def prior_table():
    """The registry as a tidy frame (for docs and the report)."""
    import pandas as pd

    return pd.DataFrame([(k, d, ", ".join(f"{a}={v}" for a, v in kw.items()), why)
                         for k, (d, kw, why) in PRIORS.items()],
                        columns=["parameter", "distribution", "arguments", "rationale"])
