"""The notebooks run top to bottom in a real kernel (papermill, kernel ``python3``), with small
draws and their outputs in a temporary folder: every figure cell shows its figure inline
(``image/png``), no cell errs, the fit is shared through ``posterior.nc`` (never a pickle). They
are committed without outputs, with the package's default draws and chains."""

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
    # MPLBACKEND=Agg is set for the test session: the notebook's `%matplotlib inline` must win
    pm.execute_notebook(str(NOTEBOOKS / f"{name}.ipynb"), str(out), kernel_name="python3", cwd=str(NOTEBOOKS),
                        parameters={"output_dir": str(tmp_path / "out"), "draws": 60, "chains": 2, "seed": 1},
                        progress_bar=False)
    return json.loads(out.read_text())


def _check_outputs(nb: dict, name: str) -> None:
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, (name, errors[:1])
    figure_cells = [c for c in code if "figure" in c["metadata"].get("tags", [])]
    for c in figure_cells:
        kinds = [set(o.get("data", {})) for o in c["outputs"]]
        assert any("image/png" in k for k in kinds), (name, "".join(c["source"])[:80], kinds)
    printed = [o for c in code for o in c["outputs"] if "image/png" not in o.get("data", {})
               and "".join(o.get("data", {}).get("text/plain", [])).startswith("<Figure size")]
    assert not printed, name  # a figure printed as text instead of shown


@pytest.mark.parametrize("name", NAMES)
def test_committed_without_outputs_and_with_parameters(name):
    nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c["outputs"] and c["execution_count"] is None for c in code)
    params = [c for c in code if "parameters" in c["metadata"].get("tags", [])]
    assert len(params) == 1
    src = "".join(params[0]["source"])
    for name_ in ("log_path", "output_dir", "draws = DEFAULT_DRAWS", "chains = DEFAULT_CHAINS", "seed"):
        assert name_ in src
    assert '"../data/example"' in src
    every = "".join("".join(c["source"]) for c in code)
    assert 'matplotlib.use(' not in every and "%matplotlib inline" in every and "pickle" not in every


def test_parameters_are_the_fit_defaults():
    import inspect

    from rtanalysis.model import DEFAULT_CHAINS, DEFAULT_DRAWS, fit

    defaults = inspect.signature(fit).parameters
    assert (defaults["draws"].default, defaults["chains"].default) == (DEFAULT_DRAWS, DEFAULT_CHAINS)


@pytest.mark.parametrize("name", [n for n in NAMES if n not in FITTING])
def test_notebook_runs_and_shows_its_figures(name, tmp_path):
    nb = _run(name, tmp_path)
    _check_outputs(nb, name)
    if name == "01_load_and_validate":
        assert (tmp_path / "out" / "episodes.parquet").exists()
    else:
        assert sum("figure" in c["metadata"].get("tags", []) for c in nb["cells"]) == 4


@pytest.mark.slow
def test_fitting_notebooks_run_in_order_sharing_one_fit(tmp_path):
    fit_dir = tmp_path / "out" / "fit"
    written = None
    for name in sorted(FITTING):
        _check_outputs(_run(name, tmp_path), name)
        written = written or (fit_dir / "posterior.nc").stat().st_mtime_ns
    assert (fit_dir / "posterior.nc").stat().st_mtime_ns == written  # 04 and 05 read the fit 03 wrote
    assert (fit_dir / "posterior.nc").exists() and (fit_dir / "decomposition.csv").exists()
    assert not list((tmp_path / "out").rglob("*.pkl"))
    assert (tmp_path / "out" / "paper" / "report.html").exists()
    assert (tmp_path / "out" / "paper" / "figures" / "rank_trace.pdf").exists()
