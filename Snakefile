# Reproduction of Wang, Wei, Hsu, Lee (ICML 2024), "Transformers Provably Learn
# Sparse Token Selection While Fully-Connected Nets Cannot" (docs/paper.md).
#
# Stages (one file each under workflow/rules/; the code they call lives in
# workflow/src/stsq/ and runs as `python -m stsq <command>`):
#   common.smk    config validation, the grid's cell records, cost, cluster   -> stsq/config.py, sweep.py,
#                 requests                                          cost.py, cluster.py, experiment.py
#   data.smk      seed manifests and fixed evaluation sets per (q, N, d), every seed,
#                 and one index of them                                         -> stsq/data.py, files.py
#   train.smk     one job per (arch, q, N, d, steps, width) cell, seeds inside,
#                 longest cell first                                         -> stsq/train.py, step.py, models.py
#   evaluate.smk  every trained model of a (q, N, d) at every length N' (OOD  -> stsq/evaluate.py, oracle.py
#                 included); the oracle per (q, N)
#   figures.smk   the tidy table, the critical widths, one rule per figure,
#                 the claims table                                           -> stsq/tables.py, critical.py,
#                                                                               figures.py, claims.py
# Names (archs, paths, columns, figures, claims) are defined once, in stsq/experiment.py.
# Outputs go to results/<sweep>/.  Choose the sweep with --config sweep=cpu.

from snakemake.utils import min_version

min_version("9.20")  # 9.16.3 to 9.19 read a plain `runtime: 30` as seconds, not minutes


configfile: "config.yaml"


# Validates the config (before any job runs; every error names the key), then the grid.
include: "workflow/rules/common.smk"


# The report's front page, written by rule landing from this sweep's claims table (stsq.report).
report: os.path.abspath(PATHS.landing)  # where the results are (the working directory), not the Snakefile


resource_scopes:
    gpu="local",  # training jobs ask for gpu=1: counted against --resources gpu=K locally, not on a cluster


include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/pilot.smk"


# Every file a rule writes is a target, so a deleted one (a model, an evaluation set) is rebuilt
# with what depends on it, and nothing else.
rule all:
    default_target: True
    input:
        rules.aggregate.output,
        rules.claims.output,
        rules.critical.output,
        rules.encodings.output,
        rules.reach.output,
        rules.landing.output,
        rules.pilot.output if PILOT else [],
        FIGURE_FILES,
        seed_files(ex.MODEL),
        all_eval_sets(),
