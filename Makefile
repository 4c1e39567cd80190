# The two commands of the README:
#   make run   set up .venv, run the `cpu` sweep (figures, claims table) and build the report
#   make budget   the FCN at two sample budgets (its own sweep and claims table)
#   make encodings   the positional encodings practitioners use against the paper's (its own sweep)
#   make separation   the scaling claims against their rivals (its own sweep and report)
#   make qstr   sparse token retrieval: samples to threshold against N, per family (its own sweep and report)
#   make lookup, make dyck   index lookup, bounded Dyck: the width each family needs against N (a sweep and report each)
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

.PHONY: install run budget encodings separation qstr lookup dyck paper-slices report test test-fast bench gpu-check lint reference \
        docs

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	touch $(STAMP)

install: $(STAMP)

REPORT := results/cpu/report.html
STSQ := PYTHONPATH=workflow/src $(BIN)/python -m stsq
# A run against the committed reference of its sweep (reference/<sweep>/, stsq.report.reference): verdicts, numbers
# within the stated tolerance, the provenance of both; exits 1 where they differ.  No target writes a tracked file.
COMPARE := $(STSQ) compare

run: $(STAMP)
	$(SNAKEMAKE) --cores $(CORES) --config sweep=cpu
	$(MAKE) $(REPORT)
	$(COMPARE) results/cpu reference/cpu

report: $(REPORT)

# The FCN's needed width at two sample budgets (the `budget` sweep of config.yaml): how much of the
# need is samples and how much is width (docs/claims.md, fcn_budget), with its report.
budget: $(STAMP)
	$(SNAKEMAKE) --cores $(CORES) --config sweep=budget
	$(SNAKEMAKE) --config sweep=budget --report results/budget/report.html
	$(COMPARE) results/budget reference/budget

# The separation told apart from the laws next to it (the `separation` sweep of config.yaml): the
# transformer at N = 8 .. 128, q in {1, 2, 4}, d x4, the FCN on a wide grid below and above N d; the
# claims tf_scaling and tf_d_free need it (docs/claims.md, "The rivals"), with its report.
separation: $(STAMP)
	$(SNAKEMAKE) --cores $(CORES) --config sweep=separation
	$(SNAKEMAKE) --config sweep=separation --report results/separation/report.html
	$(COMPARE) results/separation reference/separation

# The learned, sinusoidal and randomized positional encodings against the paper's stochastic and fixed
# ones at unseen lengths (the `encodings` sweep; docs/claims.md, "The positional encodings, compared"),
# with its report.
encodings: $(STAMP)
	$(SNAKEMAKE) --cores $(CORES) --config sweep=encodings
	$(SNAKEMAKE) --config sweep=encodings --report results/encodings/report.html
	$(COMPARE) results/encodings reference/encodings

# The second separation result: sparse token retrieval (the `qstr` sweep; docs/retrieval.md), the samples
# each family needs against N, with its report.
qstr: $(STAMP)
	$(SNAKEMAKE) --cores $(CORES) --config sweep=qstr
	$(SNAKEMAKE) --config sweep=qstr --report results/qstr/report.html
	$(COMPARE) results/qstr reference/qstr

# The third separation result, both directions: index lookup and bounded Dyck (the `lookup` and `dyck` sweeps;
# docs/separations.md), the width the one-layer transformer and the GRU need against N, a report each.
define run_sweep
	$(SNAKEMAKE) --cores $(CORES) --config sweep=$(1)
	$(SNAKEMAKE) --config sweep=$(1) --report results/$(1)/report.html
	$(COMPARE) results/$(1) reference/$(1)
endef
lookup: $(STAMP)
	$(call run_sweep,lookup)
dyck: $(STAMP)
	$(call run_sweep,dyck)

# Two slices of the `paper` sweep with its own settings (steps, learning rates, N' up to 32N), one seed, that
# fit on 2 cores (about 2 and 11 min; docs/claims.md, "At paper scale").
SLICES := --configfile docs/paper-slices.yaml --config
paper-slices: $(STAMP)
	$(SNAKEMAKE) --cores $(CORES) $(SLICES) sweep=paper_fcn
	$(SNAKEMAKE) --cores $(CORES) $(SLICES) sweep=paper_q4
	$(COMPARE) results/paper_fcn reference/paper_fcn
	$(COMPARE) results/paper_q4 reference/paper_q4

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

# For maintainers, from a clean checkout at a clean commit, after the sweeps' targets: freeze each finished run into
# reference/<sweep>/ (its small tables and provenance.json) and write docs/claims.md's blocks from the references.
# These two are the only targets that write tracked files; commit what they write (reference/README.md).
REFERENCE_SWEEPS := cpu budget encodings separation paper_fcn paper_q4 qstr qstr_theirs lookup dyck
reference: $(STAMP)
	for s in $(REFERENCE_SWEEPS); do test ! -d results/$$s || $(STSQ) freeze results/$$s reference/$$s || exit 1; done
	$(MAKE) docs

# docs/claims.md's (and docs/retrieval.md's) generated blocks, each from its sweep's reference (stsq.report.quote; tests/test_reference.py checks them)
docs: $(STAMP)
	$(STSQ) quote --sweep cpu --tables reference/cpu --parts digest
	$(STSQ) quote --sweep budget --tables reference/budget --parts digest needs
	$(STSQ) quote --sweep separation --tables reference/separation --parts digest needs
	$(STSQ) quote --sweep encodings --tables reference/encodings --parts digest losses
	$(STSQ) quote --sweep paper_fcn --tables reference/paper_fcn --parts digest losses
	$(STSQ) quote --sweep paper_q4 --tables reference/paper_q4 --parts digest losses
	$(STSQ) quote --sweep qstr --tables reference/qstr --parts digest samples slopes authors --doc docs/retrieval.md
	$(STSQ) quote --sweep lookup --tables reference/lookup --parts digest needs --doc docs/separations.md
	$(STSQ) quote --sweep dyck --tables reference/dyck --parts digest needs --doc docs/separations.md
	$(BIN)/python benchmarks/needs_side_by_side.py reference/lookup reference/dyck --out docs/separations_needs.png
