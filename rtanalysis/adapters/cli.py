"""Command-line options of the adapters, for ``rtanalysis ingest``.

``add_cli_options(parser)`` adds the flags below (skipping any the parser already has);
``options_from_args(args)`` turns the parsed namespace into ``load(...)`` keyword options, leaving
out flags not given, so each format only sees what the user asked for.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

#: flag -> (load option, argparse keywords)
CLI_OPTIONS: dict[str, tuple[str, dict]] = {
    "--model": ("model", {"metavar": "NAME", "help": "model name, for formats whose files do not name it "
                                                     "(realtimegym, realtimegym-json)"}),
    "--success-rule": ("success_rule", {"type": float, "metavar": "THRESHOLD",
                                        "help": "success threshold: normalised score (realtimegym, table: default "
                                                "0.5), score value (inspect), hit fraction (response-slots: "
                                                "default every slot)"}),
    "--scorer": ("scorer", {"metavar": "NAME", "help": "inspect: the scorer that decides success"}),
    "--mapping": ("mapping", {"metavar": "JSON", "help": "table: {rtlog field: column} as JSON text or a .json file"}),
    "--constants": ("constants", {"metavar": "JSON", "help": "table: {rtlog field: value} for fields the table lacks"}),
    "--time-limit": ("time_limit", {"metavar": "SECONDS|JSON", "help": "terminal-bench, harbor: the agent time "
                                       "limit, seconds or {task: seconds} as JSON text or a .json file, where the "
                                       "results do not record it"}),
    "--tasks-dir": ("tasks_dir", {"metavar": "DIR", "help": "terminal-bench, harbor: the dataset's task folders "
                                                             "(task.yaml / task.toml: time limits, categories)"}),
    "--task-type": ("task_type", {"metavar": "NAME", "help": "terminal-bench, harbor: task_type of every trial"}),
    "--run-id": ("run_id", {"metavar": "ID", "help": "table, response-slots: run_id (default: the file's stem)"}),
}
_JSON_OPTIONS = ("mapping", "constants")


def add_cli_options(parser: argparse.ArgumentParser) -> None:
    """Add the adapters' flags to ``parser`` (flags it already defines are left as they are)."""
    have = set(parser._option_string_actions)
    for flag, (dest, kwargs) in CLI_OPTIONS.items():
        if flag not in have:
            parser.add_argument(flag, dest=dest, default=None, **kwargs)


def options_from_args(args: argparse.Namespace) -> dict:
    """``load(...)`` options from parsed flags; ``ValueError`` for JSON that does not parse."""
    out = {}
    for flag, (dest, _) in CLI_OPTIONS.items():
        value = getattr(args, dest, None)
        if value is None:
            continue
        if dest in _JSON_OPTIONS:
            value = _json_arg(flag, value)
        elif dest == "time_limit":
            value = _number_or_json(flag, value)
        out[dest] = value
    return out


def _number_or_json(flag: str, text: str) -> float | dict:
    try:
        return float(text)
    except ValueError:
        return _json_arg(flag, text)


def _json_arg(flag: str, text: str) -> dict:
    source = Path(text).read_text() if text.endswith(".json") and Path(text).is_file() else text
    try:
        value = json.loads(source)
    except json.JSONDecodeError as e:
        raise ValueError(f"{flag}: not valid JSON ({e})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{flag}: expected a JSON object, got {type(value).__name__}")
    return value
