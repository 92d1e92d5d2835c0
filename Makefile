# CRS-Bench: one virtual environment, two main targets (see README.md).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

REMOTE ?= origin

.PHONY: install test test-quick book pdf publish bench clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "make: $(PYTHON) not found (set PYTHON=...)"; exit 2; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch is pinned to the CPU build that pip finds locally; see docs on torchvision.
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

## test: the whole test suite (unit, property-based, notebooks on the quick profile, book build, browser)
test: $(STAMP)
	$(BIN)/python -m pytest -q

## test-quick: unit tests only (no end-to-end runs, no book, no browser)
test-quick: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow and not browser"

## book: run the default profile (cached), execute every notebook, render _build/html
## (PROFILE=medmnist-cpu: the real-data edition, beside its run; its files must be in place, see book/own-data.md)
PROFILE ?= default
book: $(STAMP)
	$(BIN)/crsbench book --profile $(PROFILE) --jobs 2

## pdf: the book as one PDF in _build/pdf (builds the book first; needs chromium)
pdf: book
	$(BIN)/crsbench pdf

## publish: push the built _build/html to the gh-pages branch of REMOTE (default origin) with ghp-import
publish: $(STAMP)
	$(BIN)/crsbench publish --remote "$(REMOTE)"

bench: $(STAMP)
	for script in benchmarks/bench_*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf _build
