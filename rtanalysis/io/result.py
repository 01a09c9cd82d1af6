"""What loading produced: :class:`~rtanalysis.LoadResult` (the tidy tables, the quarantine, per-file
counts)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd


@dataclass
class LoadResult:
    """What loading produced: the tidy tables, the quarantine and per-file counts."""

    episodes: pd.DataFrame
    steps: pd.DataFrame
    quarantine: pd.DataFrame
    files: pd.DataFrame = field(repr=False)

    @property
    def n_read(self) -> int:
        return int(self.files["n_read"].sum())

    @property
    def n_accepted(self) -> int:
        return int(self.files["n_accepted"].sum())

    @property
    def n_quarantined(self) -> int:
        return int(self.files["n_quarantined"].sum())

    def drop_record_only_columns(self) -> None:
        """Drop, in place, the step fields that only the record needs (``schema.RECORD_ONLY_STEP_COLUMNS``:
        times, action, reward, tokens; the outcome derived from them stays). ``rtanalysis report`` does this
        after the fit has hashed the data and ingest has written it, instead of holding them through the
        derived quantities, figures and tables: at 10^6 episodes the report's peak fell from 2283 to 2014
        MiB (``benchmarks/results/bench_scale.txt``)."""
        from ..schema import RECORD_ONLY_STEP_COLUMNS

        for column in RECORD_ONLY_STEP_COLUMNS:
            if column in self.steps.columns:
                del self.steps[column]  # in place: a frame that holds it (the fit's) lets it go too

    def summary(self) -> dict:
        """The counts as written to ``ingest.json``."""
        return {
            "n_read": self.n_read,
            "n_accepted": self.n_accepted,
            "n_quarantined": self.n_quarantined,
            "files": [
                {k: (int(v) if k != "path" else str(v)) for k, v in row.items()}
                for row in self.files[["path", "n_read", "n_accepted", "n_quarantined"]].to_dict("records")
            ],
        }

    def __str__(self) -> str:
        return (
            f"read {self.n_read} records from {len(self.files)} file(s): {self.n_accepted} accepted, "
            f"{self.n_quarantined} quarantined; {len(self.episodes)} episodes, {len(self.steps)} decisions"
        )
