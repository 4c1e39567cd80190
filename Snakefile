# Reproduction of Wang, Wei, Hsu, Lee (ICML 2024), "Transformers Provably Learn
# Sparse Token Selection While Fully-Connected Nets Cannot" (docs/paper.md).
#
# Stages (one file each under workflow/rules/; the code they call lives in
# workflow/src/stsq/ and runs as `python -m stsq <command>`):
#   setup.smk     config validation                                          -> stsq/config.py
#   width.smk     a sweep of STS_q (its task measures widths): the rules below, and `all`
#   common.smk    the grid's cell records, cost, cluster                      -> stsq/sweep.py,
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
#   samples.smk   a sweep of sparse token retrieval (its task measures samples): samples to threshold per
#                 (arch, q, N, mode, heads) cell, the tables, the claims, the figure, the report
#                                                           -> stsq/samples.py, samples_table.py, claims_retrieval.py
# Names (archs, paths, columns, figures, claims) are defined once, in stsq/experiment.py.
# Outputs go to results/<sweep>/.  Choose the sweep with --config sweep=cpu.

from snakemake.utils import min_version

min_version("9.20")  # 9.16.3 to 9.19 read a plain `runtime: 30` as seconds, not minutes


configfile: "config.yaml"


# Validates the config (before any job runs; every error names the key).
include: "workflow/rules/setup.smk"


resource_scopes:
    gpu="local",  # training jobs ask for gpu=1: counted against --resources gpu=K locally, not on a cluster


# The chosen sweep's rules: its task measures samples (docs/retrieval.md) or widths (STS_q's).
if measures_samples(config["sweeps"][config["sweep"]]):

    include: "workflow/rules/samples.smk"

else:

    include: "workflow/rules/width.smk"


# Every file the sweep's rules write (its ALL_TARGETS), so a deleted one is rebuilt with what depends on it, and
# nothing else.
rule all:
    default_target: True
    input:
        ALL_TARGETS,
