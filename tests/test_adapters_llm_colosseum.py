"""LLM Colosseum battle transcripts (tests/data/real/llm_colosseum/, unchanged) → rtlog tables.

Every count is checked against the raw JSON read here with the json module; broken inputs are
derived from a real file in ``tmp_path``.
"""

import gzip
import json
import re
import shutil
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

import rtanalysis
from rtanalysis import cli
from rtanalysis.adapters import _RecordingSink, detect_format, load

FIXTURES = Path(__file__).parent / "data" / "real" / "llm_colosseum"
BATTLES = sorted(FIXTURES.glob("day-*.json"))
NAN = re.compile(r"\bnan\b", re.IGNORECASE)


def raw(path: Path) -> dict:
    return json.loads(path.read_text())


def seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


@pytest.fixture(scope="module")
def colosseum():
    return rtanalysis.load(FIXTURES)


@pytest.fixture(scope="module")
def records():
    """The episode dicts the adapter wrote (the tables do not carry ``no_action_cause``)."""
    sink = _RecordingSink()
    load(FIXTURES, _sink=sink)
    return sink.records


def test_detected_by_content_and_read_whole(colosseum):
    assert detect_format(FIXTURES) == "llm-colosseum"
    assert all(detect_format(p) == "llm-colosseum" for p in BATTLES)
    assert colosseum.n_read == colosseum.n_accepted + colosseum.n_quarantined
    assert colosseum.n_quarantined == 0, colosseum.quarantine
    assert colosseum.n_accepted == 4 * len(BATTLES) == len(colosseum.episodes)
    ep = colosseum.episodes
    assert (ep["clock"] == "step").all() and (ep["time_unit"] == "s").all()
    assert (ep["task_type"] == "battle-royale").all()
    # one run per battle, one episode per model in it
    assert ep["run_id"].nunique() == len(BATTLES) and (ep.groupby("run_id").size() == 4).all()


def test_detected_by_content_under_another_name(tmp_path):
    renamed = tmp_path / "battle.json"
    shutil.copyfile(BATTLES[0], renamed)
    assert detect_format(renamed) == "llm-colosseum"


def test_turn_counts_match_the_raw_files(colosseum):
    st, ep = colosseum.steps, colosseum.episodes
    for path in BATTLES:
        battle = raw(path)
        models = {a["id"]: a["model"] for a in battle["roster"]}
        for agent, model in models.items():
            turns = [t for t in battle["turns"] if t["agent"] == agent]
            kinds = [t["action"]["type"] for t in turns]
            mine = st[(st["task"] == f"season-1/day-{battle['day']:03d}") & (st["model"] == model)]
            row = ep[(ep["task"] == f"season-1/day-{battle['day']:03d}") & (ep["model"] == model)].iloc[0]
            assert len(mine) == len(turns) == row["n_steps"]
            assert int(mine["no_action"].sum()) == kinds.count("STUNNED")
            assert int((mine["outcome"] == "wrong").sum()) == kinds.count("INVALID")
            assert int((mine["correct_at_obs"] == False).sum()) == kinds.count("INVALID")  # noqa: E712
            assert mine["correct_at_obs"].isna().sum() == len(turns) - kinds.count("INVALID")
            acted = [t for t in turns if t["action"]["type"] != "STUNNED"]
            assert mine["latency"].dropna().tolist() == pytest.approx([t["latencyMs"] / 1000 for t in acted])
            # a reply slower than the 15 s deadline is late (the engine applied it after SDK retries)
            assert int((mine["outcome"] == "late").sum()) == sum(
                t["latencyMs"] > 15000 and t["action"]["type"] != "INVALID" for t in acted)
            assert row["success"] == (battle["winner"] == agent)
            assert 0 <= row["score"] <= 3
            # an eliminated agent's log stops before the battle's last turn; the winner's reaches the end
            last = max(t["turn"] for t in battle["turns"])
            assert row["ended"] == "horizon" if agent == battle["winner"] else row["ended"] in ("horizon", "failure")
            if row["ended"] == "failure":
                assert max(t["turn"] for t in turns) < last and not row["success"]
        assert ep[ep["task"] == f"season-1/day-{battle['day']:03d}"]["success"].sum() == 1


def test_times_come_from_the_thinking_events(colosseum):
    st = colosseum.steps
    for path in BATTLES:
        battle = raw(path)
        start = seconds(battle["startedAt"])
        thinking = [e for e in battle["events"] if e["type"] == "thinking"]
        mine = st[st["task"] == f"season-1/day-{battle['day']:03d}"].sort_values("t_obs")
        assert mine["t_obs"].tolist() == pytest.approx([seconds(e["timestamp"]) - start for e in thinking])
        assert (mine["window_open"] == 0).all() and (mine["window_close"] == 15).all()


def test_stunned_turns_carry_their_cause(records):
    """The call's length is the gap to the next turn less the engine's 0.8 s pause: a timeout lasts
    the 15 s deadline; a call that failed well before it raised an error."""
    by_key = {(r["task"], r["episode_id"]): r for r in records}
    causes = []
    for path in BATTLES:
        battle = raw(path)
        stamps = [seconds(e["timestamp"]) for e in battle["events"] if e["type"] == "thinking"]
        stamps.append(seconds(battle["endedAt"]))
        task = f"season-1/day-{battle['day']:03d}"
        for agent in {a["id"] for a in battle["roster"]}:
            mine = iter(s for s in by_key[(task, agent)]["steps"])
            for k, t in enumerate(battle["turns"]):
                if t["agent"] != agent:
                    continue
                step = next(mine)
                if t["action"]["type"] != "STUNNED":
                    assert "no_action_cause" not in step
                    continue
                gap = stamps[k + 1] - stamps[k]
                assert step["t_act"] is None and "latency" not in step
                assert step["no_action_cause"] == ("timeout" if gap >= 15.7 else "error"), (path.name, k, gap)
                assert not 15.5 < gap < 15.7  # no call ended right at the deadline in these files
                causes.append(step["no_action_cause"])
    assert set(causes) == {"timeout", "error"}


def test_a_broken_turn_quarantines_that_models_episode(tmp_path):
    battle = raw(BATTLES[0])
    k = next(i for i, t in enumerate(battle["turns"]) if t["action"]["type"] not in ("STUNNED",))
    agent = battle["turns"][k]["agent"]
    del battle["turns"][k]["latencyMs"]
    bad = tmp_path / BATTLES[0].name
    bad.write_text(json.dumps(battle, indent=2))
    res = rtanalysis.load(bad)
    assert res.n_read == 4 and res.n_accepted == 3 and res.n_quarantined == 1
    q = res.quarantine.iloc[0]
    assert q["file"] == str(bad) and q["field"] == f"turns[{k}].latencyMs"
    assert agent in q["reason"] and "missing" in q["reason"]
    assert agent not in set(res.episodes["episode_id"])


@pytest.mark.parametrize("damage, field, reason", [
    (lambda text: text[: len(text) // 2], "<file>", "not valid JSON"),
    (lambda text: json.dumps({**json.loads(text), "roster": "none"}), "roster", "non-empty list"),
    (lambda text: json.dumps({**json.loads(text), "events": [e for e in json.loads(text)["events"]
                                                              if e["type"] != "thinking"][:-1]}),
     "events", "'thinking' events"),
])
def test_a_broken_battle_is_one_quarantine_row(tmp_path, damage, field, reason):
    bad = tmp_path / BATTLES[1].name
    bad.write_text(damage(BATTLES[1].read_text()))
    assert detect_format(tmp_path) == "llm-colosseum"  # the name still says battle
    res = rtanalysis.load(tmp_path)
    assert res.n_read == 1 and res.n_quarantined == 1 and res.n_accepted == 0
    q = res.quarantine.iloc[0]
    assert q["file"] == str(bad) and q["field"] == field and reason in q["reason"]


def test_other_season_files_in_a_folder_are_passed_over(tmp_path):
    shutil.copyfile(BATTLES[0], tmp_path / BATTLES[0].name)
    # a season folder also holds meta.json, standings.json and memories/: not battles
    (tmp_path / "standings.json").write_text(json.dumps({"totalBattles": 1, "agents": {}}))
    res = rtanalysis.load(tmp_path)
    assert res.n_read == 4 and res.n_quarantined == 0


def test_success_rule_survived(colosseum):
    res = rtanalysis.load(FIXTURES, success_rule="survived")
    assert (res.episodes["success"] >= colosseum.episodes["success"]).all()
    for _, row in res.episodes.iterrows():
        meta = json.loads(row["meta"])
        assert row["success"] == meta["survived"] == (meta["eliminated_turn"] is None)
    with pytest.raises(ValueError, match="success_rule must be one of winner, survived"):
        rtanalysis.load(FIXTURES, success_rule=0.5)


def test_bundled_example_holds_the_fixture_battles_as_converted_here(records):
    """The bundle is the whole season (made by make_example.py from the arena's repository); the
    fixture days in it are the same records this adapter makes from the fixtures."""
    with gzip.open(Path(str(rtanalysis.example_data("llm-colosseum"))) / "episodes.jsonl.gz", "rt") as fh:
        bundled = {(r["task"], r["episode_id"]): r for r in map(json.loads, fh)}
    assert len(bundled) == 340
    for rec in records:
        assert bundled[(rec["task"], rec["episode_id"])] == json.loads(json.dumps(rec))


def test_demo_llm_colosseum_observed_metrics(tmp_path):
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        assert cli.main(["demo", "--example", "llm-colosseum", "--out", "demo", "--quiet", "--no-fit"]) == 0
    out = tmp_path / "demo"
    md = (out / "report.md").read_text()
    models = pd.read_parquet(out / "episodes.parquet", columns=["model"])["model"].unique()
    assert len(models) == 4 and all(m in md for m in models) and not NAN.search(md)


@pytest.mark.slow
def test_bundled_season_passes_the_convergence_gate_at_defaults():
    """Real battles, the model's defaults (draws, chains, tuning): the diagnostics gate passes."""
    res = rtanalysis.fit(rtanalysis.example_data("llm-colosseum"), progress=False)
    d = res.diagnostics
    assert d["ok"], d
    assert d["max_rhat"] < 1.01 and d["min_ess_bulk"] > 400 and d["n_divergent"] == 0
    assert "retried" not in d  # passed on the first try
