"""Small hand-made rtlog fixtures for the metrics tests (tests/fixtures/metrics/)."""

from pathlib import Path

from rtanalysis.io import load_rtlog

FIXTURES = Path(__file__).parent / "fixtures" / "metrics"


def load_fixture(name: str = "basic.jsonl"):
    """Load one fixture file; it must load without quarantine."""
    result = load_rtlog(FIXTURES / name)
    assert result.n_quarantined == 0, result.quarantine
    return result


def row(frame, **keys):
    """The single row of ``frame`` matching ``keys`` (as a Series)."""
    mask = True
    for k, v in keys.items():
        mask = mask & (frame[k] == v)
    sub = frame[mask]
    assert len(sub) == 1, f"{len(sub)} rows match {keys}"
    return sub.iloc[0]


def episode_frame(frame):
    """An episodes frame with the schema's columns from a partial one (counts and lines set to 0)."""
    import pandas as pd

    from rtanalysis import schema

    frame = pd.DataFrame(frame)
    for col in ("n_steps", "n_fallback", "source_line"):
        if col not in frame:
            frame[col] = 0
    if "failure_type" not in frame:
        frame["failure_type"] = ["none" if s else "unknown" for s in frame["success"]]
    return schema.conform(frame, schema.EPISODE_COLUMNS)
