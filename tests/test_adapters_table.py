"""Any table + column mapping → rtlog tables (episode rows and step rows)."""

import numpy as np
import pandas as pd
import pytest

import rtanalysis
from rtanalysis.adapters.table import from_table

EPISODES = pd.DataFrame({
    "trial": [1, 2, 3],
    "llm": ["a", "a", "b"],
    "game": ["snake", "snake", "freeway"],
    "solved": [True, False, True],
    "pts": [0.9, 0.2, 0.7],
    "load": ["H", "E", "H"],
    "budget": [2.0, 4.0, 2.0],
})
EP_MAP = {"episode_id": "trial", "model": "llm", "task_type": "game", "success": "solved", "score": "pts",
          "conditions": {"cognitive_load": "load", "time_pressure_s": "budget"}}


def test_episode_rows_from_dataframe():
    res = rtanalysis.load(EPISODES, format="table", mapping=EP_MAP, constants={"clock": "paused"})
    assert res.n_read == res.n_accepted == 3
    ep = res.episodes
    assert ep["episode_id"].tolist() == ["1", "2", "3"] and (ep["run_id"] == "table").all()
    assert ep["success"].tolist() == [True, False, True] and ep["score"].tolist() == [0.9, 0.2, 0.7]
    assert ep["cognitive_load"].tolist() == ["H", "E", "H"] and ep["time_pressure_s"].tolist() == [2, 4, 2]
    assert ep["failure_type"].tolist() == ["none", "capability", "none"]
    assert res.files["path"].tolist() == ["<DataFrame>"]


def test_success_from_score_rule_and_parquet(tmp_path):
    f = tmp_path / "eps.parquet"
    EPISODES.drop(columns="solved").to_parquet(f)
    mapping = {k: v for k, v in EP_MAP.items() if k != "success"}
    with pytest.raises(ValueError, match="success_rule"):
        from_table(f, mapping, constants={"clock": "wall"})
    res = from_table(f, mapping, constants={"clock": "wall"}, success_rule=0.5)
    assert res.episodes["success"].tolist() == [True, False, True]
    assert (res.episodes["run_id"] == "eps").all()


def test_step_rows_grouped_and_sorted(tmp_path):
    steps = pd.DataFrame({
        "run": ["r"] * 5, "ep": ["e1", "e1", "e2", "e1", "e2"], "model": ["m"] * 5, "tt": ["hf"] * 5,
        "ok": [1, 1, 0, 1, 0], "t": [0.8, 0.0, 0.0, 1.6, 0.5], "rt": [0.3, 0.5, "", 1.2, 0.1],
        "close": [0.8] * 5, "right": ["true", "true", "", "false", "yes"],
    })
    f = tmp_path / "steps.csv"
    steps.to_csv(f, index=False)
    mapping = {"run_id": "run", "episode_id": "ep", "model": "model", "task_type": "tt", "success": "ok",
               "t_obs": "t", "latency": "rt", "window_close": "close", "correct_at_obs": "right"}
    res = rtanalysis.load(f, format="table", mapping=mapping, constants={"clock": "wall"})
    assert res.n_read == res.n_accepted == 2
    st = res.steps
    e1 = st[st["episode_id"] == "e1"]
    assert e1["t_obs"].tolist() == [0.0, 0.8, 1.6] and e1["latency"].tolist() == [0.5, 0.3, 1.2]
    assert e1["outcome"].tolist() == ["ok", "ok", "wrong"]
    e2 = st[st["episode_id"] == "e2"]
    assert e2["outcome"].tolist() == ["silent", "ok"]
    assert res.episodes.set_index("episode_id").loc["e2", "failure_type"] == "timing"
    assert res.episodes["source_line"].tolist() == [2, 4]


def test_bad_tables(tmp_path):
    with pytest.raises(ValueError, match="'trail'.*lacks"):
        from_table(EPISODES, {**EP_MAP, "episode_id": "trail"}, constants={"clock": "wall"})
    with pytest.raises(ValueError, match="not an rtlog field"):
        from_table(EPISODES, {**EP_MAP, "speed": "pts"})
    bad = EPISODES.astype(object).copy()
    bad.loc[1, "pts"] = "high"
    bad.loc[2, "solved"] = "maybe"
    res = from_table(bad, EP_MAP, constants={"clock": "wall"})
    assert res.n_read == 3 and res.n_quarantined == 2
    q = res.quarantine.set_index("line")
    assert q.loc[2, "field"] == "score" and "must be a number" in q.loc[2, "reason"]
    assert q.loc[3, "field"] == "success" and "boolean" in q.loc[3, "reason"]
    # an episode field that varies within an episode of step rows
    steps = pd.DataFrame({"ep": ["e1", "e1"], "model": ["m", "n"], "ok": [True, True], "t": [0.0, 1.0],
                          "rt": [0.1, np.nan]})
    res = from_table(steps, {"episode_id": "ep", "model": "model", "success": "ok", "t_obs": "t", "latency": "rt"},
                     constants={"clock": "wall", "task_type": "x"})
    assert res.quarantine["field"].tolist() == ["model"] and "varies within episode" in res.quarantine["reason"][0]
    # rtlog rules still apply: a latency below zero
    steps = pd.DataFrame({"ep": ["e1"], "ok": [True], "t": [0.0], "rt": [-1.0]})
    res = from_table(steps, {"episode_id": "ep", "success": "ok", "t_obs": "t", "latency": "rt"},
                     constants={"clock": "wall", "task_type": "x", "model": "m"})
    assert res.quarantine["field"].tolist() == ["steps[0].latency"]
