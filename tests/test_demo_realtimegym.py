"""The second bundled example (RealtimeGym runs converted to rtlog) and ``demo --example``."""

import gzip
import json
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

import rtanalysis
from rtanalysis import cli
from tests.fits import data_set, shared_fit

ROOT = Path(__file__).resolve().parent.parent
NAN = re.compile(r"\bnan\b", re.IGNORECASE)


@data_set("realtimegym_example")
def realtimegym_example():
    """The bundled RealtimeGym example (runs the harness wrote, converted)."""
    return rtanalysis.load(rtanalysis.example_data("realtimegym"))


def test_bundled_example_is_the_conversion_of_the_fixtures(tmp_path):
    sys.path.insert(0, str(ROOT / "data"))
    try:
        import make_realtimegym
    finally:
        sys.path.remove(str(ROOT / "data"))
    assert make_realtimegym.main(tmp_path) == 0
    bundled = Path(str(rtanalysis.example_data("realtimegym")))
    assert (tmp_path / "episodes.jsonl.gz").read_bytes() == (bundled / "episodes.jsonl.gz").read_bytes()
    with gzip.open(bundled / "episodes.jsonl.gz", "rt") as fh:
        sources = {json.loads(line)["meta"]["latency_source"] for line in fh}
    assert sources == {"tokens", "tick"}


def test_unknown_example_is_a_clear_error():
    with pytest.raises(ValueError, match="bundled examples: example, realtimegym"):
        rtanalysis.example_data("nope")
    with pytest.raises(SystemExit):  # argparse: invalid choice, with the choices listed
        cli.main(["demo", "--example", "nope", "--no-fit"])


def _demo(home: Path, *extra: str) -> int:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(home)
        return cli.main(["demo", "--example", "realtimegym", "--out", "demo", "--quiet", *extra])


def test_demo_realtimegym_observed_metrics(tmp_path):
    assert _demo(tmp_path, "--no-fit") == 0
    out = tmp_path / "demo"
    md = (out / "report.md").read_text()
    models = pd.read_parquet(out / "episodes.parquet", columns=["model"])["model"].unique()
    assert set(models) == {"stub-a", "stub-b"}
    assert all(m in md for m in models) and not NAN.search(md)
    fb = pd.read_csv(out / "metrics_fallback.csv")
    assert (fb["fallback_rate"].dropna() < 0.5).all()


@pytest.mark.slow
@pytest.mark.xdist_group("realtimegym_fit")  # the same model: one compile for both
def test_demo_realtimegym_with_a_small_fit(tmp_path):
    assert _demo(tmp_path, "--draws", "100", "--tune", "100", "--chains", "2") == 0
    out = tmp_path / "demo"
    assert (out / "report.md").is_file() and (out / "report.html").is_file()
    assert (out / "diagnostics.json").is_file()
    # the power-scaling prior sensitivity is reported: flagged rows or "no row is prior-sensitive"
    md = (out / "report.md").read_text()
    assert "**Prior sensitivity.**" in md and "not computed" not in md
    ps = pd.read_csv(out / "tables" / "prior_sensitivity.csv")
    assert set(ps["quantity"]) == {"share_timing", "p_timely"} and ps["prior_sensitivity"].notna().all()


@pytest.mark.slow
@pytest.mark.xdist_group("realtimegym_fit")  # the same model: one compile for both
def test_predicted_miss_share_agrees_with_the_logged_fallbacks():
    # issue 11 §5: per (model, game) the predicted share of missed decisions is inside the 95%
    # posterior predictive interval of the logged share in >= 90% of cells. Token-mode latencies are
    # capped at the budget (a capped latency is not a miss), seconds-mode ones are the tick: no cell
    # may turn a latency tail into misses the logs do not show.
    res = shared_fit("realtimegym_example", seed=1)
    ppc = res.ppc()
    shares = ppc[ppc["check"] == "share_late_or_silent"]
    assert len(shares) == 6
    assert shares["covered"].mean() >= 0.9, shares[["model", "task_type", "observed", "predicted_lo", "predicted_hi"]]
    assert not res.decomposition()["latency_informative"].any()
