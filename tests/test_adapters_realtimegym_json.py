"""Published RealtimeGym runs (one JSON list of steps per run) → rtlog tables."""

import json

import pytest

import rtanalysis
from rtanalysis.adapters import detect_format


def write_run(path, scores, thinking=None, actions=None):
    steps = []
    for k, s in enumerate(scores):
        steps.append({"step": k, "score": s, "action": (actions or ["U"] * len(scores))[k],
                      "thinking": (thinking or ["<think>up</think>"] * len(scores))[k],
                      "state": {"pos": k}, "original_state": f"turn {k}\n"})
    path.write_text(json.dumps(steps))
    return path


def test_published_run(tmp_path):
    f = write_run(tmp_path / "freeway_hard_8k_seed3_planning.json", [99, 98, 97, 44.5],
                  thinking=["a", "Still thinking...", "Still thinking...", "b"])
    assert detect_format(f) == "realtimegym-json" and detect_format(tmp_path) == "realtimegym-json"
    res = rtanalysis.load(f, model="gpt-5-mini")
    assert res.n_read == res.n_accepted == 1
    ep = res.episodes.iloc[0]
    assert ep["model"] == "gpt-5-mini" and ep["task"] == "freeway_H_seed3" and ep["seed"] == 3
    assert ep["score"] == pytest.approx(0.5) and ep["success"]  # 44.5 / 89 meets the default rule
    assert ep["time_pressure"] == 8192 and ep["cognitive_load"] == "H" and ep["mode"] == "planning"
    assert ep["n_fallback"] == 2 and ep["failure_type"] == "none"
    st = res.steps
    assert st["t_obs"].tolist() == [0.0, 8192.0, 16384.0, 24576.0]
    assert st["outcome"].tolist()[1:3] == ["late", "late"]


def test_model_is_required(tmp_path):
    f = write_run(tmp_path / "snake_easy_4k_seed0_reactive.json", [0, 1])
    with pytest.raises(ValueError, match="model='NAME'"):
        rtanalysis.load(f)


def test_bad_published_files(tmp_path):
    write_run(tmp_path / "snake_easy_4k_seed0_reactive.json", [0, 1, 2])  # raw 2 -> (2+1)/16
    write_run(tmp_path / "snake_easy_4k_seed1_reactive.json", [0, "oops"])
    (tmp_path / "snake_easy_4k_seed2_reactive.json").write_text('[{"step": 0, "score": 1')
    write_run(tmp_path / "chess_easy_4k_seed3_reactive.json", [0])
    res = rtanalysis.load(tmp_path, model="m")
    assert res.n_read == 4 and res.n_accepted == 1 and res.n_quarantined == 3
    assert res.episodes["score"].tolist() == [pytest.approx(3 / 16)]
    q = res.quarantine.assign(name=lambda x: x["file"].str.rsplit("/", n=1).str[-1]).set_index("name")
    assert q.loc["snake_easy_4k_seed1_reactive.json", "field"] == "[1].score"
    assert "must be a number" in q.loc["snake_easy_4k_seed1_reactive.json", "reason"]
    assert "not valid JSON" in q.loc["snake_easy_4k_seed2_reactive.json", "reason"]
    assert "unknown game 'chess'" in q.loc["chess_easy_4k_seed3_reactive.json", "reason"]
