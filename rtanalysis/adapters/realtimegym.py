"""Real-Time Reasoning Gym (Freeway, Snake, Overcooked) → rtlog episodes.

Two layouts (docs/user-guide/adapters.md, "RealtimeGym run directories" and "Published RealtimeGym
runs (JSON)"):

* **run directories** written by the harness, ``<game>_<E|M|H>_<pressure>_<mode>_<budget>_<stamp>/``
  with ``args.log`` and one pandas-written CSV per episode (:func:`read_run_dirs`);
* **published runs**, one JSON list of steps per run (:func:`read_published_json`).

Decisions made here, since the files do not say:

* ``score`` is the normalised score ``(raw - lo) / (hi - lo)`` with the paper's bounds
  (:data:`~rtanalysis.adapters.realtimegym.GAMES`), **clipped to [0, 1]**; the raw score is kept in
  ``meta.raw_score``. ``success`` = ``success_rule(score)``, default ``score >= 0.5``.
* clock ``step``; step ``k`` is observed at ``t_obs = k * time_pressure``; window ``[0, time_pressure]``.
* Token mode latency = tokens spent on the decision: reactive and agile agents act on the reactive
  thread, latency = ``model1_token_num``; a planning agent acts from a plan that was ready by the
  tick's end, latency = ``min(model2_token_num, time_pressure)``. A planning step whose plan cell is
  empty played the default action because nothing was ready: ``fallback = true`` with latency =
  ``time_pressure`` (the default lands at the tick's end), which rtlog counts as a timing miss.
* Seconds-mode CSVs have no ``plan`` column (nor prompts or responses): whether a planning agent's
  step fell back cannot be told, so ``fallback`` is left out there (unknown), not false.
* Seconds mode (and published JSON) log no per-decision time. Under the step clock an action always
  takes effect at the tick's end, so latency = ``time_pressure`` there (on time unless ``fallback``):
  the *timing* signal is the fallback flag only; latency carries no information in these files.
  Every such episode says so: ``meta.latency_source = "tick"`` (token mode: ``"tokens"``), so the
  model can treat its latencies as uninformative instead of fitting a zero-spread distribution.
* An empty ``action`` cell (agile runs have no default action) is no action at all (``silent``).
* ``seed`` is the CSV's seed index (stable across runs); the environment's mapped seed recorded in
  ``args.log`` is ``meta.env_seed``. CSVs are matched to ``args.log`` result lines by seed and final
  cumulative reward; a CSV with no result line never finished and is quarantined, a result line
  with no CSV is quarantined in ``args.log``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import orjson
import pandas as pd

from ..io import EpisodeSink, RecordError
from ._common import SuccessRule, is_missing, make_success_rule, to_float, to_int


@dataclass(frozen=True)
class Game:
    default_action: str
    initial_reward: float  # cumulative reward before the first step
    score_bounds: tuple[float, float]  # the paper's normalisation bounds


#: the games, by name, with the paper's score normalisation
GAMES: dict[str, Game] = {
    "freeway": Game("U", 100.0, (0.0, 89.0)),
    "snake": Game("S", 0.0, (-1.0, 15.0)),
    "overcooked": Game("S", 0.0, (0.0, 56.0)),
}
LOADS = ("E", "M", "H")
MODES = ("reactive", "planning", "agile")
#: harness time unit -> rtlog time_unit
TIME_UNITS = {"token": "tokens", "seconds": "s"}
#: what a decision's latency is in each time unit: measured tokens, or the tick length (not measured)
LATENCY_SOURCE = {"token": "tokens", "seconds": "tick"}
#: older harness versions named some arguments differently
ARG_ALIASES = {"system": "mode", "budget_format": "time_unit"}
LEGACY_UNITS = {"time": "seconds"}

RUN_DIR_NAME = re.compile(r"^(?P<game>[a-z]+)_(?P<load>[A-Z])_(?P<tp>\d+)_(?P<mode>[a-z]+)_(?P<ib>\d+)(_\d{8}_\d{6})?$")
RESULT_LINE = re.compile(r"^seed: (?P<seed>\S+) reward: (?P<reward>\S+) total_time: (?P<time>\S+)\s*$")
DASH_LINE = re.compile(r"^-{3,}\s*$")
#: the harness writes ``<repeat>_<seed index>.csv``; archived copies may be gzip or xz compressed
CSV_NAME = re.compile(r"^(?P<repeat>\d+)_(?P<index>\d+)\.csv(\.gz|\.xz)?$")
CSV_COLUMNS = ("action", "reward", "plan", "model1_token_num", "model2_token_num")
#: the thread whose tokens time the decision, and the CSV columns each mode needs
MODE_COLUMNS = {
    "reactive": ("model1_token_num",),
    "planning": ("plan", "model2_token_num"),
    "agile": ("plan", "model1_token_num", "model2_token_num"),
}

ModelOption = str | Callable[[Path], str] | None


def normalised_score(game: str, raw: float) -> float:
    """The paper's normalised score of a raw game score, clipped to [0, 1]."""
    lo, hi = GAMES[game].score_bounds
    return float(min(1.0, max(0.0, (raw - lo) / (hi - lo))))


# --------------------------------------------------------------------------------------------
# args.log


@dataclass
class ResultLine:
    line: int
    env_seed: int
    reward: float
    total_time: float | None
    raw: str
    used: bool = False


def parse_args_log(path: Path, sink: EpisodeSink) -> tuple[dict[str, str], list[ResultLine]]:
    """The ``key: value`` header and the finished-episode lines; a malformed line is quarantined."""
    display = str(path)
    header: dict[str, str] = {}
    results: list[ResultLine] = []
    in_header = True
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, text in enumerate(fh, 1):
            line = text.rstrip("\r\n")
            if in_header and RESULT_LINE.match(line):
                in_header = False  # a result line with no blank line before it
            if in_header:
                if not line.strip():
                    in_header = False
                elif ": " in line or line.endswith(":"):
                    key, _, value = line.partition(":")
                    header[key.strip()] = value.strip()
                continue
            if not line.strip() or DASH_LINE.match(line):
                continue
            m = RESULT_LINE.match(line)
            if not m:
                sink.reject(display, lineno, "<result line>",
                            "not a 'seed: <int> reward: <number> total_time: <seconds>' line", line)
                continue
            try:
                seed = to_int(m["seed"], "seed", required=True)
                reward = to_float(m["reward"], "reward", required=True)
                total = to_float(m["time"], "total_time")
            except RecordError as e:
                sink.reject(display, lineno, e.field, e.reason, line)
                continue
            results.append(ResultLine(lineno, seed, reward, total, line))
    return header, results


def run_settings(header: dict[str, str], run_dir: Path) -> dict:
    """Game, load, pressure, mode, budget and time unit from ``args.log`` (the directory name fills gaps).

    Raises :class:`~rtanalysis.errors.RecordError` naming the ``args.log`` key that is missing or unknown.
    """
    h = {ARG_ALIASES.get(k, k): v for k, v in header.items()}
    m = RUN_DIR_NAME.match(run_dir.name)
    from_name = {"game": m["game"], "cognitive_load": m["load"], "time_pressure": m["tp"], "mode": m["mode"],
                 "internal_budget": m["ib"]} if m else {}
    get = lambda k: h.get(k) if not is_missing(h.get(k)) and h.get(k) != "None" else from_name.get(k)  # noqa: E731
    game, load, mode = get("game"), get("cognitive_load"), get("mode")
    if game not in GAMES:
        raise RecordError("args.log:game", f"unknown game {game!r}; known: {', '.join(GAMES)}")
    if load not in LOADS:
        raise RecordError("args.log:cognitive_load", f"unknown cognitive load {load!r}; known: E, M, H")
    if mode not in MODES:
        raise RecordError("args.log:mode", f"unknown agent mode {mode!r}; known: {', '.join(MODES)}")
    unit = h.get("time_unit", "token")
    unit = LEGACY_UNITS.get(unit, unit)
    if unit not in TIME_UNITS:
        raise RecordError("args.log:time_unit", f"unknown time unit {unit!r}; known: token, seconds")
    tp = to_float(get("time_pressure"), "args.log:time_pressure", required=True)
    if tp <= 0:
        raise RecordError("args.log:time_pressure", f"must be > 0, got {tp}")
    ib = to_float(get("internal_budget"), "args.log:internal_budget") or 0.0
    return {"game": game, "cognitive_load": load, "mode": mode, "time_unit": unit,
            "time_pressure": _number(tp), "internal_budget": _number(ib)}


def _number(x: float):
    return int(x) if x == int(x) else x


def model_name(header: dict[str, str], mode: str, args_log: Path, model: ModelOption) -> str:
    """The model under test: the ``model`` argument, else the model named by the run's config files.

    A config path that exists (as written, or relative to the run directory) is read for its
    ``model:`` key; otherwise the config file's name (without ``.yaml``) is used. Agile runs use
    two models: ``"<reactive>+<planning>"`` when they differ.
    """
    if callable(model):
        return model(args_log.parent)
    if model:
        return model
    keys = {"reactive": ("reactive_model_config", "model1"), "planning": ("planning_model_config", "model2")}
    threads = {"reactive": ["reactive"], "planning": ["planning"], "agile": ["reactive", "planning"]}[mode]
    names = []
    for thread in threads:
        cfg_key, legacy_key = keys[thread]
        value = header.get(cfg_key)
        if not is_missing(value) and value != "None":
            names.append(_config_model(value, args_log.parent))
        elif not is_missing(header.get(legacy_key)) and header.get(legacy_key) != "None":
            names.append(header[legacy_key])
        else:
            raise ValueError(
                f"{args_log}: no model name for the {thread} thread ({cfg_key!r} is missing or None); "
                f"pass model='NAME' (CLI: --model NAME)"
            )
    return "+".join(dict.fromkeys(names))


def _yaml_model(path: Path) -> str | None:
    """The top-level ``model:`` of a harness config (read with PyYAML)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    import yaml  # a dependency (pyyaml)

    try:
        cfg = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    return cfg["model"] if isinstance(cfg, dict) and isinstance(cfg.get("model"), str) else None


def _config_model(value: str, run_dir: Path) -> str:
    for candidate in (Path(value), run_dir / value, run_dir.parent / value):
        if candidate.is_file():
            found = _yaml_model(candidate)
            if found:
                return found
            break
    name = Path(value).name
    for suffix in (".yaml", ".yml"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


# --------------------------------------------------------------------------------------------
# run directories


def find_run_dirs(paths) -> list[Path]:
    """Run directories (holding ``args.log``) among ``paths`` or below them, in a stable order."""
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise FileNotFoundError(f"no such file or directory: {p}")
        if p.is_file() and p.name == "args.log":
            p = p.parent
        if (p / "args.log").is_file():
            out.append(p)
        elif p.is_dir():
            found = sorted(q.parent for q in p.rglob("args.log"))
            if not found:
                raise ValueError(f"{p}: no RealtimeGym run directory (a folder with args.log) in it")
            out.extend(found)
        else:
            raise ValueError(f"{p}: not a RealtimeGym run directory (expected a folder with args.log)")
    return out


def read_run_dirs(paths, sink: EpisodeSink, model: ModelOption = None, success_rule: SuccessRule | None = None,
                  seed_map: dict[int, int] | None = None) -> None:
    """Read RealtimeGym run directories into ``sink`` (one episode per CSV).

    ``model``: the model name (or a function of the run directory) when ``args.log``'s config
    files do not name it. ``success_rule``: threshold on the normalised score (default 0.5) or a
    function of it. ``seed_map``: ``{seed index: environment seed}`` when matching CSVs to
    ``args.log`` lines by final reward is not wanted.
    """
    rule = make_success_rule(success_rule)
    for run_dir in find_run_dirs(paths):
        _read_run_dir(run_dir, sink, model, rule, seed_map)


def _read_run_dir(run_dir: Path, sink: EpisodeSink, model: ModelOption, rule, seed_map) -> None:
    args_log = run_dir / "args.log"
    sink.open_file(str(args_log))
    header, results = parse_args_log(args_log, sink)
    csvs = sorted(
        ((int(m["repeat"]), int(m["index"]), q) for q in run_dir.glob("*.csv*") if (m := CSV_NAME.match(q.name))),
        key=lambda t: (t[1], t[0]),
    )
    try:
        settings = run_settings(header, run_dir)
    except RecordError as e:
        for *_, csv in csvs:
            sink.open_file(str(csv))
            sink.reject(str(csv), 0, e.field, f"{e.reason} (in {args_log})", "")
        for r in results:
            sink.reject(str(args_log), r.line, e.field, e.reason, r.raw)
        return
    name = model_name(header, settings["mode"], args_log, model)
    episodes = []
    for repeat, index, csv in csvs:
        sink.open_file(str(csv))
        try:
            steps, final = _csv_steps(csv, settings)
        except RecordError as e:
            sink.reject(str(csv), e.line if isinstance(e, _RowError) else 0, e.field, e.reason, "")
            continue
        episodes.append((repeat, index, csv, steps, final))
    env_seed = seed_map if seed_map is not None else _infer_seed_map(episodes, results)
    for repeat, index, csv, steps, final in episodes:
        res = _claim(results, env_seed.get(index), final)
        if res is None:
            sink.reject(str(csv), 0, "<episode>",
                        f"never finished: no 'seed: ... reward: {_number(final)}' line in {args_log} for seed index "
                        f"{index} (environment seed {env_seed.get(index, 'unknown')})", "")
            continue
        sink.add(_episode(run_dir, name, settings, repeat, index, steps, res, rule), str(csv), 0)
    for r in results:
        if not r.used:
            sink.reject(str(args_log), r.line, "<result line>",
                        f"finished episode (seed {r.env_seed}, reward {_number(r.reward)}) has no matching CSV "
                        "in the run directory (its CSV is missing, was quarantined, or ends on another reward)",
                        r.raw)


def _episode(run_dir, name, settings, repeat, index, steps, res: ResultLine, rule) -> dict:
    game = settings["game"]
    score = normalised_score(game, res.reward)
    conditions = {k: settings[k] for k in ("cognitive_load", "time_pressure", "internal_budget", "mode")}
    conditions["time_unit"] = TIME_UNITS[settings["time_unit"]]
    return {
        "schema": "rtlog/1",
        # the directory name alone is not unique: runs of two models started in the same second
        # with the same setting get the same name (seen in real runs)
        "run_id": f"{name}:{run_dir.name}",
        "episode_id": f"{repeat}_{index}",
        "model": name,
        "task": f"{game}_{settings['cognitive_load']}_seed{index}",
        "task_type": game,
        "clock": "step",
        "time_unit": TIME_UNITS[settings["time_unit"]],
        "conditions": conditions,
        "seed": index,
        "success": rule(score),
        "score": score,
        "steps": steps,
        "meta": {"source": "realtimegym", "latency_source": LATENCY_SOURCE[settings["time_unit"]], "repeat": repeat, "env_seed": res.env_seed, "raw_score": _number(res.reward),
                 "total_time_s": res.total_time, "args_log_line": res.line},
    }


def _infer_seed_map(episodes, results: list[ResultLine]) -> dict[int, int]:
    """Seed index -> environment seed, matching each index's final rewards to result lines.

    Greedy on the number of matching (seed, reward) pairs; ties go to the same rank order (the
    harness's seed tables grow with the index). Only ``meta.env_seed`` and which result line is
    consumed depend on it, never the score of an episode.
    """
    by_index: dict[int, list[float]] = {}
    for _, index, _, _, final in episodes:
        by_index.setdefault(index, []).append(final)
    by_seed: dict[int, list[float]] = {}
    for r in results:
        by_seed.setdefault(r.env_seed, []).append(r.reward)
    idx_rank = {i: k for k, i in enumerate(sorted(by_index))}
    seed_rank = {s: k for k, s in enumerate(sorted(by_seed))}
    pairs = []
    for i, finals in by_index.items():
        for s, rewards in by_seed.items():
            left = list(rewards)
            hits = 0
            for f in finals:
                for j, r in enumerate(left):
                    if math.isclose(f, r, abs_tol=1e-9):
                        hits += 1
                        del left[j]
                        break
            if hits:
                pairs.append((-hits, abs(idx_rank[i] - seed_rank[s]), i, s))
    out: dict[int, int] = {}
    taken = set()
    for _, _, i, s in sorted(pairs):
        if i not in out and s not in taken:
            out[i] = s
            taken.add(s)
    return out


def _claim(results: list[ResultLine], env_seed, final: float) -> ResultLine | None:
    if env_seed is None:
        return None
    for r in results:
        if not r.used and r.env_seed == env_seed and math.isclose(r.reward, final, abs_tol=1e-9):
            r.used = True
            return r
    return None


class _RowError(RecordError):
    def __init__(self, line: int, field: str, reason: str):
        super().__init__(field, reason)
        self.line = line


def _csv_steps(csv: Path, settings: dict) -> tuple[list[dict], float]:
    """The decisions of one episode CSV and its final cumulative reward.

    Reads only the columns needed (Overcooked CSVs run to megabytes). ``line`` in errors is the
    1-based data row (the header is row 0).
    """
    source = _csv_source(csv)
    try:
        frame = pd.read_csv(source, usecols=lambda c: c in CSV_COLUMNS, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as e:
        msg = str(e).strip().splitlines()[0][:200]
        if "EOF inside string" in msg:
            raise RecordError("<file>", f"truncated: the CSV ends inside a quoted field ({msg})") from None
        raise RecordError("<file>", f"not a readable CSV: {msg}") from None
    token_mode = settings["time_unit"] == "token"
    # seconds mode logs no plan, prompts or responses (the harness's log_thinking is off there)
    needed = ("action", "reward") + (MODE_COLUMNS[settings["mode"]] if token_mode else ())
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise RecordError(missing[0], f"CSV lacks column(s) {', '.join(missing)} needed for a {settings['mode']} "
                                      f"run in {settings['time_unit']} mode")
    if not len(frame):
        raise RecordError("<file>", "the CSV has no steps")
    game = GAMES[settings["game"]]
    tp = float(settings["time_pressure"])
    mode = settings["mode"]
    cols = {c: frame[c].tolist() for c in frame.columns}
    n = len(frame)
    steps = []
    prev = game.initial_reward
    for k in range(n):
        row = k + 1
        try:
            reward = to_float(cols["reward"][k], "reward", required=True)
            tok = {c: to_int(cols[c][k], c) for c in ("model1_token_num", "model2_token_num") if c in cols}
        except RecordError as e:
            raise _RowError(row, e.field, f"row {row}: {e.reason}") from None
        if any(v is not None and v < 0 for v in tok.values()):
            raise _RowError(row, "token_num", f"row {row}: token counts must be >= 0, got {tok}")
        action = cols["action"][k]
        fallback = _fallback(mode, cols, k)
        step = {"t_obs": k * tp, "window": [0, tp], "reward": reward - prev}
        if fallback is not None:
            step["fallback"] = fallback
        if fallback:
            step["no_action_cause"] = "timeout"  # the harness plays its default only when thinking ran out
        prev = reward
        used = [v for v in tok.values() if v is not None]
        if used:
            step["tokens"] = int(sum(used))
        if is_missing(action):
            step["t_act"] = None  # agile: nothing played this step: its plan was still being thought
            step["no_action_cause"] = "timeout"
        else:
            step["action"] = action
            step["latency"] = _latency(mode, token_mode, fallback, tok, tp, row)
        steps.append(step)
    return steps, prev


def _csv_source(csv: Path):
    """The CSV to parse (its decompressed bytes when archived); a file cut mid-row is an error."""
    if csv.suffix in (".gz", ".xz"):
        import gzip
        import io
        import lzma

        try:
            data = (gzip.decompress if csv.suffix == ".gz" else lzma.decompress)(csv.read_bytes())
        except (OSError, EOFError, lzma.LZMAError) as e:
            raise RecordError("<file>", f"not a readable {csv.suffix[1:]} file: {e}") from None
        if data and not data.endswith(b"\n"):
            raise RecordError("<file>", "truncated: the CSV does not end with a complete row")
        return io.BytesIO(data)
    with open(csv, "rb") as fh:
        fh.seek(0, 2)
        if fh.tell():
            fh.seek(-1, 2)
            if fh.read(1) != b"\n":
                raise RecordError("<file>", "truncated: the CSV does not end with a complete row")
    return csv


def _fallback(mode: str, cols: dict, k: int) -> bool | None:
    """Whether step ``k`` played the default action because nothing was ready; None if the CSV cannot tell.

    Reactive agents always act (budget forcing completes the answer) and agile agents have no
    default action: false. A planning agent fell back where its plan cell is empty; seconds-mode
    CSVs have no plan column, so there it is unknown (and stays unknown: the run logs no fallback).
    """
    if mode != "planning":
        return False
    if "plan" not in cols:
        return None
    return is_missing(cols["plan"][k])


def _latency(mode, token_mode, fallback, tok, tp, row) -> float:
    if not token_mode or fallback:
        return tp
    if mode == "planning":
        t = tok.get("model2_token_num")
        return tp if t is None else float(min(t, tp))
    t = tok.get("model1_token_num")
    if t is None:
        raise _RowError(row, "model1_token_num", f"row {row}: the reactive thread's token count is missing")
    return float(t)


# --------------------------------------------------------------------------------------------
# published runs: one JSON list of steps per run

PUBLISHED_NAME = re.compile(
    r"^(?P<game>[a-z]+)_(?P<load>easy|medium|hard)_(?P<budget>\d+)k_(?P<seed>seed\d+)_(?P<agent>[a-z]+)\.json$"
)
PUBLISHED_LOADS = {"easy": "E", "medium": "M", "hard": "H"}
#: "4k" tokens per environment step = 4 * 1024 (the harness's budgets are powers of two: 8192 default)
PUBLISHED_K = 1024
STILL_THINKING = "Still thinking..."


def find_published(paths) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*.json") if PUBLISHED_NAME.match(q.name)))
        elif p.exists():
            out.append(p)
        else:
            raise FileNotFoundError(f"no such file or directory: {p}")
    return out


def read_published_json(paths, sink: EpisodeSink, model: ModelOption = None,
                        success_rule: SuccessRule | None = None) -> None:
    """Read published RealtimeGym runs (``{game}_{load}_{budget}_{seed}_{agent}.json``) into ``sink``.

    The files do not name the model: ``model`` (a name, or a function of the file path) is required.
    """
    rule = make_success_rule(success_rule)
    for path in find_published(paths):
        display = str(path)
        sink.open_file(display)
        name = model(path) if callable(model) else model
        if not name:
            raise ValueError(f"{path}: published RealtimeGym runs do not name the model; pass model='NAME' "
                             "(CLI: --model NAME)")
        try:
            rec = _published_episode(path, name, rule)
        except RecordError as e:
            sink.reject(display, 0, e.field, e.reason, "")
            continue
        sink.add(rec, display, 0)


def _published_episode(path: Path, name: str, rule) -> dict:
    m = PUBLISHED_NAME.match(path.name)
    if not m:
        raise RecordError("<file name>", "expected {game}_{easy|medium|hard}_{N}k_seed{N}_{agent}.json")
    game, agent = m["game"], m["agent"]
    if game not in GAMES:
        raise RecordError("<file name>", f"unknown game {game!r}; known: {', '.join(GAMES)}")
    if agent not in MODES:
        raise RecordError("<file name>", f"unknown agent {agent!r}; known: {', '.join(MODES)}")
    try:
        data = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as e:
        raise RecordError("<file>", f"not valid JSON (truncated?): {e}") from None
    if type(data) is not list or not data:
        raise RecordError("<file>", "expected a non-empty JSON list of steps")
    tp = float(int(m["budget"]) * PUBLISHED_K)
    steps = []
    score = None
    for k, s in enumerate(data):
        if type(s) is not dict:
            raise RecordError(f"[{k}]", "a step must be a JSON object")
        score = to_float(s.get("score"), f"[{k}].score", required=True)
        action = s.get("action")
        if action is not None and type(action) is not str:
            raise RecordError(f"[{k}].action", f"must be a string, got {type(action).__name__}")
        thinking = s.get("thinking")
        fallback = isinstance(thinking, str) and thinking.strip().startswith(STILL_THINKING)
        step = {"t_obs": k * tp, "window": [0, tp], "fallback": fallback}
        if fallback or is_missing(action):
            step["no_action_cause"] = "timeout"  # the planner was still thinking: out of time, not an error
        if is_missing(action):
            step["t_act"] = None
        else:
            step.update(action=action, latency=tp)
        steps.append(step)
    load = PUBLISHED_LOADS[m["load"]]
    seed = int(m["seed"][4:])
    norm = normalised_score(game, score)
    return {
        "schema": "rtlog/1",
        "run_id": f"{name}:{game}_{m['load']}_{m['budget']}k_{agent}",
        "episode_id": m["seed"],
        "model": name,
        "task": f"{game}_{load}_seed{seed}",
        "task_type": game,
        "clock": "step",
        "time_unit": "tokens",
        "conditions": {"cognitive_load": load, "time_pressure": int(tp), "time_unit": "tokens", "mode": agent},
        "seed": seed,
        "success": rule(norm),
        "score": norm,
        "steps": steps,
        "meta": {"source": "realtimegym-json", "latency_source": "tick", "raw_score": _number(score)},
    }


def looks_like_run_dir(path: Path) -> bool:
    return path.is_dir() and (path / "args.log").is_file()


def holds_run_dirs(path: Path) -> bool:
    return path.is_dir() and next(path.rglob("args.log"), None) is not None


def looks_like_published(path: Path) -> bool:
    if path.is_dir():
        return any(PUBLISHED_NAME.match(q.name) for q in path.rglob("*.json"))
    return path.suffix == ".json" and bool(PUBLISHED_NAME.match(path.name))


__all__ = ["GAMES", "normalised_score", "read_run_dirs", "read_published_json", "parse_args_log", "run_settings"]
