"""Response-slot tables → rtlog tables, and the quality–timeliness slot F1."""

import json

import numpy as np
import pandas as pd
import pytest

import rtanalysis
from rtanalysis.adapters import detect_format
from rtanalysis.adapters.response_slots import SLOT_OUTCOMES, slot_f1

from .adapters_fixtures import SLOT_COLUMNS

# (slot, trigger, window start, window end, response, correct, invalid) -> expected outcome
HAND = [
    ("m", "s1", "a", "qa", 10.0, 10.0, 14.0, 12.0, True, False, 0.9),   # hit
    ("m", "s1", "b", "qa", 20.0, 21.0, 25.0, 20.5, True, False, 0.8),   # early
    ("m", "s1", "c", "qa", 30.0, 30.0, 33.0, 36.0, True, False, 0.7),   # late
    ("m", "s1", "d", "qa", 40.0, 40.0, 44.0, None, None, None, 0.0),    # silent
    ("m", "s2", "e", "alert", 5.0, 5.0, 8.0, 6.0, False, False, 0.1),   # wrong
    ("m", "s2", "f", "alert", 15.0, 15.0, 18.0, 16.0, True, True, 0.0),  # invalid
    ("m", "s2", "g", "alert", 1.0, 1.0, 3.0, 2.0, True, False, 1.0),    # hit, listed out of order
]


def hand_frame():
    return pd.DataFrame(HAND, columns=SLOT_COLUMNS)


def write_csv(path, frame):
    frame.to_csv(path, index=False)
    return path


def test_slots_to_episodes(tmp_path):
    f = write_csv(tmp_path / "slots.csv", hand_frame())
    assert detect_format(f) == "response-slots"
    res = rtanalysis.load(f)
    assert res.n_read == res.n_accepted == 2
    ep = res.episodes.set_index("episode_id")
    assert ep.loc["m/s1", "task_type"] == "qa" and ep.loc["m/s2", "task"] == "s2"
    assert not ep["success"].any()
    assert ep.loc["m/s1", "score"] == pytest.approx(np.mean([0.9, 0.8, 0.7, 0.0]))
    assert (ep["clock"] == "wall").all() and ep.loc["m/s1", "run_id"] == "slots"
    st = res.steps.set_index(["episode_id", "step"])
    assert st.loc[("m/s1", slice(None)), "outcome"].tolist() == ["ok", "early", "late", "silent"]
    assert st.loc[("m/s2", slice(None)), "outcome"].tolist() == ["ok", "wrong", "wrong"]  # sorted by trigger
    s1b = st.loc[("m/s1", 1)]
    assert (s1b["t_obs"], s1b["window_open"], s1b["window_close"], s1b["latency"]) == (20.0, 1.0, 5.0, 0.5)
    assert '"slot_ids":["g","e","f"]' in ep.loc["m/s2", "meta"]


def test_jsonl_and_success_rule(tmp_path):
    f = tmp_path / "slots.jsonl"
    rows = hand_frame().to_dict("records")
    f.write_text("\n".join(json.dumps({k: (None if v != v else v) for k, v in r.items()}) for r in rows)
                 + "\nnot json\n")
    assert detect_format(f) == "response-slots"
    res = rtanalysis.load(f, success_rule=0.5)
    assert res.n_read == 3 and res.n_quarantined == 1
    assert res.quarantine["line"].tolist() == [8]
    # s1: 1 hit of 4 slots; s2: 1 hit of 3
    assert res.episodes["success"].tolist() == [False, False]
    res = rtanalysis.load(f, success_rule=lambda slots: (slots["slot_outcome"] == "hit").sum() >= 1)
    assert res.episodes["success"].tolist() == [True, True]


def test_bad_slot_rows(tmp_path):
    fr = hand_frame().astype(object)
    fr.loc[1, "trigger_s"] = "soon"          # stream s1 unreadable
    fr.loc[4, "response_s"] = 1.0            # s2: response before its trigger (5.0)
    extra = pd.DataFrame([["", "s3", "z", "qa", 1, 1, 2, 1.5, True, False, 1.0]], columns=SLOT_COLUMNS)
    f = write_csv(tmp_path / "bad.csv", pd.concat([fr, extra]))
    res = rtanalysis.load(f, format="response-slots")
    assert res.n_read == 3 and res.n_quarantined == 3
    q = res.quarantine.set_index("field")
    assert q.loc["trigger_s", "line"] == 3 and "must be a number" in q.loc["trigger_s", "reason"]
    assert "before its trigger" in q.loc["response_s", "reason"]
    assert "belongs to no stream" in q.loc["model", "reason"]
    missing = write_csv(tmp_path / "nocol.csv", hand_frame().drop(columns="window_end_s"))
    res = rtanalysis.load(missing, format="response-slots")
    assert res.n_read == res.n_quarantined == 7
    assert set(res.quarantine["reason"]) == {"table lacks column(s) window_end_s"}


def test_slot_f1_by_hand():
    out = slot_f1(hand_frame(), n_boot=200, seed=1).iloc[0]
    assert {k: out[k] for k in SLOT_OUTCOMES} == {"silent": 1, "invalid": 1, "early": 1, "late": 1, "wrong": 1,
                                                  "hit": 2}
    assert out["n_slots"] == 7 and out["n_responses"] == 6 and out["n_streams"] == 2
    assert out["precision"] == pytest.approx(2 / 6) and out["recall"] == pytest.approx(2 / 7)
    assert out["f1"] == pytest.approx(4 / 13)
    again = slot_f1(hand_frame(), n_boot=200, seed=1)
    pd.testing.assert_frame_equal(again, slot_f1(hand_frame(), n_boot=200, seed=1))


def simulate(n_streams, n_slots, probs, rng, model="m", scenario="qa"):
    kinds = rng.choice(list(probs), size=(n_streams, n_slots), p=list(probs.values()))
    rows = []
    for s in range(n_streams):
        for j in range(n_slots):
            k = kinds[s, j]
            trig = 10.0 * j
            resp = {"silent": None, "early": trig + 0.5, "late": trig + 9.0}.get(k, trig + 2.0)
            rows.append((model, f"{scenario}{s}", f"{j}", scenario, trig, trig + 1.0, trig + 4.0, resp,
                         k != "wrong", k == "invalid", 1.0))
    return pd.DataFrame(rows, columns=SLOT_COLUMNS)


def test_slot_f1_recovers_known_rates():
    probs = {"silent": 0.2, "invalid": 0.05, "early": 0.05, "late": 0.1, "wrong": 0.1, "hit": 0.5}
    rng = np.random.default_rng(7)
    table = simulate(300, 4, probs, rng)
    out = slot_f1(table, n_boot=1000, seed=0).iloc[0]
    n = 1200
    truth = {"precision": 0.5 / 0.8, "recall": 0.5, "f1": 2 * 0.5 / 1.8}
    se = {"precision": np.sqrt(0.625 * 0.375 / (0.8 * n)), "recall": np.sqrt(0.25 / n)}
    se["f1"] = se["recall"]  # same order; a loose bound is enough here
    for k, t in truth.items():
        assert abs(out[k] - t) < 4 * se[k]
        assert out[f"{k}_lo"] < t < out[f"{k}_hi"]
    # slots are independent here, so the stream bootstrap's spread matches the binomial SE
    boot_se = (out["recall_hi"] - out["recall_lo"]) / (2 * 1.96)
    assert 0.75 < boot_se / se["recall"] < 1.3


def test_slot_f1_groups_and_macro_average():
    rng = np.random.default_rng(3)
    good = {"silent": 0.0, "invalid": 0.0, "early": 0.0, "late": 0.0, "wrong": 0.0, "hit": 1.0}
    half = {"silent": 0.5, "invalid": 0.0, "early": 0.0, "late": 0.0, "wrong": 0.0, "hit": 0.5}
    table = pd.concat([simulate(10, 2, good, rng, "a", "qa"), simulate(30, 2, half, rng, "a", "alert"),
                       simulate(5, 2, good, rng, "b", "qa")])
    per = slot_f1(table, by=["model", "scenario"], n_boot=100)
    assert per[["model", "scenario"]].values.tolist() == [["a", "alert"], ["a", "qa"], ["b", "qa"]]
    a_alert = per.iloc[0]
    assert a_alert["precision"] == 1.0 and a_alert["recall"] == pytest.approx(a_alert["hit"] / 60)
    macro = slot_f1(table, macro_over="scenario", n_boot=100).set_index("model")
    assert macro.loc["a", "f1"] == pytest.approx(per.iloc[:2]["f1"].mean())
    pooled = slot_f1(table, n_boot=100).set_index("model")
    assert pooled.loc["a", "recall"] == pytest.approx((20 + a_alert["hit"]) / 80)


def test_slot_f1_identities_on_random_tables():
    rng = np.random.default_rng(11)
    for _ in range(5):
        p = rng.dirichlet(np.ones(6))
        table = simulate(int(rng.integers(3, 20)), 3, dict(zip(SLOT_OUTCOMES, p)), rng)
        out = slot_f1(table, n_boot=50).iloc[0]
        assert sum(out[k] for k in SLOT_OUTCOMES) == out["n_slots"]
        assert out["n_responses"] == out["n_slots"] - out["silent"]
        if out["hit"]:
            pr = out["precision"] * out["recall"]
            assert out["f1"] == pytest.approx(2 * pr / (out["precision"] + out["recall"]))
        assert 0 <= out["f1_lo"] <= out["f1_hi"] <= 1
