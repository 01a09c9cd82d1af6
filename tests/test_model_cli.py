"""``rtanalysis fit`` / ``rtanalysis calibrate`` command lines."""

import json

import orjson
import pandas as pd
import pytest

from rtanalysis.cli import main
from rtanalysis.model.studies.toy import ToyDesign, toy_records

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("model")]


def test_fit_cli_writes_outputs(tmp_path, capsys):
    log = tmp_path / "toy.jsonl"
    log.write_bytes(b"\n".join(orjson.dumps(r) for r in toy_records(ToyDesign(), 20, seed=5, labelled=False)))
    out = tmp_path / "fit"
    rc = main(["fit", str(log), "--out", str(out), "--draws", "100", "--tune", "100", "--chains", "2", "--seed", "3"])
    assert rc == 0
    text = capsys.readouterr()
    assert "diagnostics:" in text.out and "setting up the model" in text.err
    dec = pd.read_csv(out / "decomposition.csv")
    assert len(dec) == 6 and dec["p_success"].between(0, 1).all()
    info = json.loads((out / "diagnostics.json").read_text())
    assert info["draws"] == 100 and info["chains"] == 2 and info["seed"] == 3
    assert (out / "posterior.nc").stat().st_size > 0


def test_fit_cli_bad_arguments(tmp_path, capsys):
    assert main(["fit", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o")]) == 2
    assert main(["calibrate", "--preset", "no-such-preset", "--reps", "1"]) == 2
    assert "no-such-preset" in capsys.readouterr().err


def test_calibrate_cli_reports_coverage_error_and_diagnostics(tmp_path, capsys):
    """One replicate of a preset: 16 cells × 4 quantities checked against the simulator's truth. With
    90 % intervals a calibrated model covers 0.9 (the recovery study's worst line: 0.875); 0.7 over 64
    checks is over 5 binomial SDs below that, and a share_timing error above 0.1 is twice the issue's
    bound: either means the model is broken, not unlucky."""
    out = tmp_path / "cal"
    rc = main(["calibrate", "--preset", "capability_dominated", "--reps", "1", "--draws", "300",
               "--chains", "2", "--seed", "11", "--out", str(out)])
    assert rc == 0
    assert "replicate 1/1 done" in capsys.readouterr().err
    tab = pd.read_csv(out / "calibration.csv")
    decomposition = ["p_capable", "p_success", "p_timely", "share_timing"]
    assert sorted(tab["quantity"]) == sorted(decomposition + ["p_success@x0.5", "p_success@x2", "p_success@as"])
    assert (tab.set_index("quantity").loc[decomposition, "n_cells"] == 16).all() and (tab["reps"] == 1).all()
    assert {"fits_ok", "worst_rhat", "worst_ess_bulk", "divergences"} <= set(tab.columns)
    assert tab["coverage"].mean() >= 0.7, tab
    assert tab.set_index("quantity").loc["share_timing", "mae"] <= 0.1, tab
