"""RealtimeGym run directories (args.log + pandas-written CSVs) → rtlog tables."""

import numpy as np
import pandas as pd
import pytest

import rtanalysis
from rtanalysis.adapters import detect_format
from rtanalysis.adapters.realtimegym import normalised_score

from .adapters_fixtures import freeway_rows, rtgym_run_dir


def reconciled(res):
    assert res.n_read == res.n_accepted + res.n_quarantined
    f = res.files
    assert (f["n_read"] == f["n_accepted"] + f["n_quarantined"]).all()
    assert res.n_accepted == len(res.episodes)


@pytest.fixture
def planning_run(tmp_path):
    # episodes finish out of order: seed index 1 (env seed 1001) is logged first
    return rtgym_run_dir(
        tmp_path, "freeway", "H", 8192, "planning", 0,
        episodes={(0, 0): freeway_rows(12, plan_gaps=(0, 1)), (0, 1): freeway_rows(20, plan_gaps=(5,))},
        finished=[(1001, 80), (1000, 88)],
    )


def test_planning_token_run(planning_run):
    assert detect_format(planning_run) == "realtimegym"
    res = rtanalysis.load(planning_run)
    reconciled(res)
    assert res.n_quarantined == 0
    ep = res.episodes.set_index("episode_id")
    assert list(ep.index) == ["0_0", "0_1"]
    assert ep.loc["0_0", "score"] == pytest.approx(88 / 89)
    assert ep.loc["0_1", "score"] == pytest.approx(80 / 89)
    assert ep["success"].tolist() == [True, True]
    assert ep.loc["0_0", "task"] == "freeway_H_seed0" and ep.loc["0_1", "seed"] == 1
    assert (ep["clock"] == "step").all() and (ep["time_unit"] == "tokens").all()
    assert ep.loc["0_0", "cognitive_load"] == "H" and ep.loc["0_0", "time_pressure"] == 8192
    assert ep.loc["0_0", "internal_budget"] == 0 and ep.loc["0_0", "mode"] == "planning"
    assert ep.loc["0_0", "cond_time_unit"] == "tokens"
    assert ep.loc["0_0", "model"] == "example-deepseek-r1-planning"
    assert ep["n_steps"].tolist() == [12, 20] and ep["n_fallback"].tolist() == [2, 1]
    assert '"env_seed":1000' in ep.loc["0_0", "meta"] and '"raw_score":88' in ep.loc["0_0", "meta"]

    st = res.steps[res.steps["episode_id"] == "0_0"]
    assert st["t_obs"].tolist() == [8192.0 * k for k in range(12)]
    assert (st["window_open"] == 0).all() and (st["window_close"] == 8192).all()
    assert st["reward"].tolist() == [-1.0] * 12  # per-step reward from the cumulative column
    # empty plan: the default action played at the tick's end, a timing miss
    assert st["fallback"].tolist()[:3] == [True, True, False]
    assert st["outcome"].tolist()[:2] == ["late", "late"]
    assert st["latency"].tolist()[:4] == [8192.0, 8192.0, 0.0, 300.0]
    assert st["tokens"].tolist()[:4] == [0, 0, 0, 300]  # planning runs log no model1 column


def test_reactive_snake_latency_is_tokens_and_score_normalised(tmp_path):
    rows = [{"action": a, "reward": r, "model1_token_num": t}
            for a, r, t in zip("LLSRU", [0, 1, 1, 2, 3], [100, 2048, 500, 0, 5000])]
    d = rtgym_run_dir(tmp_path, "snake", "M", 4096, "reactive", 2048, episodes={(0, 0): rows},
                      finished=[(5000, 3)])
    res = rtanalysis.load(d)
    reconciled(res)
    ep = res.episodes.iloc[0]
    assert ep["score"] == pytest.approx((3 + 1) / 16) and not ep["success"]
    assert ep["model"] == "example-deepseek-v3-reactive"
    st = res.steps
    assert st["latency"].tolist() == [100.0, 2048.0, 500.0, 0.0, 5000.0]
    assert st["too_late"].tolist() == [False] * 4 + [True]
    assert st["reward"].tolist() == [0.0, 1.0, 0.0, 1.0, 1.0]
    assert not st["fallback"].any()


def test_agile_overcooked_empty_actions_float_rewards_and_config_model(tmp_path):
    cfg = tmp_path / "planner.yaml"
    cfg.write_text("model: deepseek-reasoner\napi_key: ${KEY}\n")
    rows = [{"action": a, "reward": r, "model1_token_num": t1, "model2_token_num": t2, "plan": p}
            for a, r, t1, t2, p in [("S", 0.0, 100, 5000, ""), ("", 0.0, 4096, 0, ""),
                                     ("I", 20.0, 200, 0, "I U"), ("", 20.0, 4096, 0, "U")]]
    d = rtgym_run_dir(tmp_path / "runs", "overcooked", "E", 8192, "agile", 4096, episodes={(0, 3): rows},
                      finished=[(3, 20.0)], header={"planning_model_config": str(cfg)})
    text = (d / "0_3.csv").read_text()
    assert ",0.0\n" in text and text.splitlines()[0].startswith(",plan,model2_prompt")
    res = rtanalysis.load(d)
    reconciled(res)
    ep = res.episodes.iloc[0]
    assert ep["model"] == "example-deepseek-v3-reactive+deepseek-reasoner"
    assert ep["score"] == pytest.approx(20 / 56) and ep["seed"] == 3
    st = res.steps
    assert st["no_action"].tolist() == [False, True, False, True]
    assert st["outcome"].tolist()[1] == "silent"
    assert st["latency"].tolist()[::2] == [100.0, 200.0]
    assert st["tokens"].tolist() == [5100, 4096, 200, 4096]
    assert not st["fallback"].any()  # agile has no default-action fallback


def test_seconds_mode_latency_is_the_tick(tmp_path):
    d = rtgym_run_dir(tmp_path, "freeway", "E", 10, "planning", 0, unit="seconds",
                      episodes={(0, 0): freeway_rows(11, plan_gaps=(2,))}, finished=[(1000, 89)])
    assert "model2_prompt" not in (d / "0_0.csv").read_text().splitlines()[0]
    res = rtanalysis.load(d)
    reconciled(res)
    assert res.episodes["time_unit"].tolist() == ["s"] and res.episodes["score"].tolist() == [1.0]
    st = res.steps
    assert (st["latency"] == 10.0).all() and st["fallback"].sum() == 1
    assert st["too_late"].tolist() == [False, False, True] + [False] * 8


def test_model_argument_and_missing_model_error(tmp_path):
    d = rtgym_run_dir(tmp_path, "freeway", "E", 8192, "planning", 0, episodes={(0, 0): freeway_rows(11)},
                      finished=[(1000, 89)], header={"planning_model_config": None})
    with pytest.raises(ValueError, match=r"args\.log.*model='NAME'"):
        rtanalysis.load(d)
    res = rtanalysis.load(d, model="o3-mini")
    assert res.episodes["model"].tolist() == ["o3-mini"]


def test_success_rule_and_clipping(tmp_path):
    rows = [{"action": "U", "reward": r, "model1_token_num": 10} for r in range(1, 21)]
    d = rtgym_run_dir(tmp_path, "snake", "E", 4096, "reactive", 1024,
                      episodes={(0, 0): rows, (0, 1): [{"action": "U", "reward": -1, "model1_token_num": 5}]},
                      finished=[(1000, 20), (1001, -1)])
    res = rtanalysis.load(d)
    assert res.episodes["score"].tolist() == [1.0, 0.0]  # raw 20 is above the paper's bound 15: clipped
    assert '"raw_score":20' in res.episodes["meta"].iloc[0]

    strict = rtanalysis.load(d, success_rule=lambda s: s > 0.99)
    assert strict.episodes["success"].tolist() == [True, False]
    assert normalised_score("freeway", 44.5) == pytest.approx(0.5)


def test_cut_short_unfinished_and_orphan_result_lines(tmp_path):
    d = rtgym_run_dir(
        tmp_path, "freeway", "M", 8192, "planning", 0,
        episodes={(0, 0): freeway_rows(12), (0, 1): freeway_rows(20), (0, 2): freeway_rows(30)},
        finished=[(1858, 70), (1069, 88), (2496, 50)],  # index 1 never finished; 2496 has no CSV
    )
    res = rtanalysis.load(d)
    reconciled(res)
    assert sorted(res.episodes["episode_id"]) == ["0_0", "0_2"]
    q = res.quarantine.set_index("field")
    assert "never finished" in q.loc["<episode>", "reason"] and q.loc["<episode>", "file"].endswith("0_1.csv")
    orphan = q.loc["<result line>"]
    assert orphan["file"].endswith("args.log") and "no matching CSV" in orphan["reason"]
    assert res.n_read == 4 and res.n_quarantined == 2


def test_malformed_args_log_lines(tmp_path):
    d = rtgym_run_dir(tmp_path, "freeway", "E", 8192, "planning", 0,
                      episodes={(0, 0): freeway_rows(11), (0, 1): freeway_rows(12)}, finished=[(1000, 89)])
    with open(d / "args.log", "a") as f:
        f.write("seed: 1001 reward: abc total_time: 1.5 \n-----------------------------\n")
        f.write("Traceback (most recent call last):\n")
    res = rtanalysis.load(d)
    reconciled(res)
    q = res.quarantine
    bad = q[q["file"].str.endswith("args.log")].set_index("field")
    assert "must be a number" in bad.loc["reward", "reason"]
    assert "not a 'seed:" in bad.loc["<result line>", "reason"] and bad.loc["<result line>", "raw"].startswith("Trace")
    lines = (d / "args.log").read_text().splitlines()
    assert lines[bad.loc["reward", "line"] - 1].startswith("seed: 1001 reward: abc")
    assert len(res.episodes) == 1 and res.n_read == 4  # 2 CSVs + 2 bad lines


def test_bad_csvs_are_quarantined_with_reasons(tmp_path):
    eps = {(0, k): freeway_rows(11 + k) for k in range(4)}
    d = rtgym_run_dir(tmp_path, "freeway", "E", 8192, "planning", 0, episodes=eps,
                      finished=[(1000 + k, 89 - k) for k in range(4)])
    # non-numeric reward on row 3
    f1 = d / "0_1.csv"
    df = pd.read_csv(f1, index_col=0, keep_default_na=False)
    df["reward"] = df["reward"].astype(str)
    df.loc[2, "reward"] = "n/a"
    df.to_csv(f1)
    # a file cut inside a quoted multi-line field
    f2 = d / "0_2.csv"
    text = f2.read_text()
    f2.write_text(text[: text.index("|..C..|", len(text) // 2)])
    # a missing column
    f3 = d / "0_3.csv"
    pd.read_csv(f3, index_col=0, keep_default_na=False).drop(columns="model2_token_num").to_csv(f3)
    res = rtanalysis.load(d)
    reconciled(res)
    q = res.quarantine.assign(name=lambda x: x["file"].str.rsplit("/", n=1).str[-1]).set_index("name")
    assert q.loc["0_1.csv", "field"] == "reward" and "row 3" in q.loc["0_1.csv", "reason"]
    assert q.loc["0_1.csv", "line"] == 3
    assert q.loc["0_2.csv", "field"] == "<file>" and "truncated" in q.loc["0_2.csv", "reason"]
    assert q.loc["0_3.csv", "field"] == "model2_token_num" and "lacks column" in q.loc["0_3.csv", "reason"]
    assert res.episodes["episode_id"].tolist() == ["0_0"]
    # the unconsumed result lines of the rejected episodes are reported, not dropped
    assert (res.quarantine["field"] == "<result line>").sum() == 3


def test_unknown_settings(tmp_path):
    d = rtgym_run_dir(tmp_path, "freeway", "E", 8192, "planning", 0, episodes={(0, 0): freeway_rows(11)},
                      finished=[(1000, 89)], header={"game": "chess"})
    res = rtanalysis.load(d)
    reconciled(res)
    assert len(res.episodes) == 0
    csv_row = res.quarantine[res.quarantine["file"].str.endswith(".csv")].iloc[0]
    assert csv_row["field"] == "args.log:game" and "unknown game 'chess'" in csv_row["reason"]


def test_folder_of_run_dirs_and_mixed_modes(tmp_path):
    rtgym_run_dir(tmp_path, "freeway", "E", 8192, "planning", 0, episodes={(0, 0): freeway_rows(11)},
                  finished=[(1000, 89)])
    rows = [{"action": "U", "reward": 1, "model1_token_num": 10}]
    rtgym_run_dir(tmp_path, "snake", "H", 4096, "reactive", 1024, episodes={(0, 0): rows, (1, 0): rows},
                  finished=[(8000, 1), (8000, 1)])
    assert detect_format(tmp_path) == "realtimegym"
    res = rtanalysis.load(tmp_path)
    reconciled(res)
    assert sorted(res.episodes["task_type"]) == ["freeway", "snake", "snake"]
    assert np.isclose(res.episodes["score"], [1.0, 2 / 16, 2 / 16]).all()
    assert res.episodes.loc[res.episodes["task_type"] == "snake", "episode_id"].tolist() == ["0_0", "1_0"]


def test_single_csv_points_to_its_run_dir(planning_run):
    with pytest.raises(ValueError, match="pass its run directory"):
        detect_format(planning_run / "0_0.csv")


def test_explicit_seed_map_when_rewards_tie(tmp_path):
    d = rtgym_run_dir(tmp_path, "freeway", "E", 8192, "planning", 0,
                      episodes={(0, 0): freeway_rows(11), (0, 1): freeway_rows(11)},
                      finished=[(1001, 89), (1000, 89)])
    res = rtanalysis.load(d, seed_map={0: 1001, 1: 1000})
    assert res.n_accepted == 2
    metas = res.episodes.set_index("episode_id")["meta"]
    assert '"env_seed":1001' in metas["0_0"] and '"env_seed":1000' in metas["0_1"]
