"""inspect-ai logs (written by inspect-ai itself, mockllm model) → rtlog tables."""

import asyncio

import pytest

import rtanalysis
from rtanalysis.adapters import detect_format

inspect_ai = pytest.importorskip("inspect_ai")
# inspect-ai's own deprecation notices (tenacity, pandas 3.1), not ours
pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter:DeprecationWarning",
                                        "ignore:The inplace keyword")


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    from inspect_ai import Task, eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, includes, scorer, mean
    from inspect_ai.solver import generate, solver

    def reply(messages, tools, tool_choice, config):
        # usage given, so mockllm does not count tokens (which would fetch a tokenizer)
        out = ModelOutput.from_content(model="mockllm", content="yes" if "yes" in messages[-1].text else "no")
        out.usage = ModelUsage(input_tokens=5, output_tokens=1, total_tokens=6)
        return out

    @solver
    def stall():
        async def solve(state, generate):
            await asyncio.sleep(2)
            return state
        return solve

    @scorer(metrics=[mean()])
    def partial():
        async def score(state, target):
            return Score(value=0.7)
        return score

    d = tmp_path_factory.mktemp("inspect_logs")
    tasks = [
        Task(name="answer", dataset=[Sample(input="say yes", target="yes"), Sample(input="say no", target="yes")],
             solver=[generate()], scorer=includes()),
        Task(name="deadline", dataset=[Sample(input="say yes", target="yes")], solver=[stall(), generate()],
             scorer=includes(), time_limit=1),
        Task(name="graded", dataset=[Sample(input="say yes", target="yes")], solver=[generate()], scorer=partial()),
    ]
    inspect_eval(tasks, model=get_model("mockllm/model", custom_outputs=reply), log_dir=str(d), display="none")
    return d


def test_inspect_samples_to_episodes(log_dir):
    assert detect_format(log_dir) == "inspect"
    res = rtanalysis.load(log_dir)
    assert res.n_read == 4 and res.n_accepted == 3 and res.n_quarantined == 1
    assert res.n_read == res.n_accepted + res.n_quarantined
    q = res.quarantine.iloc[0]
    assert q["field"] == "score_partial" and "pass success_rule" in q["reason"]
    ep = res.episodes.set_index("task")
    assert (ep["model"] == "mockllm/model").all()
    assert ep.loc["answer/1", "success"] and not ep.loc["answer/2", "success"]
    assert ep.loc["answer/2", "failure_type"] == "capability" and ep.loc["answer/2", "clock"] == "paused"
    # stopped by the time limit: no answer in time, a timing failure on the wall clock
    assert ep.loc["deadline/1", "clock"] == "wall" and ep.loc["deadline/1", "failure_type"] == "timing"
    st = res.steps.set_index("task")
    assert st.loc["deadline/1", "outcome"] == "silent" and st.loc["deadline/1", "window_close"] == 1.0
    assert 0 < st.loc["answer/1", "latency"] < 30
    assert '"limit":"time"' in ep.loc["deadline/1", "meta"]


def test_inspect_success_rule_for_graded_scores(log_dir):
    res = rtanalysis.load(log_dir, format="inspect", success_rule=0.5)
    assert res.n_quarantined == 0
    graded = res.episodes.set_index("task_type").loc["graded"]
    assert graded["success"] and graded["score"] == pytest.approx(0.7)
    with pytest.raises(ValueError, match="no scorer 'nope'"):
        rtanalysis.load(log_dir, format="inspect", scorer="nope")


def test_damaged_log_is_quarantined(log_dir, tmp_path):
    import shutil

    logs = sorted(log_dir.glob("*.eval"))
    shutil.copy(logs[0], tmp_path / logs[0].name)
    bad = tmp_path / "2026-01-01T00-00-00-00-00_cut_abc.eval"
    bad.write_bytes(logs[1].read_bytes()[:300])
    res = rtanalysis.load(tmp_path, success_rule=0.5)
    assert res.n_read == res.n_accepted + res.n_quarantined and res.n_accepted >= 1
    q = res.quarantine.set_index("file").loc[str(bad)]
    assert q["field"] == "<file>" and "not a readable inspect-ai log" in q["reason"]
