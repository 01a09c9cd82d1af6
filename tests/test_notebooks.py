"""The notebooks as committed: without outputs, with a papermill ``parameters`` cell holding the
package's default draws and chains, figure cells tagged. They are executed top to bottom in a real
kernel by the documentation build (MyST-NB, the package's defaults), and ``tests/test_docs_site.py``
checks the executed notebooks: every figure cell shows its figure inline (``image/png``), no cell
errs, the fit is shared through ``posterior.nc`` (never a pickle)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
FITTING = {"03_fit_and_diagnose", "04_decompose_and_counterfactuals", "05_paper_figures"}
NAMES = ["01_load_and_validate", "02_metrics", *sorted(FITTING), "06_llm_colosseum"]
#: the data a notebook reads when it is not the simulated example (docs/conf.py resolves it the same way)
LOG_PATHS = {"06_llm_colosseum": '"../data/llm-colosseum"'}


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
    assert LOG_PATHS.get(name, '"../data/example"') in src
    every = "".join("".join(c["source"]) for c in code)
    assert 'matplotlib.use(' not in every and "%matplotlib inline" in every and "pickle" not in every


def test_parameters_are_the_fit_defaults():
    import inspect

    from rtanalysis.model import DEFAULT_CHAINS, DEFAULT_DRAWS, fit

    defaults = inspect.signature(fit).parameters
    assert (defaults["draws"].default, defaults["chains"].default) == (DEFAULT_DRAWS, DEFAULT_CHAINS)


def test_figure_cells_are_tagged():
    """The docs build executes the notebooks and tests/test_docs_site.py checks that every cell tagged
    ``figure`` shows its figure: the tags must be there to be checked."""
    for name in NAMES:
        nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())
        tagged = sum("figure" in c["metadata"].get("tags", []) for c in nb["cells"])
        assert tagged == {"01_load_and_validate": 0, "02_metrics": 4}.get(name, tagged), name
        if name != "01_load_and_validate":
            assert tagged >= 1, name
