"""``rtanalysis simulate``: write a preset benchmark's logs and truth table."""

from __future__ import annotations


def add_cli(subparsers) -> None:
    """Register the ``simulate`` subcommand."""
    from .presets import MISSPEC_PRESETS, PRESETS

    p = subparsers.add_parser("simulate", help="simulate a realtime benchmark with known truth",
                              description="Write DIR/episodes.jsonl.gz (rtlog v1), DIR/truth.csv and DIR/design.json.")
    p.add_argument("--preset", default="mixed", choices=sorted(PRESETS) + sorted(MISSPEC_PRESETS),
                   help="design preset (default: mixed); misspecified ones in docs/user-guide/simulate.md")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--tasks", type=int, help="items per task type (default: the preset's)")
    p.add_argument("--seeds", type=int, help="environment seeds per item (default: the preset's)")
    p.add_argument("--unlabelled", action="store_true", help="drop correct_at_obs and valid_at_exec from the logs")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..errors import UsageError
    from .core import simulate

    overrides = {}
    for name in ("tasks", "seeds"):
        v = getattr(args, name)
        if v is not None:
            if v < 1:
                raise UsageError(f"--{name} must be >= 1, got {v}")
            overrides[name] = v
    if args.unlabelled:
        overrides["labelled"] = False
    sim = simulate(args.preset, seed=args.seed, **overrides)
    paths = sim.write(args.out)
    print(f"{sim.summary()}; wrote {paths['episodes']} and {paths['truth']}")
    return 0
