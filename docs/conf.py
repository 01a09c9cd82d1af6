"""Sphinx configuration of the rtanalysis documentation site.

Build: ``make docs`` (``sphinx-build -W --keep-going -n -b html docs docs/_build/html``).

Environment switches (all optional):

``RTANALYSIS_DOCS_API=0``
    leave the API reference (``api.md``) out of the build. It documents the package's public names
    with autosummary; set this only while the names it lists are being changed.
``RTANALYSIS_DOCS_EXECUTE``
    MyST-NB's execution mode for the gallery: ``cache`` (default: execute a notebook when its code
    changed, reuse the stored outputs otherwise), ``force`` or ``off`` (no execution: quick builds
    while writing pages; the gallery then shows no outputs).
``RTANALYSIS_DOCS_DRAWS`` / ``RTANALYSIS_DOCS_CHAINS``
    draws and chains of the gallery's fit (default: the package's defaults, what a user gets).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

project = "rtanalysis"
author = "the rtanalysis authors"
copyright = "the rtanalysis authors"
try:
    from rtanalysis.about import __version__ as release
except Exception:  # pragma: no cover - the build still works without the package importable
    release = "unknown"
version = release

extensions = [
    "myst_nb",  # MyST markdown pages and executed notebooks (includes myst_parser)
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
]

# .rst first: autosummary writes its stubs (docs/generated/, reStructuredText) with the first suffix
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]
API_PAGE = os.environ.get("RTANALYSIS_DOCS_API", "1") != "0"
if not API_PAGE:
    exclude_patterns.append("api.md")
    exclude_patterns.append("generated/**")
    exclude_patterns.append("api/**")  # module pages written by hand (api.md links them)

# every cross-reference must resolve (-n with -W fails the build on a broken internal link)
nitpicky = True
suppress_warnings: list[str] = []
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|pandas|pd|xarray|xr|arviz|az|pymc|pm|matplotlib|plt|pathlib|typing|collections)\..*"),
    (r"py:class", r"optional|default.*|array-like|callable|iterable|sequence|mapping|path-like|str or .*"),
]
if not API_PAGE:  # without the API page the pages' references to the package's names have no target
    nitpick_ignore_regex.append((r"py:.*", r"rtanalysis(\..*)?"))
    suppress_warnings += ["toc.excluded", "toc.not_readable"]

# MyST: $...$ and $$...$$ math, amsmath environments, tables, definition lists, heading anchors
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist", "substitution"]
myst_heading_anchors = 3
myst_dmath_double_inline = True

# ---- notebooks: the gallery -------------------------------------------------------------------
# The notebooks live in notebooks/ (committed without outputs, papermill ``parameters`` cell with
# the package's defaults). The build copies each into docs/gallery/ with one hidden cell after the
# parameters cell that points log_path and output_dir at absolute paths (the copies sit in another
# folder), as papermill injects parameters. docs/gallery/ is generated (not committed).
nb_execution_mode = os.environ.get("RTANALYSIS_DOCS_EXECUTE", "cache")
nb_execution_timeout = 1800  # seconds per notebook: 03 compiles and fits the model from a cold cache
nb_execution_raise_on_error = True  # an error in a notebook cell fails the build
nb_execution_show_tb = True
nb_execution_cache_path = str(DOCS / "_build" / ".jupyter_cache")
nb_execution_in_temp = False  # run in docs/gallery/, so 03 → 05 share the fit written to output_dir
nb_merge_streams = True
nb_kernel_rgx_aliases = {".*": "python3"}

GALLERY = DOCS / "gallery"
NOTEBOOKS = ROOT / "notebooks"
GALLERY_OUT = DOCS / "_build" / "gallery_outputs"


def _own_log_path(parameters: str) -> Path:
    """The notebook's own ``log_path`` (relative to notebooks/), made absolute; the example by default."""
    m = re.search(r'^log_path\s*=\s*"([^"]+)"', parameters, re.MULTILINE)
    return (NOTEBOOKS / m.group(1)).resolve() if m else ROOT / "data" / "example"


def _injected_cell(parameters: str) -> dict:
    lines = [
        "# injected by docs/conf.py (as papermill injects parameters): the copies live in docs/gallery/",
        f"log_path = {json.dumps(str(_own_log_path(parameters)))}",
        f"output_dir = {json.dumps(str(GALLERY_OUT))}",
    ]
    if os.environ.get("RTANALYSIS_DOCS_DRAWS"):
        lines.append(f"draws = {int(os.environ['RTANALYSIS_DOCS_DRAWS'])}")
    if os.environ.get("RTANALYSIS_DOCS_CHAINS"):
        lines.append(f"chains = {int(os.environ['RTANALYSIS_DOCS_CHAINS'])}")
    return {"cell_type": "code", "id": "injected-parameters", "execution_count": None, "outputs": [],
            "metadata": {"tags": ["injected-parameters", "remove-cell"]},
            "source": "\n".join(lines)}


def copy_notebooks() -> list[Path]:
    """notebooks/*.ipynb → docs/gallery/, with the injected parameters; a file is rewritten only when
    its content changes (so Sphinx and the execution cache see unchanged notebooks as unchanged)."""
    GALLERY.mkdir(exist_ok=True)
    written = []
    sources = sorted(NOTEBOOKS.glob("*.ipynb"))
    for src in sources:
        nb = json.loads(src.read_text())
        cells = nb["cells"]
        at = next(i for i, c in enumerate(cells) if "parameters" in c.get("metadata", {}).get("tags", []))
        source = cells[at]["source"]
        cells.insert(at + 1, _injected_cell("".join(source) if isinstance(source, list) else source))
        nb.setdefault("metadata", {})["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
        dst = GALLERY / src.name
        if not dst.exists() or dst.read_text() != text:
            dst.write_text(text)
        written.append(dst)
    names = {p.name for p in sources}
    for stale in GALLERY.glob("*.ipynb"):
        if stale.name not in names:
            stale.unlink()
    return written


copy_notebooks()
GALLERY_OUT.mkdir(parents=True, exist_ok=True)

# ---- tables generated from the code (model.md includes them) ----------------------------------
GENERATED = DOCS / "_generated"

#: prior registry name → the symbol model.md uses (a new prior without a symbol fails the build)
PRIOR_SYMBOLS = {
    "a0": r"$a_0$", "sd_model_cap": r"$a_m$", "sd_type_cap": r"$b_k$", "sd_model_type_cap": r"$g_{mk}$",
    "sd_item_cap": r"$\mathrm{sd}^{\mathrm{cap}}_k$", "timed_cap": r"$\kappa_m$", "length_cap": r"$\beta_k$",
    "always_fatal": r"$\psi_f$", "fatality": r"$f_k$", "c0": r"$c_0[u]$", "sd_model_lat": r"$u_m$",
    "sd_type_lat": r"$v_k$", "sd_model_type_lat": r"$h_{mk}$", "s0": r"$s_0[u]$",
    "sd_item_lat": r"$\mathrm{sd}^{\mathrm{lat}}_k$", "item_cap_per_lat": r"$\gamma_k$", "wrong_lat": r"$\eta_{mk}$",
    "sd_model_sigma": r"$s_m$", "sd_type_sigma": r"$s_k$", "silence_prevalence": r"$\psi_s$", "silence": r"$\pi_m$",
    "nu": r"$\nu$", "mode_share": r"$\omega_m$", "mode_shift": r"$\delta_m$", "latency_icc": r"$r_k$",
}


def _cell(text: str) -> str:
    return str(text).replace("|", r"\|").replace("\n", " ")


def _prior_text(dist: str, kwargs: dict) -> str:
    if dist == "Fixed":
        return f"ZeroSumNormal, fixed scale {kwargs['value']}"
    return f"{dist}({', '.join(str(v) for v in kwargs.values())})"


def write_generated_tables() -> None:
    from rtanalysis.model.assumptions import COUNTERFACTUAL_ASSUMPTIONS, SCENARIO_ASSUMPTIONS
    from rtanalysis.model.priors import PRIORS

    missing = sorted(set(PRIORS) - set(PRIOR_SYMBOLS))
    if missing:
        raise RuntimeError(f"docs/conf.py: PRIOR_SYMBOLS has no symbol for prior(s) {missing}")
    rows = ["| symbol | parameter | prior | rationale |", "|---|---|---|---|"]
    rows += [f"| {PRIOR_SYMBOLS[name]} | `{name}` | {_cell(_prior_text(dist, kw))} | {_cell(why)} |"
             for name, (dist, kw, why) in PRIORS.items()]
    scenarios = list(SCENARIO_ASSUMPTIONS)
    arows = ["| id | assumption | " + " | ".join(f"`{s}`" for s in scenarios) + " |",
             "|---|---|" + "---|" * len(scenarios)]
    arows += [f"| `{key}` | {_cell(text)} | " + " | ".join("✓" if key in SCENARIO_ASSUMPTIONS[s] else "" for s in scenarios) + " |"
              for key, text in COUNTERFACTUAL_ASSUMPTIONS.items()]
    from rtanalysis.model.spec import PARTS, STRUCTURES, parts_of

    srows = ["| structure | parts | latency families | CLI |", "|---|---|---|---|"]
    for s in STRUCTURES:
        parts = sorted(parts_of(s), key=list(PARTS).index)
        normal = any(PARTS[q].normal_only for q in parts)
        flags = " ".join(f"`--{q.replace('_', '-')}`" for q in parts) or "(none)"
        srows.append(f"| `{s}` | {', '.join(f'`{q}`' for q in parts) or '—'} | "
                     f"{'normal' if normal else 'normal, t, mixture'} | {flags} |")
    GENERATED.mkdir(exist_ok=True)
    for name, lines in (("priors.md", rows), ("assumptions.md", arows), ("structures.md", srows)):
        text = "\n".join(lines) + "\n"
        path = GENERATED / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


write_generated_tables()
exclude_patterns.append("_generated/*")

# ---- API reference ------------------------------------------------------------------------------
autosummary_generate = API_PAGE  # generated/ stubs (gitignored)
# a module's page lists the names it defines, not what it imports (dataclass, Path, ...); a package
# that re-exports its public names from submodules lists them in __all__, and where a module has
# __all__ its page documents exactly those names
autosummary_imported_members = False
autosummary_ignore_module_all = False
# class pages (docs/_templates/autosummary/class.rst): the class docstring (its fields are in its
# Parameters/Attributes sections) and the methods, without a table of the dataclass fields
templates_path = ["_templates"]
# a class that a package re-exports and the top level documents too: the package's page links to the
# top-level entry instead of describing the class a second time (two descriptions of one class are
# a duplicate-object warning)
autosummary_context = {"documented_as": {"rtanalysis.io.LoadResult": "rtanalysis.LoadResult"}}
autodoc_typehints = "none"  # numpydoc renders the signature; types are in the docstrings
# a class's page documents its methods; no "Bases:" line (leave "show-inheritance" out: autodoc reads any
# value given to a flag option, False included, as the flag set)
autodoc_default_options = {"members": True}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()
numpydoc_xref_param_type = False

intersphinx_mapping: dict = {}  # CI has no internet: no inventories are fetched

# ---- HTML ---------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"rtanalysis {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_depth": 3,
    "show_toc_level": 2,
    "navbar_align": "left",
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
    "secondary_sidebar_items": ["page-toc"],
}
html_show_sourcelink = False
html_last_updated_fmt = None

# ---- link checking (offline): `make docs-linkcheck` -------------------------------------------
# CI reaches only package registries, so external URLs cannot be checked there; internal links and
# cross-references are checked by the HTML build itself (-n -W).
linkcheck_ignore = [r"https?://.*"]
