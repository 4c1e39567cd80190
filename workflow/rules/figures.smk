# Stage 4: one tidy table, the figures (PDF + PNG), the claims table and the
# report.  Each figure has its own rule, so `snakemake fig_length` (or naming
# its file) rebuilds that figure alone.  Code: stsq/tables.py, figures.py, claims.py.

TABLE = f"{R}/tables/metrics.csv"


rule aggregate:
    input:
        evals=expand(f"{R}/eval/{{cell}}.csv", cell=CELLS),
        curves=cell_outputs("curve.csv"),
    output:
        table=TABLE,
        checksum=f"{TABLE}.sha256",
    log:
        f"{R}/logs/aggregate.log",
    conda:
        "../../envs/analysis.yaml"
    shell:
        "python -m stsq aggregate --evals {input.evals:q} --curves {input.curves:q}"
        " --out {output.table:q} > {log:q} 2>&1"


FIGURE_SHELL = (
    "python -m stsq figure {params.kind} --table {input.table:q}"
    " --out {output.pdf:q} {output.png:q} > {log:q} 2>&1"
)


rule fig_training:
    input:
        **rules.aggregate.output,
    output:
        **figure_rule_output("training"),
    params:
        kind="training",
    log:
        f"{R}/logs/figures/training.log",
    conda:
        "../../envs/analysis.yaml"
    shell:
        FIGURE_SHELL


rule fig_separation:
    input:
        **rules.aggregate.output,
    output:
        **figure_rule_output("separation"),
    params:
        kind="separation",
    log:
        f"{R}/logs/figures/separation.log",
    conda:
        "../../envs/analysis.yaml"
    shell:
        FIGURE_SHELL


rule fig_length:
    input:
        **rules.aggregate.output,
    output:
        **figure_rule_output("length_generalization"),
    params:
        kind="length",
    log:
        f"{R}/logs/figures/length_generalization.log",
    conda:
        "../../envs/analysis.yaml"
    shell:
        FIGURE_SHELL


rule fig_mechanism:
    input:
        **rules.aggregate.output,
    output:
        **figure_rule_output("mechanism"),
    params:
        kind="mechanism",
    log:
        f"{R}/logs/figures/mechanism.log",
    conda:
        "../../envs/analysis.yaml"
    shell:
        FIGURE_SHELL


rule claims:
    input:
        **rules.aggregate.output,
    output:
        csv=f"{R}/tables/claims.csv",
        html=report(
            f"{R}/tables/claims.html",
            caption="../report/claims.rst",
            category="Claims",
            labels={"table": "claims"},
        ),
    log:
        f"{R}/logs/claims.log",
    conda:
        "../../envs/analysis.yaml"
    shell:
        "python -m stsq claims --table {input.table:q}"
        " --out-csv {output.csv:q} --out-html {output.html:q} > {log:q} 2>&1"


FIGURE_FILES = [
    f
    for r in (rules.fig_training, rules.fig_separation, rules.fig_length, rules.fig_mechanism)
    for f in r.output
]
