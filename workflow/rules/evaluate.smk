# Stage 3: every trained model at every evaluation length N',
# including lengths never seen in training (the FCN is "not_applicable" there).
# Code: stsq/width/evaluate.py.


# The oracle: the best loss of the ground-truth family (W_pp = c I, V = v [I, 0]) at every N', for
# every (q, N) and each d_e of the stochastic-PE transformer; drawn in the figures, used by the claims.
rule oracle:
    output:
        result=PATHS.oracle(),
        provenance=sidecar(PATHS.oracle()),
    params:
        code=stage_code("oracle"),
        lengths=lengths_of,
        query=SWEEP["query"],
        task=SWEEP["task"],
        d_e=lambda w: " ".join(map(str, ORACLE_WIDTHS[w.q, w.N])),
        samples=ORACLE_SAMPLES,
    log:
        PATHS.log("oracle", "q~{q}_N~{N}"),
    benchmark:
        PATHS.benchmark("oracle", "q~{q}_N~{N}")
    group:
        packed_group("oracle", oracle_runtime_min)
    threads: 1
    resources:
        runtime=oracle_runtime_min,
    conda:
        "../../envs/train.yaml"
    shell:
        "python -m stsq oracle --q {wildcards.q} --N {wildcards.N} --d-e {params.d_e}"
        " --eval-lengths {params.lengths} --query {params.query} --task {params.task} --samples {params.samples}"
        " --device cpu --threads {threads}"
        " --out {output.result:q} > {log:q} 2>&1"


# One job per (q, N, d): every arch, budget, width and seed trained on its data (each job pays
# for starting torch once, which on a CPU costs more than scoring a small cell).
rule evaluate:
    input:
        models=lambda w: MODELS_OF[w.q, w.N, w.d],
        data=ancient(DATA_INDEX),
    output:
        result=PATHS.evaluation(),
        provenance=sidecar(PATHS.evaluation()),
    params:
        code=stage_code("evaluate"),
        data=DATA_SETTINGS,
        lengths=lengths_of,
        projection_samples=PROJECTION_SAMPLES,
    log:
        PATHS.log("evaluate", "q~{q}_N~{N}_d~{d}"),
    benchmark:
        PATHS.benchmark("evaluate", "q~{q}_N~{N}_d~{d}")
    group:
        packed_group("evaluate", evaluation_runtime_min)
    threads: 1
    resources:
        runtime=evaluation_runtime_min,
        mem_mb=evaluation_memory_mb,
    conda:
        "../../envs/train.yaml"
    shell:
        "python -m stsq evaluate --models {input.models:q} --data-index {input.data:q}"
        " --eval-lengths {params.lengths} --projection-samples {params.projection_samples}"
        " --threads {threads} --out {output.result:q} > {log:q} 2>&1"
