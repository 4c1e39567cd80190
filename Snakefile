# Reproduction of Wang, Wei, Hsu, Lee (ICML 2024), "Transformers Provably Learn
# Sparse Token Selection While Fully-Connected Nets Cannot" (docs/paper.md).
#
# Stages (one file each under workflow/rules/; the code they call lives in workflow/src/stsq/, whose folders
# docs/library.md maps, and runs as `python -m stsq <command>`):
#   setup.smk     config validation; the sweep's task and measure     -> stsq/config.py, core/measures.py
# The front half, by what the sweep's task measures (stsq.core.measures.MEASURES):
#   width.smk     a sweep of STS_q (its task measures widths): includes the five below
#   common.smk    the grid's cell records, cost, cluster requests     -> stsq/core/sweep.py, cluster/
#   data.smk      seed manifests and fixed evaluation sets per (q, N, d), every seed,
#                 and one index of them                               -> stsq/sts/data.py
#   train.smk     one job per (arch, q, N, d, steps, width) cell, seeds inside,
#                 longest cell first                                  -> stsq/width/train.py, stsq/sts/
#   evaluate.smk  every trained model of a (q, N, d) at every length N' (OOD
#                 included); the oracle per (q, N)                    -> stsq/width/evaluate.py, sts/oracle.py
#   figures.smk   the tidy table, the critical widths, the reach      -> stsq/width/
#   samples.smk   a sweep of sparse token retrieval (its task measures samples): samples to threshold per
#                 (arch, q, N, mode, heads) cell, the tables          -> stsq/samples/, stsq/retrieval/
# The back half, one for every measure:
#   report.smk    one rule per figure, the claims table, the report's
#                 front page                                          -> stsq/report/, stsq/claims/
# Names (archs, paths, columns, figures, claims) are defined once, in stsq/core/experiment.py.
# Outputs go to results/<sweep>/.  Choose the sweep with --config sweep=cpu.

from snakemake.utils import min_version

min_version("9.20")  # 9.16.3 to 9.19 read a plain `runtime: 30` as seconds, not minutes


configfile: "config.yaml"


# Validates the config (before any job runs; every error names the key).
include: "workflow/rules/setup.smk"


resource_scopes:
    gpu="local",  # training jobs ask for gpu=1: counted against --resources gpu=K locally, not on a cluster


# The chosen sweep's front half: its measure's rules (stsq.core.measures: width.smk for STS_q's sweeps, samples.smk for
# sparse token retrieval's), then the back half every measure shares: the figures, the claims table, the front
# page.
include: f"workflow/rules/{MEASURE.rules}"
include: "workflow/rules/report.smk"


# Every file the sweep's rules write (its ALL_TARGETS), so a deleted one is rebuilt with what depends on it, and
# nothing else.
rule all:
    default_target: True
    input:
        ALL_TARGETS,
        BACK_HALF_TARGETS,
