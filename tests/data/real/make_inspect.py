"""Write the inspect-ai fixture logs in tests/data/real/inspect/ with inspect-ai itself.

    .venv/bin/python tests/data/real/make_inspect.py [OUT_DIR]

Two tasks run against inspect's ``mockllm/model``. The solver sleeps a seeded random time before
calling the model, so each sample takes a different working time, and a ``working_limit`` (task
``reaction``) or ``time_limit`` (task ``lookup``) stops the slow ones. The model answers "yes" when
the prompt asks for yes, so samples that finish are scored C or I by ``includes()``.
The .eval files are inspect-ai's own (zip) format; only this script is ours.
"""

import asyncio
import random
import sys
from pathlib import Path

from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, solver

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "inspect"
SEED = 20261203


def reply(messages, tools, tool_choice, config):
    # usage given, so mockllm does not count tokens (which would fetch a tokenizer)
    text = "yes" if "yes" in messages[-1].text else "no"
    out = ModelOutput.from_content(model="mockllm", content=text)
    out.usage = ModelUsage(input_tokens=12, output_tokens=1, total_tokens=13)
    return out


@solver
def think_for_a_while(low: float, high: float):
    """Sleep a random time (seeded by the sample id and epoch) before answering."""

    async def solve(state, generate):
        rng = random.Random(f"{SEED}:{state.sample_id}:{state.epoch}")
        await asyncio.sleep(rng.uniform(low, high))
        return state

    return solve


def samples(prefix: str, n: int) -> list[Sample]:
    rng = random.Random(f"{SEED}:{prefix}")
    out = []
    for i in range(n):
        want = rng.choice(["yes", "no"])
        # the target is "yes" for most samples: the model answers "no" to "say no", an I score
        out.append(Sample(id=f"{prefix}-{i:02d}", input=f"say {want}", target="yes"))
    return out


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    tasks = [
        Task(name="reaction", dataset=samples("reaction", 8), solver=[think_for_a_while(0.1, 1.6), generate()],
             scorer=includes(), working_limit=1, epochs=2),
        Task(name="lookup", dataset=samples("lookup", 6), solver=[think_for_a_while(0.2, 2.6), generate()],
             scorer=includes(), time_limit=2),
    ]
    inspect_eval(tasks, model=get_model("mockllm/model", custom_outputs=reply), log_dir=str(OUT),
                 display="none", max_samples=32)


if __name__ == "__main__":
    main()
