"""The fallback rule (docs/rtlog-v1.md): a run that logs ``fallback`` anywhere logs it everywhere."""

import gzip
import json

import numpy as np
import pandas as pd

import rtanalysis
from rtanalysis.metrics import fallback_summary


def _episode(run, eid, fallbacks):
    steps = []
    for k, fb in enumerate(fallbacks):
        s = {"t_obs": float(k), "latency": 0.5, "window": [0, 1]}
        if fb is not None:
            s["fallback"] = fb
        steps.append(s)
    return {"run_id": run, "episode_id": eid, "model": "m", "task_type": "t", "clock": "step",
            "success": True, "steps": steps}


def test_missing_fallback_is_false_only_in_runs_that_log_it(tmp_path):
    records = [
        _episode("r1", "a", [None, True, None]),   # r1 logs fallback: the two gaps are false
        _episode("r1", "b", [None, None]),         # no field in this episode, but r1 logs it: false
        _episode("r2", "c", [None, None]),         # r2 never logs it: unknown
        _episode("r3", "d", [None, None]),
    ]
    (tmp_path / "one.jsonl").write_text("\n".join(json.dumps(r) for r in records[:3]) + "\n")
    # the run r3 is labelled in another file: the rule is per run, across files
    (tmp_path / "two.jsonl").write_text(json.dumps(records[3]) + "\n"
                                        + json.dumps(_episode("r3", "e", [None, False])) + "\n")
    res = rtanalysis.load(tmp_path)
    fb = res.steps.set_index(["run_id", "episode_id", "step"])["fallback"]
    assert list(fb.loc[("r1", "a")]) == [False, True, False]
    assert list(fb.loc[("r1", "b")]) == [False, False]
    assert fb.loc[("r2", "c")].isna().all()
    assert list(fb.loc[("r3", "d")]) == [False, False]
    # the filled-in false leaves the timing alone: only the logged true is late
    late = res.steps.set_index(["run_id", "episode_id", "step"])["too_late"]
    assert int(late.sum()) == 1 and late.loc[("r1", "a", 1)]
    ep = res.episodes.set_index("episode_id")["n_fallback"]
    assert (ep["a"], ep["b"], ep["c"]) == (1, 0, 0)


def _hand_count(path):
    """Fallbacks and decisions per model, by reading the raw rtlog file with json only."""
    runs_logging, rows = set(), []
    with gzip.open(path, "rt") as fh:
        for line in fh:
            e = json.loads(line)
            for s in e.get("steps") or []:
                rows.append((e["run_id"], e["model"], s.get("fallback")))
                if s.get("fallback") is not None:
                    runs_logging.add(e["run_id"])
    n, fallbacks = {}, {}
    for run, model, fb in rows:
        if fb is None and run not in runs_logging:
            continue
        n[model] = n.get(model, 0) + 1
        fallbacks[model] = fallbacks.get(model, 0) + (fb is True)
    return pd.Series(fallbacks) / pd.Series(n)


def test_example_fallback_rate_is_the_real_rate():
    path = rtanalysis.example_data() / "episodes.jsonl.gz"
    res = rtanalysis.load(str(path))
    table = fallback_summary(res.episodes, res.steps, by=["model"]).set_index("model")
    expected = _hand_count(str(path))
    assert set(table.index) == set(expected.index)
    np.testing.assert_allclose(table["fallback_rate"].to_numpy(), expected[table.index].to_numpy())
    assert (table["fallback_rate"] < 1).all() and (table["fallback_rate"] < 0.5).all()
    assert table["fallback_rate"].max() > 0  # some model does fall back
