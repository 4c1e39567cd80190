# The two commands of the README:
#   make run   set up .venv, run the `cpu` sweep (figures, claims table) and build the report
#   make budget   the FCN at two sample budgets (its own sweep and claims table)
#   make encodings   the positional encodings practitioners use against the paper's (its own sweep)
#   make separation   the scaling claims against their rivals (its own sweep and report)
#   make paper-slices   two slices of the `paper` sweep at its own settings (docs/paper-slices.yaml)
#   make test  set up .venv and run the whole test suite
#   make gpu-check   on a GPU machine: the device check, one file of numbers (results/gpu-check.txt)
PYTHON ?= python3
CORES  ?= all
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
SNAKEMAKE := $(BIN)/snakemake
# The rules call `python -m stsq`: the venv's python must come first on PATH (as if activated).
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: install run budget encodings separation paper-slices report test test-fast bench gpu-check lint

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	touch $(STAMP)

install: $(STAMP)

REPORT := results/cpu/report.html
# A sweep's numbers in docs/claims.md, rewritten from its tables after its run (stsq.quote): the doc
# quotes the last run, never a hand-typed number.
QUOTE := PYTHONPATH=workflow/src $(BIN)/python -m stsq quote

run: $(STAMP)
	$(SNAKEMAKE) --cores $(CORES) --config sweep=cpu
	$(MAKE) $(REPORT)
	$(QUOTE) --sweep cpu --parts digest

report: $(REPORT)

# The FCN's needed width at two sample budgets (the `budget` sweep of config.yaml): how much of the
# need is samples and how much is width (docs/claims.md, fcn_budget), with its report.
budget: $(STAMP)
	$(SNAKEMAKE) --cores $(CORES) --config sweep=budget
	$(SNAKEMAKE) --config sweep=budget --report results/budget/report.html
	$(QUOTE) --sweep budget --parts digest needs

# The separation told apart from the laws next to it (the `separation` sweep of config.yaml): the
# transformer at N = 8 .. 128, q in {1, 2, 4}, d x4, the FCN on a wide grid below and above N d; the
# claims tf_scaling and tf_d_free need it (docs/claims.md, "The rivals"), with its report.
separation: $(STAMP)
	$(SNAKEMAKE) --cores $(CORES) --config sweep=separation
	$(SNAKEMAKE) --config sweep=separation --report results/separation/report.html
	$(QUOTE) --sweep separation --parts digest needs

# The learned, sinusoidal and randomized positional encodings against the paper's stochastic and fixed
# ones at unseen lengths (the `encodings` sweep; docs/claims.md, "The positional encodings, compared"),
# with its report.
encodings: $(STAMP)
	$(SNAKEMAKE) --cores $(CORES) --config sweep=encodings
	$(SNAKEMAKE) --config sweep=encodings --report results/encodings/report.html
	$(QUOTE) --sweep encodings --parts digest losses

# Two slices of the `paper` sweep with its own settings (steps, learning rates, N' up to 32N), one seed, that
# fit on 2 cores (about 2 and 11 min; docs/claims.md, "At paper scale").
SLICES := --configfile docs/paper-slices.yaml --config
paper-slices: $(STAMP)
	$(SNAKEMAKE) --cores $(CORES) $(SLICES) sweep=paper_fcn
	$(QUOTE) --sweep paper_fcn --parts digest losses
	$(SNAKEMAKE) --cores $(CORES) $(SLICES) sweep=paper_q4
	$(QUOTE) --sweep paper_q4 --parts digest losses

# Rebuilt only when what it shows changed, so a second `make run` does nothing.
$(REPORT): $(STAMP) results/cpu/tables/metrics.csv results/cpu/tables/claims.html $(wildcard results/cpu/figures/*.png) \
           $(wildcard results/cpu/report/*.rst)
	$(SNAKEMAKE) --config sweep=cpu --report $@

test: $(STAMP)
	$(BIN)/pytest

test-fast: $(STAMP)
	$(BIN)/pytest -m "not slow and not slurm"

bench: $(STAMP)
	PYTHONPATH=workflow/src $(BIN)/python benchmarks/bench.py $(BENCH_ARGS)

# The device check, once, on a machine with a GPU: benchmark part g, determinism on the device, the `paper`
# pilot and a paper-scale slice through the workflow, into one file of numbers (benchmarks/gpu_check.py;
# GPU_CHECK_ARGS=--tiny runs it on the CPU at small sizes, as tests/test_gpu_check.py does).
GPU_CHECK_ARGS ?=
gpu-check: $(STAMP)
	PYTHONPATH=workflow/src $(BIN)/python benchmarks/gpu_check.py $(GPU_CHECK_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check workflow/src benchmarks tests
	$(SNAKEMAKE) --lint
