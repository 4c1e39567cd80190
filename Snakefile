# Reproduction of Wang, Wei, Hsu, Lee (ICML 2024), "Transformers Provably Learn
# Sparse Token Selection While Fully-Connected Nets Cannot".
#
# Stages (one file each under workflow/rules/; the code they call lives in
# workflow/src/stsq/ and runs as `python -m stsq <command>`):
#   data.smk      seed manifests and fixed evaluation sets per (q, N, seed),
#                 and one index of them per (q, N) (a local rule)             -> stsq/data.py, files.py
#   train.smk     one job per (arch, q, N, width) cell, every seed inside,
#                 longest cell first                                         -> stsq/train.py, step.py, models.py
#   evaluate.smk  every trained model at every length N' (OOD included)      -> stsq/evaluate.py
#   figures.smk   the tidy table, the figures, the claims table, the report  -> stsq/tables.py, figures.py, claims.py
# Outputs go to results/<sweep>/.  Choose the sweep with --config sweep=cpu.

from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


include: "workflow/rules/common.smk"


# Checked before any job runs: workflow/schemas/config.schema.yaml, then q <= N and
# the sweep's name; every error names the config key.
validate_config(config)


include: "workflow/rules/grid.smk"


report: "workflow/report/workflow.rst"


include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/figures.smk"


rule all:
    default_target: True
    input:
        rules.aggregate.output,
        rules.claims.output,
        FIGURE_FILES,
