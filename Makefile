# Two commands: `make report` and `make test`. Both create .venv with Python >= 3.12 if missing and
# install the exact versions of requirements.lock (pyproject.toml only declares compatible ranges).
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# PyTensor's compiled-model cache survives between runs (first compile is slow, later ones are not)
export PYTENSOR_FLAGS ?= base_compiledir=$(CURDIR)/.cache/pytensor
export MPLBACKEND ?= Agg
# seed-determined results must not depend on BLAS thread scheduling
export OMP_NUM_THREADS ?= 1

.PHONY: install report test test-fast bench lock clean docs docs-install docs-linkcheck

LOCK := requirements.lock

install: $(STAMP)

$(STAMP): pyproject.toml $(LOCK)
	@test -x $(PY) || { PYBIN=$$(.ci/find-python) && echo "creating $(VENV) with $$PYBIN" && $$PYBIN -m venv $(VENV); }
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c requirements.lock -e ".[test,notebooks,inspect]"
	$(PY) -m ipykernel install --prefix $(VENV) --name python3 >/dev/null
	@touch $(STAMP)

report: install
	$(VENV)/bin/rtanalysis report data/example --out reports --figures figures

# the docs extras too: tests/test_docs_site.py builds the site (a fresh clone's `make test` alone had no sphinx)
test: install docs-install
	$(VENV)/bin/python -m pytest -n 2 --dist loadgroup -q -ra --durations=20

test-fast: install
	$(VENV)/bin/python -m pytest -n 2 --dist loadgroup -q -m "not slow"

# every speed/memory benchmark through the one runner; `make bench BENCH="load hash --quick"` for some,
# results appended to benchmarks/results/ with the machine (benchmarks/README.md)
bench: install
	$(PY) benchmarks/run.py $(BENCH)

# Re-resolve requirements.lock after editing pyproject.toml (versions already locked are kept;
# `make lock UPGRADE=--upgrade` moves everything to the newest versions the ranges admit). Then
# `make install`, run the tests, and copy the new versions into environment.yml.
lock: install
	$(PY) -m uv --version >/dev/null 2>&1 || $(PY) -m pip install --quiet uv
	$(PY) -m uv pip compile pyproject.toml --extra test --extra notebooks --extra inspect --extra docs --python-version 3.12 \
		--annotation-style line --custom-compile-command "make lock" $(UPGRADE) -o $(LOCK)

# The documentation site: docs/_build/html/index.html. Warnings are errors (-W), and so is every
# internal reference that does not resolve (-n). The gallery's notebooks are executed with the
# package's defaults and their outputs cached (docs/_build/.jupyter_cache): a rebuild re-executes only
# a notebook whose code changed. Switches (docs/conf.py): RTANALYSIS_DOCS_EXECUTE=off|cache|force,
# RTANALYSIS_DOCS_API=0 (leave the API reference out), RTANALYSIS_DOCS_DRAWS/_CHAINS.
DOCS_STAMP := $(VENV)/.docs-installed
SPHINXOPTS ?=

$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install --quiet -c requirements.lock -e ".[docs]"
	@touch $(DOCS_STAMP)

docs-install: $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	@rm -rf docs/generated  # autosummary's stubs: made anew, so a renamed module leaves none behind
	$(PY) -m sphinx -W --keep-going -n -b html $(SPHINXOPTS) docs docs/_build/html
	@echo "open docs/_build/html/index.html"

# internal links only: CI reaches no site but the package registries, so conf.py ignores http(s) URLs
docs-linkcheck: $(DOCS_STAMP)
	RTANALYSIS_DOCS_EXECUTE=off $(PY) -m sphinx -W --keep-going -n -b linkcheck $(SPHINXOPTS) docs docs/_build/linkcheck

clean:
	rm -rf $(VENV) .cache reports docs/_build docs/_generated docs/generated docs/gallery/*.ipynb
