"""Rewrite data/llm-colosseum/ (the bundled LLM Colosseum example) from a checkout of the arena.

    .venv/bin/python tests/data/real/llm_colosseum/make_example.py BATTLES_DIR [OUT_DIR]

``BATTLES_DIR``: the battle transcripts of a season, ``data/seasons/season-1/battles`` in a checkout
of https://github.com/sanifhimani/llm-colosseum (the README next to this script names the commit).
Converts every ``day-NNN.json`` there with ``rtanalysis.adapters.to_rtlog`` (default adapter
options: success = the battle's winner), gzip-compressed with a fixed header time so the same input
gives the same bytes, then writes README.md with the provenance and the arena's MIT notice.
Nothing of the arena's code is used or copied: only its committed battle files are read.
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
OUT = ROOT / "data" / "llm-colosseum"
SOURCE_URL = "https://github.com/sanifhimani/llm-colosseum"
#: the arena's commit the bundle was made from (its data/seasons/season-1/battles, days 1-85)
SOURCE_COMMIT = "8c795a7c5116e802989acb39501f5ed2abce22bb"
# this checkout's adapter makes the bundle, not whichever rtanalysis the interpreter has installed
sys.path.insert(0, str(ROOT))


def convert(battles: Path, out_dir: Path):
    from rtanalysis.adapters import to_rtlog

    out_dir.mkdir(parents=True, exist_ok=True)
    return to_rtlog([battles], out_dir / "episodes.jsonl.gz", format="llm-colosseum")


def stun_causes(result) -> dict[tuple[str, str], int]:
    """(model, no_action_cause) → stunned turns."""
    st = result.steps[result.steps["no_action_cause"].notna()]
    return {k: int(v) for k, v in st.groupby(["model", "no_action_cause"]).size().items()}


def summary_table(result, causes) -> str:
    ep, st = result.episodes, result.steps
    rows = []
    for model, g in st.groupby("model"):
        e = ep[ep["model"] == model]
        outcomes = g["outcome"].value_counts()
        rows.append(f"| {model} | {len(e)} | {int(e['success'].sum())} | {e['score'].mean():.2f} | {len(g)} | "
                    f"{int(outcomes.get('wrong', 0))} | {causes.get((model, 'timeout'), 0)} | "
                    f"{causes.get((model, 'error'), 0)} | {int(outcomes.get('late', 0))} | "
                    f"{g['latency'].median():.2f} |")
    return "\n".join(rows)


def readme(result, out_dir: Path) -> str:
    ep = result.episodes
    days = sorted(json.loads(m)["day"] for m in ep["meta"].drop_duplicates())
    size = (out_dir / "episodes.jsonl.gz").stat().st_size
    licence = (HERE / "LICENSE").read_text(encoding="utf-8").strip()
    return f"""# LLM Colosseum example (real battles, converted)

`episodes.jsonl.gz` is the rtlog v1 conversion (by `rtanalysis.adapters.to_rtlog`, format
`llm-colosseum`, default options) of every battle transcript of LLM Colosseum's season 1, days
{days[0]}–{days[-1]}: a daily battle royale of four hosted models on a 12×12 grid, each turn one model's
call with a 15 s deadline. Run the full report on it: `rtanalysis demo --example llm-colosseum`.

- **Source**: {SOURCE_URL}, commit `{SOURCE_COMMIT}`, files
  `data/seasons/season-1/battles/day-NNN.json` (the arena commits each battle there). Rebuild
  from a checkout at that commit:

      .venv/bin/python tests/data/real/llm_colosseum/make_example.py <checkout>/data/seasons/season-1/battles

- {len(ep)} episodes (one per battle and model), {int(ep['n_steps'].sum())} decisions (turns),
  {result.n_quarantined} quarantined; {ep['run_id'].nunique()} runs (one per battle: memories of earlier
  battles feed the next, so battles are not independent repeats); file size {size / 1024:.0f} kB.
- Clock `step`, seconds, window `[0, 15]` per turn. A stunned turn (the call failed) is no action,
  with `no_action_cause` `timeout` (the call lasted to the deadline) or `error` (it failed before),
  read off the event timestamps; an invalid reply is an action with `correct_at_obs: false`; legal
  actions are unlabelled (the files cannot say whether a move was good). Success = won the battle;
  score = opponents outlasted (0–3). docs/user-guide/adapters.md has the full mapping.
- No truth table: these are real battles.

| model | battles | wins | mean score | turns | invalid | stunned: timeout | stunned: error | late (> 15 s) | median latency (s) |
|---|---|---|---|---|---|---|---|---|---|
{summary_table(result, stun_causes(result))}

## Licence of the source data

The battle transcripts are from LLM Colosseum, under the MIT licence; its notice:

```
{licence}
```
"""


def main(battles: Path, out_dir: Path = OUT) -> int:
    result = convert(battles, out_dir)
    (out_dir / "README.md").write_text(readme(result, out_dir), encoding="utf-8")
    print(f"wrote {out_dir}: {result.n_accepted} episodes, {result.n_quarantined} quarantined")
    return 0 if result.n_quarantined == 0 else 1


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else OUT))
