"""LLM Colosseum battle transcripts → rtlog episodes.

LLM Colosseum (<https://github.com/sanifhimani/llm-colosseum>) runs a daily four-model battle royale
and commits each battle as ``data/seasons/season-<N>/battles/day-<NNN>.json``: the roster, the
winner, and per turn the acting agent, its action, latency and tokens, plus the engine's timestamped
events. docs/user-guide/adapters.md ("LLM Colosseum battles") has the mapping table; the decisions
made here, from the engine's code (``engine/battle.js``, ``engine/persistence.js``), are:

* One episode per (battle, agent); every battle is its own run (``run_id``), because the agents'
  memories of earlier battles are fed into the next one's prompts, so battles are not independent
  repeats. ``task`` = the battle (shared by its four models), ``task_type`` = ``battle-royale``.
* Clock ``step``: the world waits for the agent's call, but a call that fails (the API raised, or
  the deadline ``rules.apiTimeoutMs`` = 15 s passed) leaves the agent **stunned**: the turn is lost.
  Window ``[0, deadline_s]``.
* ``t_obs`` = when the engine emitted the turn's ``thinking`` event (the prompt is built then),
  in seconds from the battle's start; ``latency`` = the turn's ``latencyMs``.
* ``STUNNED`` turn: no action (``t_act: null``). The engine writes ``latencyMs: 0`` there, not a
  time, and logs no error message. Its cause is read off the event timestamps: the call took the
  gap to the next turn's ``thinking`` event (the battle's end for the last turn) less the engine's
  fixed pause between turns (``turn_pause_s``); a call that lasted to the deadline is
  ``no_action_cause: "timeout"``, one that ended earlier raised an API/provider error (or returned
  empty text): ``"error"``.
* ``INVALID`` turn (a reply that did not parse or was illegal in the state): the action is there
  (``"INVALID"``, with the reply's latency) and its content is wrong: ``correct_at_obs: false``.
  Other turns are legal actions that the engine applied; whether they were *good* moves the file
  cannot say, so ``correct_at_obs`` is left out there.
* ``success`` = the agent won (``success_rule="winner"``, the engine's ``winner``) or, with
  ``success_rule="survived"``, was not eliminated. ``score`` = opponents outlasted (0-3): the
  file's ``placement`` orders eliminated agents by roster position, not by when they died, so the
  order is rebuilt from the kill and zone-kill events.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import orjson

from ..io import EpisodeSink, RecordError
from ._common import to_float

TASK_TYPE = "battle-royale"
#: the engine's per-call deadline (season meta.json ``rules.apiTimeoutMs``) and pause between turns
#: (``rules.turnPauseMs``), in seconds
DEFAULT_DEADLINE_S = 15.0
DEFAULT_TURN_PAUSE_S = 0.8
#: a stunned call that ended within this of the deadline ran into it (timestamps are to the ms, plus
#: a few ms of the engine's own work per turn)
DEADLINE_TOLERANCE_S = 0.1
STUNNED = "STUNNED"
INVALID = "INVALID"
SUCCESS_RULES = ("winner", "survived")
BATTLE_NAME = re.compile(r"^day-\d+\.json$")
#: keys every battle transcript opens with (``buildTranscript`` writes them first)
HEAD_KEYS = (b'"placement"', b'"roster"', b'"winner"', b'"day"')


# --------------------------------------------------------------------------------------------
# detection and file discovery


def looks_like_battle_file(path: Path) -> bool:
    """A ``.json`` file whose opening holds the transcript's top-level keys."""
    if path.suffix != ".json" or not path.is_file():
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and all(k in head for k in HEAD_KEYS)


def holds_battles(path: Path) -> bool:
    """A battle file, or a folder with one below it."""
    if path.is_dir():
        return any(looks_like_battle_file(q) for q in path.rglob("*.json"))
    return looks_like_battle_file(path)


def find_battle_files(paths) -> list[Path]:
    """Battle files among ``paths``. In a folder, ``day-NNN.json`` files (so a damaged one is
    quarantined, not skipped) and any other JSON that opens like a battle; the season's
    ``meta.json``, ``standings.json`` and memories are not battles and are passed over."""
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*.json") if BATTLE_NAME.match(q.name) or looks_like_battle_file(q)))
        elif p.exists():
            out.append(p)
        else:
            raise FileNotFoundError(f"no such file or directory: {p}")
    return out


# --------------------------------------------------------------------------------------------
# reading


def read_battles(paths, sink: EpisodeSink, success_rule: str = "winner", deadline_s: float = DEFAULT_DEADLINE_S,
                 turn_pause_s: float = DEFAULT_TURN_PAUSE_S) -> None:
    """Read LLM Colosseum battle transcripts into ``sink``: one episode per (battle, agent).

    ``success_rule``: ``"winner"`` (default: the battle's winner succeeded) or ``"survived"`` (every
    agent alive at the end). ``deadline_s``, ``turn_pause_s``: the engine's per-call deadline and
    pause between turns (season 1: 15 s and 0.8 s), which time the stunned turns.
    """
    if success_rule not in SUCCESS_RULES:
        raise ValueError(f"success_rule must be one of {', '.join(SUCCESS_RULES)} for LLM Colosseum battles, "
                         f"got {success_rule!r}")
    for path in find_battle_files(paths):
        display = str(path)
        sink.open_file(display)
        try:
            battle = parse_battle(path)
        except RecordError as e:  # the whole battle is unreadable: one quarantine row for the file
            sink.reject(display, 0, e.field, e.reason, "")
            continue
        for agent in battle["roster"]:
            try:
                rec = battle_episode(battle, agent, success_rule, deadline_s, turn_pause_s)
            except RecordError as e:
                sink.reject(display, 0, e.field, f"agent {agent['id']!r}: {e.reason}", "")
                continue
            sink.add(rec, display, 0)


def parse_battle(path: Path) -> dict:
    """The transcript, checked for what every episode of the battle needs: roster, winner, turns,
    and one timestamped ``thinking`` event per turn (which gives each turn its ``t_obs``)."""
    try:
        data = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as e:
        raise RecordError("<file>", f"not valid JSON (truncated?): {e}") from None
    if type(data) is not dict:
        raise RecordError("<file>", "expected a JSON object (a battle transcript)")
    for key in ("day", "roster", "turns", "events", "startedAt", "endedAt"):
        if key not in data:
            raise RecordError(key, "missing: not an LLM Colosseum battle transcript?")
    if type(data["day"]) is not int or data["day"] < 0:
        raise RecordError("day", f"must be a whole number >= 0, got {data['day']!r}")
    roster = _roster(data["roster"])
    ids = {a["id"] for a in roster}
    if data.get("winner") is not None and data["winner"] not in ids:
        raise RecordError("winner", f"{data['winner']!r} is not in the roster")
    turns = data["turns"]
    if type(turns) is not list:
        raise RecordError("turns", "must be a list")
    for k, t in enumerate(turns):
        if type(t) is not dict:
            raise RecordError(f"turns[{k}]", "a turn must be a JSON object")
        if t.get("agent") not in ids:
            raise RecordError(f"turns[{k}].agent", f"{t.get('agent')!r} is not in the roster")
    start = _timestamp(data["startedAt"], "startedAt")
    return {
        "season": data.get("season", 1),
        "day": data["day"],
        "date": data.get("date"),
        "winner": data.get("winner"),
        "placement": data.get("placement"),
        "roster": roster,
        "turns": turns,
        "t_obs": _turn_starts(data["events"], turns, start),
        "t_end": _timestamp(data["endedAt"], "endedAt") - start,
        "eliminated": _elimination_times(turns, data["events"]),
    }


def _roster(roster) -> list[dict]:
    if type(roster) is not list or not roster:
        raise RecordError("roster", "must be a non-empty list of agents")
    for i, a in enumerate(roster):
        if type(a) is not dict or not isinstance(a.get("id"), str) or not a["id"]:
            raise RecordError(f"roster[{i}].id", "every agent needs a non-empty string id")
        if not isinstance(a.get("model"), str) or not a["model"]:
            raise RecordError(f"roster[{i}].model", "the model under test is not named")
    return roster


def _timestamp(value, field: str) -> float:
    """An ISO-8601 timestamp as seconds since the epoch."""
    if not isinstance(value, str):
        raise RecordError(field, f"must be an ISO-8601 timestamp, got {value!r}")
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise RecordError(field, f"not an ISO-8601 timestamp: {value[:40]!r}") from None


def _turn_starts(events, turns: list, start: float) -> list[float]:
    """Each turn's ``t_obs``: its ``thinking`` event's time from the start. The engine emits one
    such event, naming the agent, just before it builds the prompt of every turn."""
    if type(events) is not list:
        raise RecordError("events", "must be a list")
    thinking = [(i, e) for i, e in enumerate(events) if type(e) is dict and e.get("type") == "thinking"]
    if len(thinking) != len(turns):
        raise RecordError("events", f"{len(thinking)} 'thinking' events for {len(turns)} turns: the turns "
                                    "cannot be placed in time")
    out = []
    for k, (i, e) in enumerate(thinking):
        if e.get("agent") != turns[k].get("agent"):
            raise RecordError(f"events[{i}].agent", f"thinking event of {e.get('agent')!r} for turn {k} of "
                                                    f"{turns[k].get('agent')!r}")
        t = _timestamp(e.get("timestamp"), f"events[{i}].timestamp") - start
        if t < 0 or (out and t < out[-1]):
            raise RecordError(f"events[{i}].timestamp", "thinking events must not go back in time")
        out.append(t)
    return out


def _elimination_times(turns: list, events: list) -> dict[str, float]:
    """When each eliminated agent died, on the turn scale: killed in turn ``k`` → ``k``; zone damage
    after turn ``k`` (logged with the next turn number, ``k + 1``) → ``k + 0.5``."""
    out: dict[str, float] = {}
    for k, t in enumerate(turns):
        ev = t.get("event")
        if type(ev) is dict and ev.get("type") in ("kill", "betray_kill") and ev.get("target"):
            out.setdefault(ev["target"], float(t.get("turn", k)))
    for e in events:
        if type(e) is dict and e.get("type") == "zone_kill" and e.get("agent"):
            turn = e.get("turn")
            out.setdefault(e["agent"], float(turn) - 0.5 if isinstance(turn, (int, float)) else float("inf"))
    return out


# --------------------------------------------------------------------------------------------
# one agent's episode


def battle_episode(battle: dict, agent: dict, success_rule: str, deadline_s: float, turn_pause_s: float) -> dict:
    agent_id = agent["id"]
    season, day = battle["season"], battle["day"]
    battle_name = f"season-{season}/day-{day:03d}"
    eliminated = battle["eliminated"]
    survived = agent_id not in eliminated
    success = agent_id == battle["winner"] if success_rule == "winner" else survived
    return {
        "schema": "rtlog/1",
        # each battle is its own run: memories of earlier battles feed the next, so they are not repeats
        "run_id": f"llm-colosseum:{battle_name}",
        "episode_id": agent_id,
        "model": agent["model"],
        "task": battle_name,
        "task_type": TASK_TYPE,
        "clock": "step",
        "time_unit": "s",
        "success": bool(success),
        "score": float(_opponents_outlasted(agent_id, battle)),
        # an eliminated agent's log stops at the turn it died; a survivor's runs to the battle's end
        "ended": "horizon" if survived else "failure",
        "steps": _steps(battle, agent_id, deadline_s, turn_pause_s),
        "meta": {"source": "llm-colosseum", "agent": agent_id, "season": season, "day": day, "date": battle["date"],
                 "winner": battle["winner"], "survived": survived, "eliminated_turn": eliminated.get(agent_id),
                 "placement_listed": _listed_place(agent_id, battle["placement"])},
    }


def _opponents_outlasted(agent_id: str, battle: dict) -> int:
    """Opponents eliminated strictly before this agent (all eliminated ones for a survivor)."""
    died = battle["eliminated"]
    mine = died.get(agent_id, float("inf"))
    return sum(1 for a in battle["roster"] if a["id"] != agent_id and died.get(a["id"], float("inf")) < mine)


def _listed_place(agent_id: str, placement) -> int | None:
    if type(placement) is list and agent_id in placement:
        return placement.index(agent_id) + 1
    return None


def _steps(battle: dict, agent_id: str, deadline_s: float, turn_pause_s: float) -> list[dict]:
    turns, t_obs = battle["turns"], battle["t_obs"]
    steps = []
    for k, turn in enumerate(turns):
        if turn["agent"] != agent_id:
            continue
        t_next = t_obs[k + 1] if k + 1 < len(turns) else battle["t_end"]
        steps.append(_step(turn, k, t_obs[k], t_next, deadline_s, turn_pause_s))
    return steps


def _step(turn: dict, k: int, t_obs: float, t_next: float, deadline_s: float, turn_pause_s: float) -> dict:
    action = turn.get("action")
    kind = action.get("type") if type(action) is dict else None
    if not isinstance(kind, str) or not kind:
        raise RecordError(f"turns[{k}].action.type", f"must name the action, got {kind!r}")
    step = {"t_obs": t_obs, "window": [0, deadline_s]}
    if kind == STUNNED:  # the call failed: nothing was played this turn
        step["t_act"] = None
        step["no_action_cause"] = _stun_cause(t_next - t_obs - turn_pause_s, deadline_s)
        return step
    latency_ms = to_float(turn.get("latencyMs"), f"turns[{k}].latencyMs", required=True)
    if latency_ms < 0:
        raise RecordError(f"turns[{k}].latencyMs", f"must be >= 0, got {latency_ms}")
    step["latency"] = latency_ms / 1000.0
    step["action"] = _action_text(action)
    if kind == INVALID:  # a reply came, but it did not parse or was illegal in the state
        step["correct_at_obs"] = False
    tokens = _output_tokens(turn.get("tokensUsed"), k)
    if tokens is not None:
        step["tokens"] = tokens
    return step


def _stun_cause(call_s: float, deadline_s: float) -> str:
    """A failed call that lasted to the deadline timed out; one that ended before it raised an error."""
    return "timeout" if call_s >= deadline_s - DEADLINE_TOLERANCE_S else "error"


def _action_text(action: dict) -> str:
    """``MOVE N``, ``ATTACK gpt``, ``USE_ARTIFACT``, ``INVALID``: the type and its argument."""
    arg = action.get("direction") or action.get("target")
    return f"{action['type']} {arg}" if isinstance(arg, str) and arg else action["type"]


def _output_tokens(used, k: int) -> int | None:
    if used is None:
        return None
    if type(used) is not dict:
        raise RecordError(f"turns[{k}].tokensUsed", "must be an object {input, output}")
    out = to_float(used.get("output"), f"turns[{k}].tokensUsed.output")
    if out is None:
        return None
    if out < 0 or out != int(out):
        raise RecordError(f"turns[{k}].tokensUsed.output", f"must be a whole number >= 0, got {out}")
    return int(out)


__all__ = ["read_battles", "holds_battles", "looks_like_battle_file", "parse_battle", "battle_episode"]
