"""Run RealtimeGym's own evaluation entry point (realtimegym.agile_eval.main) with the LLM client
replaced by stub_llm.StubOpenAI. Usage: python drive.py <agile_eval arguments>"""
import sys

sys.path.insert(0, "/tmp/rtg_driver")
import realtimegym.agents.base as base  # noqa: E402
from stub_llm import StubOpenAI  # noqa: E402

base.OpenAI = StubOpenAI  # the agents look the client class up in this module

from realtimegym.agile_eval import main  # noqa: E402

if __name__ == "__main__":
    main()
