# Stage 4: one tidy table, the widths needed, and what the back half (report.smk: the figures, the claims table,
# the front page) reads.  Code: stsq/width/tables.py, critical.py, reach.py.


# The tables whose sidecars the sweep's provenance.json gathers (stsq.provenance.sidecars.sweep_summary).
PROVENANCE_TABLES = {"metrics": PATHS.table, "oracle": PATHS.oracle_table, "critical": PATHS.critical,
                     "encodings": PATHS.encodings, "reach": PATHS.reach, "claims": PATHS.claims("csv")}
# The back half's claims rule (claims.smk) reads the tidy table and the oracle table, each with its sidecars.
CLAIMS_INPUT = {"table": PATHS.table, "checksum": PATHS.checksum, "oracle": PATHS.oracle_table,
                "oracle_checksum": f"{PATHS.oracle_table}.sha256", "provenance": sidecar(PATHS.table),
                "oracle_provenance": sidecar(PATHS.oracle_table)}
CLAIMS_ORACLE_ARG = f"--oracle {shlex.quote(PATHS.oracle_table)}"
CLAIMS_CAPTION = "../report/claims.rst"
# ... and its figure rules (report.smk) the same tables, the claims table, and the positions' range
FIGURE_INPUT = CLAIMS_INPUT
FIGURE_ARGS = f"--oracle {shlex.quote(PATHS.oracle_table)} --position-range {POSITION_RANGE}"


rule aggregate:
    input:
        evals=[PATHS.evaluation(q, N, d) for q, N, d in QND],
        curves=seed_files(ex.CURVE),
        oracles=ORACLE_FILES,
        provenance=[sidecar(p) for p in [*(PATHS.evaluation(q, N, d) for q, N, d in QND), *seed_files(ex.MODEL),
                                         *ORACLE_FILES]],
    output:
        table=PATHS.table,
        checksum=PATHS.checksum,
        oracle=PATHS.oracle_table,
        oracle_checksum=f"{PATHS.oracle_table}.sha256",
        provenance=sidecar(PATHS.table),
        oracle_provenance=sidecar(PATHS.oracle_table),
    log:
        PATHS.log("aggregate"),
    params:
        code=stage_code("aggregate"),
        task=TASK,
    benchmark:
        PATHS.benchmark("analysis", "aggregate")
    conda:
        "../../envs/analysis.yaml"
    shell:
        "python -m stsq aggregate --task {params.task} --evals {input.evals:q} --curves {input.curves:q}"
        " --oracles {input.oracles:q} --out {output.table:q} --oracle-out {output.oracle:q} > {log:q} 2>&1"


# The width each model needs, per seed and target loss, interpolated between grid widths (stsq.width.critical).
rule critical:
    input:
        table=rules.aggregate.output.table,
        provenance=rules.aggregate.output.provenance,
    output:
        result=PATHS.critical,
        provenance=sidecar(PATHS.critical),
    params:
        code=stage_code("critical"),
    log:
        PATHS.log("critical"),
    benchmark:
        PATHS.benchmark("analysis", "critical")
    conda:
        "../../envs/analysis.yaml"
    shell:
        "python -m stsq critical --table {input.table:q} --out {output.result:q} > {log:q} 2>&1"


# Every positional encoding's loss at every N' over seeds, its loss at N and its attention on y (stsq.width.tables).
rule encodings:
    input:
        table=rules.aggregate.output.table,
        provenance=rules.aggregate.output.provenance,
    output:
        result=PATHS.encodings,
        provenance=sidecar(PATHS.encodings),
    params:
        code=stage_code("encodings"),
        position_range=POSITION_RANGE,
    log:
        PATHS.log("encodings"),
    benchmark:
        PATHS.benchmark("analysis", "encodings")
    conda:
        "../../envs/analysis.yaml"
    shell:
        "python -m stsq encodings --table {input.table:q} --position-range {params.position_range}"
        " --out {output.result:q} > {log:q} 2>&1"


# How far each transformer generalizes: the longest N' within the bound, per model and checkpoint (stsq.width.reach).
rule reach:
    input:
        **rules.aggregate.output,
    output:
        result=PATHS.reach,
        provenance=sidecar(PATHS.reach),
    params:
        code=stage_code("reach"),
    log:
        PATHS.log("reach"),
    benchmark:
        PATHS.benchmark("analysis", "reach")
    conda:
        "../../envs/analysis.yaml"
    shell:
        "python -m stsq reach --table {input.table:q} --oracle {input.oracle:q} --out {output.result:q} > {log:q} 2>&1"
