# memvault: `make serve` runs it on the embedded default; `make test` runs every test.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev

.PHONY: serve test lint typecheck pytest bench install clean package-check lock dashboard

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "memvault needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

## The web dashboard (dashboard/, TypeScript + Vite), built into the package it is served
## from (layers/core/memvault/dashboard/static/, not committed). Needs Node 20+ and npm;
## rebuilt only when its sources change.
DASHBOARD_OUT := layers/core/memvault/dashboard/static/index.html
DASHBOARD_SRC := $(shell find dashboard/src -type f 2>/dev/null) dashboard/index.html \
	$(wildcard dashboard/public/*) dashboard/vite.config.ts dashboard/tsconfig.json dashboard/package.json

dashboard/node_modules/.installed: dashboard/package-lock.json
	@command -v npm >/dev/null || { echo "the dashboard needs Node 20+ and npm (https://nodejs.org)"; exit 1; }
	cd dashboard && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

$(DASHBOARD_OUT): dashboard/node_modules/.installed $(DASHBOARD_SRC)
	cd dashboard && npm run --silent build

dashboard: $(DASHBOARD_OUT)

## Pin what is installed now (after changing pyproject.toml's dependencies and installing),
## then lock each Lambda layer to those versions with the wheels' hashes (layers/core/locks/).
lock: | $(BIN)/python
	{ sed -n '1,3p' constraints.txt; $(BIN)/python -m pip freeze --exclude-editable | grep -v '^pip=='; } > constraints.txt.new
	mv constraints.txt.new constraints.txt
	$(BIN)/python scripts/lock_layers.py

## Run memvault on http://127.0.0.1:8080 (SQLite under $$XDG_DATA_HOME/memvault, or MEMVAULT_DATA_DIR).
serve: $(STAMP) dashboard
	$(BIN)/memvault serve

## Lint, type-check and run every test (starts and stops a local OpenSearch node for the
## AWS tier; needs Java 17+ and Maven for that tier, which is skipped with a note without).
test: lint typecheck dashboard pytest

lint: $(STAMP)
	$(BIN)/ruff check layers tests bench functions
	$(BIN)/ruff format --check layers tests bench functions

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	bash scripts/test.sh -q

## Benchmarks: figures and ratios, printed (never asserted).
bench: $(STAMP)
	$(BIN)/python bench/run.py

## Build the Lambda layers as `sam build` does (hash-locked wheels, python3.12 bytecode;
## LAYER_ARCH=arm64 for Graviton) and print each function's unzipped size (Lambda's limit:
## 250 MB) and cold-start import time from them; with MEMVAULT_TEST_OPENSEARCH_URL set,
## also each function's handler on events/ from its own layers against that node.
package-check: $(STAMP) dashboard
	$(BIN)/python scripts/package_check.py --arch $${LAYER_ARCH:-x86_64} --import-times 5 \
		$${MEMVAULT_TEST_OPENSEARCH_URL:+--search $$MEMVAULT_TEST_OPENSEARCH_URL}

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache dashboard/node_modules layers/core/memvault/dashboard/static
