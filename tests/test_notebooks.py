"""The notebooks run top to bottom (papermill, kernel ``python3``), with small draws and their
outputs in a temporary folder; they are committed without outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
FITTING = {"03_fit_and_diagnose", "04_decompose_and_counterfactuals", "05_paper_figures"}
NAMES = ["01_load_and_validate", "02_metrics", *sorted(FITTING)]


def _run(name: str, tmp_path: Path) -> dict:
    import papermill as pm

    out = tmp_path / f"{name}.out.ipynb"
    pm.execute_notebook(str(NOTEBOOKS / f"{name}.ipynb"), str(out), kernel_name="python3", cwd=str(NOTEBOOKS),
                        parameters={"output_dir": str(tmp_path / "out"), "draws": 60, "chains": 2, "seed": 1},
                        progress_bar=False)
    return json.loads(out.read_text())


@pytest.mark.parametrize("name", NAMES)
def test_committed_without_outputs_and_with_parameters(name):
    nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c["outputs"] and c["execution_count"] is None for c in code)
    params = [c for c in code if "parameters" in c["metadata"].get("tags", [])]
    assert len(params) == 1
    src = "".join(params[0]["source"])
    for name_ in ("log_path", "output_dir", "draws", "seed"):
        assert name_ in src
    assert '"../data/example"' in src


@pytest.mark.parametrize("name", [n for n in NAMES if n not in FITTING])
def test_notebook_runs(name, tmp_path):
    nb = _run(name, tmp_path)
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    if name == "01_load_and_validate":
        assert (tmp_path / "out" / "episodes.parquet").exists()


@pytest.mark.slow
def test_fitting_notebooks_run_in_order_sharing_one_fit(tmp_path):
    for name in sorted(FITTING):
        nb = _run(name, tmp_path)
        errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors, name
    assert (tmp_path / "out" / "fit.pkl").exists()
    assert (tmp_path / "out" / "fit" / "decomposition.csv").exists()
    assert (tmp_path / "out" / "paper" / "report.html").exists()
    assert (tmp_path / "out" / "paper" / "figures" / "rank_trace.pdf").exists()
