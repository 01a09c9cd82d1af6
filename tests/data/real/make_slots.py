"""Write tests/data/real/response_slots/slots.csv from a real, timed streaming run.

    .venv/bin/python tests/data/real/make_slots.py [OUT_FILE]

No public streaming-assistant harness could be run here, so this script plays one: for each
(model, stream) an asyncio task emits triggers on the event loop's clock, and a responder
coroutine (one per model: different think-time distributions, error and invalid rates) answers
each trigger after a seeded random think time. Every time in the table is *measured* on the loop
clock (``loop.time()`` relative to the stream's start), so scheduling jitter is real. A response
counts inside ``[trigger + 0.15, trigger + 0.9]`` s (the question must be heard out first); a
responder that is still thinking when the next trigger comes leaves that slot without a response. The
table is written by pandas ``to_csv`` in the layout of docs/adapters.md §3.
"""

import asyncio
import random
import sys
from pathlib import Path

import pandas as pd

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "response_slots" / "slots.csv"
SEED = 20261203
OPEN_AFTER, CLOSE_AFTER = 0.15, 0.9
#: model -> (median think time s, log-sd, P(wrong content), P(invalid output))
MODELS = {"quick-chat": (0.25, 0.6, 0.25, 0.05), "careful-chat": (0.6, 0.4, 0.08, 0.02)}
STREAMS = {"cooking-00": "tutorial", "cooking-01": "tutorial", "match-00": "live_commentary"}
N_SLOTS = 6


async def run_stream(model: str, stream: str, scenario: str) -> list[dict]:
    loop = asyncio.get_running_loop()
    med, sd, p_wrong, p_invalid = MODELS[model]
    rng = random.Random(f"{SEED}:{model}:{stream}")
    start = loop.time()
    rows, answers, busy = [], [], [False]

    async def answer(row: dict, think: float, wrong: bool, invalid: bool) -> None:
        await asyncio.sleep(think)
        row["response_s"] = round(loop.time() - start, 4)
        row["invalid"], row["correct"] = invalid, not invalid and not wrong
        row["score"] = round(rng.uniform(0.6, 1.0) if row["correct"] else rng.uniform(0.0, 0.4), 3)
        busy[0] = False

    for k in range(N_SLOTS):
        await asyncio.sleep(rng.uniform(0.5, 1.1))  # the stream runs on, answered or not
        trigger = loop.time() - start
        row = {"model": model, "stream_id": stream, "slot_id": f"slot{k:02d}", "scenario": scenario,
               "trigger_s": round(trigger, 4), "window_start_s": round(trigger + OPEN_AFTER, 4),
               "window_end_s": round(trigger + CLOSE_AFTER, 4), "response_s": None,
               "correct": False, "invalid": False, "score": None}
        rows.append(row)
        think = rng.lognormvariate(0.0, sd) * med
        wrong, invalid = rng.random() < p_wrong, rng.random() < p_invalid
        if not busy[0]:  # still thinking about the last trigger: this slot gets no response
            busy[0] = True
            answers.append(asyncio.create_task(answer(row, think, wrong, invalid)))
    await asyncio.gather(*answers)
    return rows


async def main() -> None:
    jobs = [run_stream(m, s, sc) for m in MODELS for s, sc in STREAMS.items()]
    rows = [r for part in await asyncio.gather(*jobs) for r in part]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(OUT, index=False)


if __name__ == "__main__":
    asyncio.run(main())
