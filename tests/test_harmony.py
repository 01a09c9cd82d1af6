"""Harmony across task types (rtanalysis.model.harmony)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rtanalysis.model.harmony import HARMONY_COLUMNS, gini_harmony, harmony_table


def test_gini_harmony_extremes_and_known_value():
    assert gini_harmony(np.array([0.4, 0.4, 0.4])) == pytest.approx(1.0)
    assert gini_harmony(np.array([0.0, 0.0, 0.9])) == pytest.approx(0.0)
    # (0.95, 0.95, 0.3): Σ|vi − vj| = 4 · 0.65, mean 0.7333, K = 3 → G = 2.6 / 13.2, harmony = 1 − 1.5 G
    assert gini_harmony(np.array([0.95, 0.95, 0.3])) == pytest.approx(1 - 1.5 * 2.6 / (2 * 9 * 2.2 / 3))
    assert np.isnan(gini_harmony(np.array([0.5])))


def _long(values: dict, draws: int, rng, noise=0.01):
    rows = []
    for (m, k), v in values.items():
        for d in range(draws):
            rows.append((m, k, "wall", d, np.clip(v + noise * rng.standard_normal(), 0, 1)))
    return pd.DataFrame(rows, columns=["model", "task_type", "clock", "draw", "value"])


def test_harmony_tells_one_bad_type_from_slow_everywhere():
    rng = np.random.default_rng(0)
    types = ["a", "b", "c"]
    cap = _long({(m, k): 0.7 for m in ("concentrated", "uniform") for k in types}, 200, rng)
    tim = _long({**{("concentrated", k): v for k, v in zip(types, (0.95, 0.95, 0.3))},
                 **{("uniform", k): 0.4 for k in types}}, 200, rng)
    h = harmony_table(cap, tim, ci_prob=0.9).set_index("model")
    assert list(h.reset_index().columns) == HARMONY_COLUMNS
    assert h.loc["uniform", "harmony_timely_lo"] > h.loc["concentrated", "harmony_timely_hi"]
    assert h.loc["concentrated", "harmony_timely"] == pytest.approx(0.70, abs=0.03)
    assert (h["harmony_capable"] > 0.97).all()
    assert (h["harmony_timely_lo"] <= h["harmony_timely"]).all() and (h["harmony_timely"] <= h["harmony_timely_hi"]).all()


def test_counterfactual_assumptions_cover_both_scenarios():
    from rtanalysis.model.assumptions import (COUNTERFACTUAL_ASSUMPTIONS, SCENARIO_ASSUMPTIONS, STRUCTURE_ASSUMPTIONS,
                                              assumptions_for)
    from rtanalysis.model import ModelSpec

    used = set(a for ids in SCENARIO_ASSUMPTIONS.values() for a in ids)
    assert used | {new for _, new in STRUCTURE_ASSUMPTIONS.values()} == set(COUNTERFACTUAL_ASSUMPTIONS)
    assert any("Transport" in s for s in assumptions_for("as:strong-fast"))
    assert not any("Transport" in s for s in assumptions_for("scale"))
    # a fit with wrong decisions' own latency rests on independence given correctness instead
    for scenario in ("scale", "as:strong-fast"):
        plain, by_label = assumptions_for(scenario), assumptions_for(scenario, ModelSpec(structure="latency_by_correctness"))
        assert COUNTERFACTUAL_ASSUMPTIONS["latency_independent_of_correctness"] in plain
        assert COUNTERFACTUAL_ASSUMPTIONS["latency_independent_of_correctness"] not in by_label
        assert COUNTERFACTUAL_ASSUMPTIONS["latency_given_correctness"] in by_label and len(by_label) == len(plain)
    with pytest.raises(ValueError, match="unknown counterfactual scenario"):
        assumptions_for("shift")
