# The back half, shared by every measure (stsq.core.measures): the figures, the claims table and the report's front
# page.  The measure's own rule file (width.smk, samples.smk) sets what they read:
#   DRAWN              the figures the sweep draws (stsq.core.figure_catalog, its measure's records), in reading order
#   FIGURE_INPUT       the named inputs of a figure rule: the tables its measure's figures draw from
#   FIGURE_ARGS        the figure command's arguments beyond the table (the oracle, the positions' range)
#   CLAIMS_INPUT       the named inputs of the claims rule: its table (and the oracle table where its claims read
#                      one), with their sidecars
#   CLAIMS_ORACLE_ARG  the claims command's --oracle argument ("" where its claims read no oracle)
#   CLAIMS_CAPTION     the claims page's caption in the report (workflow/report/)
#   PROVENANCE_TABLES  the tables whose sidecars the sweep's provenance.json gathers, by name (the front page reads
#                      them by name: stsq.core.measures, ``landing``)
# Code: stsq/report/figures.py and figures_retrieval.py (the drawings), stsq/claims/judge.py (the judge) and
# table.py (the pages), stsq/report/pages.py and retrieval.py (the captions and the front pages).


# The report's front page, written by rule landing from this sweep's claims table.
report: os.path.abspath(PATHS.landing)  # where the results are (the working directory), not the Snakefile


# One rule per figure of the sweep's measure, fig_<name>, writing figures/<name>.{pdf,png} and its caption, so that
# `snakemake fig_length` (or naming its file) rebuilds that figure alone; `all` asks for the figures it draws.
for name in catalog.figures_of(MEASURE.name, TASK):

    rule:
        name:
            catalog.FIGURE_RULE.format(name=name)
        input:
            **FIGURE_INPUT,
            claims=PATHS.claims("csv"),
        output:
            **figure_output(name),
        params:
            code=stage_code("figure", name),  # this figure's drawing and caption, not the others' (stsq.provenance.codehash)
            name=name,
            args=FIGURE_ARGS,
            sweep=SWEEP_NAME,
            task=TASK,
        log:
            PATHS.log("figures", name),
        benchmark:
            PATHS.benchmark("analysis", catalog.FIGURE_RULE.format(name=name))
        conda:
            "../../envs/analysis.yaml"
        shell:
            "python -m stsq figure {params.name} --task {params.task} --table {input.table:q} {params.args}"
            " --out {output.pdf:q} {output.png:q} --claims {input.claims:q} --caption {output.caption:q}"
            " --sweep {params.sweep} > {log:q} 2>&1"


FIGURE_FILES = [f for name in DRAWN for f in (*(PATHS.figure(name, ext) for ext in catalog.FIGURE_FORMATS),
                                              PATHS.caption(name))]


rule claims:
    input:
        **CLAIMS_INPUT,
    output:
        csv=PATHS.claims("csv"),
        html=report(PATHS.claims("html"), caption=CLAIMS_CAPTION, category="Claims", labels={"table": "claims"}),
        md=PATHS.claims("md"),
        provenance=sidecar(PATHS.claims("csv")),
    params:
        code=stage_code("claims"),
        task=TASK,
        oracle=CLAIMS_ORACLE_ARG,
    log:
        PATHS.log("claims"),
    benchmark:
        PATHS.benchmark("analysis", "claims")
    conda:
        "../../envs/analysis.yaml"
    shell:
        "python -m stsq claims --table {input.table:q} {params.oracle} --out-csv {output.csv:q}"
        " --out-html {output.html:q} --out-md {output.md:q} --task {params.task} > {log:q} 2>&1"


# The report's front page: the sweep's grid, the tally, each FAIL and NOT TESTED, its measure's section (the
# figures, or the slopes), the provenance.
rule landing:
    input:
        claims=rules.claims.output.csv,
        tables=list(PROVENANCE_TABLES.values()),
        sidecars=[sidecar(t) for t in PROVENANCE_TABLES.values()],
    output:
        landing=PATHS.landing,
        provenance=PATHS.provenance,
    params:
        code=stage_code("landing"),
        names=list(PROVENANCE_TABLES),
        sweep=SWEEP_NAME,
        sweep_json=json.dumps(SWEEP, sort_keys=True),
    log:
        PATHS.log("landing"),
    benchmark:
        PATHS.benchmark("analysis", "landing")
    conda:
        "../../envs/analysis.yaml"
    shell:
        "python -m stsq landing --claims {input.claims:q} --sweep {params.sweep} --sweep-json {params.sweep_json:q}"
        " --out {output.landing:q} --tables {input.tables:q} --table-names {params.names}"
        " --provenance-out {output.provenance:q} > {log:q} 2>&1"


# What the back half writes: targets of `all` (the Snakefile).
BACK_HALF_TARGETS = [rules.claims.output, rules.landing.output, FIGURE_FILES]
