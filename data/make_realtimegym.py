"""Rewrite data/realtimegym/ (the second bundled example) from the RealtimeGym fixtures.

    .venv/bin/python data/make_realtimegym.py [OUT_DIR]

Converts the run directories in tests/data/real/realtimegym/ (written by RealtimeGym itself; see
the README there) to one rtlog v1 file with ``rtanalysis.adapters.to_rtlog`` (default adapter
options: model names from the run configs, success = normalised score >= 0.5), gzip-compressed
with a fixed header time so the output is the same bytes on every run, then writes README.md.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "tests" / "data" / "real" / "realtimegym"
OUT = HERE / "realtimegym"


def convert(out_dir: Path):
    from rtanalysis.adapters import to_rtlog

    out_dir.mkdir(parents=True, exist_ok=True)
    # episodes in a stable order (the adapter reads run directories sorted by path)
    return to_rtlog([SOURCE], out_dir / "episodes.jsonl.gz", format="realtimegym")


def readme(result, out_dir: Path) -> str:
    ep = result.episodes
    cells = (ep.groupby(["model", "task_type", "cond_time_unit", "mode"])
             .agg(episodes=("success", "size"), success=("success", "mean"), score=("score", "mean"),
                  decisions=("n_steps", "sum"), fallbacks=("n_fallback", "sum"))
             .reset_index())
    rows = "\n".join(
        f"| {r.model} | {r.task_type} | {r.cond_time_unit} | {r.mode} | {r.episodes} | {r.success:.2f} | "
        f"{r.score:.3f} | {r.decisions} | {r.fallbacks} |" for r in cells.itertuples())
    size = (out_dir / "episodes.jsonl.gz").stat().st_size
    return f"""# RealtimeGym example (real harness output, converted)

`episodes.jsonl.gz` is the rtlog v1 conversion (by `rtanalysis.adapters.to_rtlog`, default options)
of the RealtimeGym run directories in `tests/data/real/realtimegym/`: logs written by
RealtimeGym's own evaluation entry point with its LLM client replaced by a stub (two stub models,
`stub-a` and `stub-b`); `tests/data/real/README.md` says exactly how they were made. Rebuild:

    .venv/bin/python data/make_realtimegym.py

Run the full report on it: `rtanalysis demo --example realtimegym`.

- {len(ep)} episodes, {int(ep['n_steps'].sum())} decisions, {result.n_quarantined} quarantined;
  {ep['run_id'].nunique()} runs (one per run directory); file size {size / 1024:.0f} kB.
- Design: 2 models × 3 games (`task_type`) × cognitive load E, H × agent mode reactive, planning,
  agile × time unit tokens (4096 per step) and seconds (1 s per step) × 2 seeds; clock `step`.
- Success = normalised score ≥ 0.5 (the adapter's default); most episodes fail (the stub plays
  at random), Freeway E is where some succeed.
- What the logs cannot tell (docs/adapters.md): in **seconds mode every latency is the tick**
  (`meta.latency_source = "tick"`: no per-decision time is logged), and planning agents' fallbacks
  are unknown there (no `plan` column); in token mode latency is the deciding thread's tokens and
  a planning step with an empty plan is a fallback.
- No truth table: unlike `data/example/`, nothing here is simulated, so there is no known truth.

| model | game | time unit | mode | episodes | success | mean score | decisions | fallbacks |
|---|---|---|---|---|---|---|---|---|
{rows}
"""


def main(out_dir: Path = OUT) -> int:
    result = convert(out_dir)
    (out_dir / "README.md").write_text(readme(result, out_dir), encoding="utf-8")
    print(f"wrote {out_dir}: {result.n_accepted} episodes, {result.n_quarantined} quarantined")
    return 0 if result.n_quarantined == 0 else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
