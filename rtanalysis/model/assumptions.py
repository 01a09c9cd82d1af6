"""What each counterfactual rests on, for the report to print next to its table (``docs/model.md``,
"Assumptions"). ``res.counterfactuals()`` scenarios: ``scale`` (every latency × λ) and ``as:<model>``
(another model's latency distribution for the same task type)."""

from __future__ import annotations

#: assumption id → the statement (one sentence, as printed)
COUNTERFACTUAL_ASSUMPTIONS: dict[str, str] = {
    "no_speed_accuracy": "No speed-accuracy trade-off under the intervention: changing how long the agent takes "
                         "does not change what it decides (each decision's content is held fixed).",
    "latency_independent_of_correctness": "Latency is independent of correctness given the model, task type and "
                                          "item (hard items are not also the slow ones).",
    "latency_given_correctness": "Given the model, task type and whether a decision is right, its latency is "
                                 "independent of the rest; a capable episode's decisions have the latency of the "
                                 "correct ones (wrong decisions' own shift is fitted: latency_by_correctness).",
    "environment_fixed": "Windows, give-up times and episode length are not changed by latency.",
    "pure_scale": "A pure change of scale: every latency is multiplied by the same lambda; the spread, the share "
                  "of it an episode's decisions have in common (episode slowness), the tail, the share of the slow "
                  "mode (mixture family) and the silence mode are unchanged.",
    "tail_valid": "The fitted parametric tail (log-normal, log-t or the two-mode mixture) holds at lambda times the observed latencies, "
                  "beyond the range the logs show.",
    "transport": "Transport: another model's latency distribution on this task type (median, spread, slow-mode share, silence) "
                 "would hold for this model's decisions on the same items.",
}

#: scenario kind → the assumptions it rests on (ids of :data:`COUNTERFACTUAL_ASSUMPTIONS`)
SCENARIO_ASSUMPTIONS: dict[str, tuple[str, ...]] = {
    "scale": ("no_speed_accuracy", "latency_independent_of_correctness", "environment_fixed", "pure_scale",
              "tail_valid"),
    "as": ("no_speed_accuracy", "latency_independent_of_correctness", "environment_fixed", "transport"),
}


#: a structure part (:data:`.spec.PARTS`) → the assumption it weakens and the one in its place
STRUCTURE_ASSUMPTIONS: dict[str, tuple[str, str]] = {
    "latency_by_correctness": ("latency_independent_of_correctness", "latency_given_correctness"),
}


def assumptions_for(scenario: str, spec=None) -> list[str]:
    """The statements a counterfactual ``scenario`` (``scale`` or ``as:<model>``) rests on, under the fit's
    :class:`~.spec.ModelSpec` ``spec`` (its parts swap assumptions: :data:`STRUCTURE_ASSUMPTIONS`; ``None``:
    the base structure)."""
    kind = "as" if scenario.startswith("as:") else scenario
    if kind not in SCENARIO_ASSUMPTIONS:
        raise ValueError(f"unknown counterfactual scenario {scenario!r}; expected 'scale' or 'as:<model>'")
    parts = spec.parts if spec is not None else ()
    swap = dict(STRUCTURE_ASSUMPTIONS[part] for part in parts if part in STRUCTURE_ASSUMPTIONS)
    return [COUNTERFACTUAL_ASSUMPTIONS[swap.get(a, a)] for a in SCENARIO_ASSUMPTIONS[kind]]
