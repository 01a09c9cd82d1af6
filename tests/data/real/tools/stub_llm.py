"""A stand-in for the OpenAI client used by RealtimeGym's agents (kept outside the harness repo).

Answers like a reasoning model: a short visible answer ending in a legal \\boxed{...} action (or a
boxed action sequence for planning prompts), and a plausible completion-token count (reasoning
tokens are counted but not returned, as with hosted reasoning models). In streaming mode the
answer arrives in chunks spread over a generation time proportional to the tokens.
"""
import hashlib
import os
import random
import threading
import time
from types import SimpleNamespace as NS

ACTIONS = {"freeway": "UDS", "snake": "LRUD", "overcooked": "UDLRIS"}
# preferred action weights per game (a crude "policy": mostly sensible, sometimes not)
WEIGHTS = {"freeway": [0.75, 0.1, 0.15], "snake": None, "overcooked": None}
# per model: (median completion tokens of a reactive answer, of a planning answer, tokens / second)
PROFILE = {"stub-a": (600, 6000, 2500.0), "stub-b": (1500, 12000, 3000.0)}
_lock = threading.Lock()
_counter = [0]


def _game(messages):
    text = " ".join(m.get("content", "") for m in messages)
    if "Overcooked" in text or "onion" in text:
        return "overcooked"
    if "Snake" in text or "snake" in text:
        return "snake"
    return "freeway"


def _rng(messages, model):
    with _lock:
        _counter[0] += 1
        k = _counter[0]
    # the worker's pid too: forked workers share the counter, and a deterministic game (Overcooked
    # ignores the seed) would otherwise replay the same episode for every seed
    key = f"{model}:{os.getpid()}:{k}:" + messages[-1].get("content", "")[-200:]
    h = hashlib.sha256(key.encode()).hexdigest()
    return random.Random(int(h[:16], 16))


def _answer(messages, model, cap, planning):
    rng = _rng(messages, model)
    game = _game(messages)
    acts = ACTIONS[game]
    med_r, med_p, speed = PROFILE.get(model, PROFILE["stub-a"])
    med = med_p if planning else med_r
    n = max(8, int(rng.lognormvariate(0.0, 0.6) * med))
    if planning:
        seq = "".join(rng.choices(acts, weights=WEIGHTS[game], k=rng.randint(3, 10)))
    else:
        seq = rng.choices(acts, weights=WEIGHTS[game], k=1)[0]
    text = f"Reasoned about the current state; next: \\boxed{{{seq}}}"
    if cap is not None and n > cap:  # cut by max_tokens: no boxed answer yet
        n, text = cap, "Reasoned about the current state; the best move is"
    return text, n, speed, rng


class _Completions:
    def __init__(self, planning):
        self.planning = planning  # the planning thread's client (its config's url ends in /planning)

    def create(self, **params):
        messages, model = params["messages"], params["model"]
        cap = params.get("max_completion_tokens", params.get("max_tokens"))
        if cap == 1:  # budget forcing: one more token after "\\boxed{"
            rng = _rng(messages, model)
            a = rng.choice(ACTIONS[_game(messages)])
            return NS(choices=[NS(message=NS(content=a, reasoning_content=None))],
                      usage=NS(completion_tokens=1, prompt_tokens=100, total_tokens=101))
        text, n, speed, rng = _answer(messages, model, cap, self.planning)
        if not params.get("stream"):
            return NS(choices=[NS(message=NS(content=text, reasoning_content=None))],
                      usage=NS(completion_tokens=n, prompt_tokens=1000, total_tokens=1000 + n))
        return self._stream(text, n, speed)

    @staticmethod
    def _stream(text, n, speed):
        duration = n / speed
        pieces = 8
        size = max(1, len(text) // pieces)
        for i in range(0, len(text), size):
            time.sleep(duration / pieces)
            yield NS(choices=[NS(delta=NS(content=text[i:i + size], reasoning_content=None))], usage=None)
        yield NS(choices=[NS(delta=NS(content=None, reasoning_content=None))],
                 usage=NS(completion_tokens=n, prompt_tokens=1000, total_tokens=1000 + n))


class StubOpenAI:
    def __init__(self, api_key=None, base_url=None, **kw):
        self.chat = NS(completions=_Completions(str(base_url).rstrip("/").endswith("planning")))
