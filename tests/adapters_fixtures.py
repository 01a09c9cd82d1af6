"""Writers of small fixtures in other harnesses' formats, as those harnesses write them.

RealtimeGym run directories are written the harness's way: ``args.log`` as ``key: value`` lines, a
blank line, then one ``seed: … reward: … total_time: `` line (trailing space) and 29 dashes per
finished episode, in finishing order; each episode's CSV through ``pandas.DataFrame.to_csv`` (an
unnamed index column, quoted multi-line fields) with the column order of each agent mode.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

#: column order of the harness's CSVs (follows first use), before render/action/reward
MODE_PREFIX = {
    "reactive": ["plan", "model1_prompt", "model1_response", "model1_token_num"],
    "planning": ["plan", "model2_prompt", "model2_response", "model2_token_num"],
    "agile": ["plan", "model2_prompt", "model2_response", "model2_token_num",
              "model1_prompt", "model1_response", "model1_token_num"],
}
PROMPT = 'You are at (0, 9).\nCars: [(48, "right", 12)]\nAnswer with \\boxed{U}, \\boxed{D} or \\boxed{S}.'
RENDER = "|.....|\n|..C..|\n|..@..|\n"


def rtgym_csv(path: Path, mode: str, unit: str, rows: list[dict]) -> None:
    """One episode CSV; each row dict gives action, reward, plan and the token counts it uses."""
    cols = [c for c in MODE_PREFIX[mode] if unit == "token" or not c.endswith(("_prompt", "_response"))]
    cols += ["render", "action", "reward"]
    data = []
    for k, r in enumerate(rows):
        row = {"render": RENDER, "plan": r.get("plan", "N/A" if mode == "reactive" else "U U")}
        for m in ("model1", "model2"):
            row[f"{m}_prompt"] = r.get(f"{m}_prompt", PROMPT + f"\nturn {k}")
            row[f"{m}_response"] = r.get(f"{m}_response", '<think>\nmove "up"\n</think>\n\\boxed{U}')
            row[f"{m}_token_num"] = r.get(f"{m}_token_num", 0)
        row["action"] = r["action"]
        row["reward"] = r["reward"]
        data.append(row)
    pd.DataFrame(data, columns=cols).to_csv(path)


def rtgym_run_dir(root: Path, game: str, load: str, pressure: int, mode: str, budget: int, unit: str = "token",
                  episodes: dict | None = None, finished: list | None = None, header: dict | None = None,
                  stamp: str = "20250101_120000") -> Path:
    """A run directory: ``episodes`` = {(repeat, seed index): rows}; ``finished`` = [(env seed, reward)]
    in finishing order (the order ``args.log`` gets them)."""
    d = Path(root) / f"{game}_{load}_{pressure}_{mode}_{budget}_{stamp}"
    d.mkdir(parents=True)
    args = {
        "planning_model_config": "configs/example-deepseek-r1-planning.yaml" if mode != "reactive" else None,
        "reactive_model_config": "configs/example-deepseek-v3-reactive.yaml" if mode != "planning" else None,
        "prompt_config": "configs/example-prompts.yaml",
        "game": game, "time_unit": unit, "time_pressure": pressure, "cognitive_load": load, "mode": mode,
        "internal_budget": budget, "log_dir": "logs", "seed_num": 8, "repeat_times": 1,
        "save_trajectory_gifs": False, "settings": [f"{game}_{load}_{pressure}_{mode}_{budget}"],
        "instance_num": None, "checkpoint": None,
    }
    args.update(header or {})
    with open(d / "args.log", "w") as f:
        for k, v in args.items():
            f.write(f"{k}: {v}\n")
        f.write("\n")
        for seed, reward in finished or []:
            f.write(f"seed: {seed} reward: {reward} total_time: 123.456 ")
            f.write("\n-----------------------------\n")
    for (repeat, index), rows in (episodes or {}).items():
        rtgym_csv(d / f"{repeat}_{index}.csv", mode, unit, rows)
    return d


def freeway_rows(turns: int, plan_gaps=(), tokens=300) -> list[dict]:
    """A Freeway episode crossing after ``turns`` turns (score 100 - turns); steps in ``plan_gaps``
    have an empty plan (the default action was played)."""
    rows = []
    for k in range(turns):
        gap = k in plan_gaps
        rows.append({"action": "U", "reward": 100 - (k + 1), "plan": "" if gap else "U U D",
                     "model2_token_num": 0 if gap or k % 3 else tokens, "model1_token_num": 120,
                     "model2_prompt": "" if k % 3 else PROMPT})
    return rows


SLOT_COLUMNS = ["model", "stream_id", "slot_id", "scenario", "trigger_s", "window_start_s", "window_end_s",
                "response_s", "correct", "invalid", "score"]
