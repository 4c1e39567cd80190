# The two commands of the README:
#   make run   set up .venv, run the `cpu` sweep (figures, claims table) and build the report
#   make test  set up .venv and run the whole test suite
PYTHON ?= python3
CORES  ?= all
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
SNAKEMAKE := $(BIN)/snakemake

.PHONY: install run report test test-fast bench lint clean-cpu

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(SNAKEMAKE) --cores $(CORES) --config sweep=cpu
	$(MAKE) report

report: $(STAMP)
	$(SNAKEMAKE) --config sweep=cpu --report results/cpu/report.html

test: $(STAMP)
	$(BIN)/pytest

test-fast: $(STAMP)
	$(BIN)/pytest -m "not slow and not slurm"

bench: $(STAMP)
	PYTHONPATH=workflow/src $(BIN)/python -m stsq.bench $(BENCH_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check workflow/src tests
	$(SNAKEMAKE) --lint
