"""The documentation site as a reader sees it.

Builds the site as ``make docs`` does (``sphinx-build -W --keep-going -n``: a warning or an internal
reference that does not resolve fails the build), which executes the gallery's notebooks (MyST-NB,
the notebooks of ``notebooks/`` with the package's default draws and chains; the outputs are cached in
``docs/_build/.jupyter_cache``, so after ``make docs`` — as in CI, ``.ci/run`` — the build here only
re-checks the pages). Then:

* the executed notebooks (their pages): no cell errs (an error fails the build), every cell tagged
  ``figure`` shows an image (not a figure printed as text), and the outputs the notebooks write are
  there (the tidy tables, the fit as ``posterior.nc``, never a pickle, the paper's report). This
  replaces the notebooks' separate papermill run.
* the built pages in headless Chromium (Debian's ``chromium``): the key pages and every gallery
  page are opened with a small script appended that, once the page has loaded, writes into the DOM
  how many images it has and which did not load (``naturalWidth == 0``); ``--dump-dom`` prints it.
  Every image must load, and each gallery page must show as many figures as its notebook has figure
  cells.

Skipped when Chromium is missing outside CI; in CI (``CI=true``) a missing browser fails the test.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser import chromium, page_check

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group(name="docs_site")]

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
HTML = DOCS / "_build" / "html"
OUTPUTS = DOCS / "_build" / "gallery_outputs"
NOTEBOOKS = ROOT / "notebooks"
#: the pages a reader opens first; every gallery page is checked as well
KEY_PAGES = ["index.html", "getting-started.html", "user-guide/index.html", "user-guide/fit.html", "model.html",
             "validation.html"]
#: what the docs' check adds to :func:`tests.browser.check_script`'s report
DOCS_FIELDS = """figure_cells: document.querySelectorAll(".cell.tag_figure").length,
    figures_shown: Array.from(document.querySelectorAll(".cell.tag_figure")).filter(
      c => Array.from(c.querySelectorAll(".cell_output img")).some(i => i.complete && i.naturalWidth > 0)).length,"""


def build_site() -> None:
    """``make docs``'s build (same options, same environment switches)."""
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html", str(DOCS), str(HTML)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=3600, check=False)
    assert done.returncode == 0, f"sphinx-build failed ({done.returncode}):\n{done.stderr[-6000:]}"


@pytest.fixture(scope="module")
def site() -> Path:
    build_site()
    return HTML


def figure_cells(name: str) -> int:
    nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())
    return sum("figure" in c.get("metadata", {}).get("tags", []) for c in nb["cells"])


def gallery_names() -> list[str]:
    return sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))


def page_report(exe: str, page: Path, profile: Path) -> dict:
    return page_check(exe, page, profile, DOCS_FIELDS, budget_ms=15000)


def test_site_builds_with_every_page(site):
    for page in KEY_PAGES + [f"gallery/{n}.html" for n in gallery_names()] + ["studies/index.html", "changelog.html"]:
        assert (site / page).exists(), page
    model = (site / "model.html").read_text()
    assert "sd_item_cap" in model and "no_speed_accuracy" in model  # the generated priors and assumptions tables


def test_notebooks_executed_with_their_figures(site):
    """Every gallery page shows its notebook executed: each cell tagged ``figure`` (MyST-NB gives its
    container the class ``tag_figure``) has an image in its output, and no figure was printed as text.
    A cell that raised fails the build itself (``nb_execution_raise_on_error``)."""
    for name in gallery_names():
        html = (site / "gallery" / f"{name}.html").read_text()
        cells = re.split(r'<div class="cell[ "]', html)[1:]
        figures = [c for c in cells if c.startswith("tag_figure") or " tag_figure " in c[:200]]
        assert len(figures) == figure_cells(name), (name, len(figures))
        for c in figures:
            output = c.split('class="cell_output', 1)
            assert len(output) == 2 and "<img" in output[1].split('<div class="cell', 1)[0], (name, c[:300])
        assert "&lt;Figure size" not in html, name  # a figure printed as text instead of shown
    assert (OUTPUTS / "episodes.parquet").exists()  # 01 wrote the tidy tables
    fit = OUTPUTS / "fit"
    assert (fit / "posterior.nc").exists() and (fit / "decomposition.csv").exists()
    assert not list(OUTPUTS.rglob("*.pkl"))
    assert (OUTPUTS / "paper" / "report.html").exists()


def test_pages_and_figures_load_in_chromium(site, tmp_path):
    exe = chromium()
    problems = []
    for page in KEY_PAGES:
        r = page_report(exe, site / page, tmp_path / "profile")
        if r["broken"]:
            problems.append((page, r["broken"]))
    model = page_report(exe, site / "validation.html", tmp_path / "profile")
    assert model["n_images"] >= 1  # the SBC rank histograms
    for name in gallery_names():
        r = page_report(exe, site / "gallery" / f"{name}.html", tmp_path / "profile")
        if r["broken"]:
            problems.append((name, r["broken"]))
        assert r["figure_cells"] == r["figures_shown"] == figure_cells(name), (name, r)
    assert not problems, problems
