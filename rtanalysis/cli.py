"""Command line: ``rtanalysis <command>``; each pipeline stage registers its own subcommand.

A stage module exposes ``add_cli(subparsers)``; this file only collects them, so the CLI stays a
thin layer over the package functions.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: modules that contribute subcommands, in the order ``--help`` lists them
COMMAND_MODULES = (
    "rtanalysis.ingest",
    "rtanalysis.simulate",
    "rtanalysis.model.cli",
    "rtanalysis.report",
)


class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="rtanalysis", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"rtanalysis {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name and (e.name == name or name.startswith(e.name + ".")):
                continue  # stage not present in this build
            raise
        mod.add_cli(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except CLIError as e:
        print(f"rtanalysis {args.command}: error: {e}", file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"rtanalysis {args.command}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
