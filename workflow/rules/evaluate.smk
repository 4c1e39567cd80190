# Stage 3: every trained model of a cell at every evaluation length N',
# including lengths never seen in training (the FCN is "not_applicable" there).
# Code: stsq/evaluate.py.


# The oracle: the best loss of the ground-truth family (W_pp = c I, V = v [I, 0]) at every N', for
# every (q, N, d_e) of the stochastic-PE transformer; drawn in the figures, used by the claims.
rule oracle:
    output:
        PATHS.oracle(),
    params:
        lengths=lengths_of,
        query=SWEEP["query"],
    log:
        PATHS.log("oracle", "q~{q}_N~{N}_d_e~{width}"),
    benchmark:
        PATHS.benchmark("oracle", "q~{q}_N~{N}_d_e~{width}")
    threads: 1
    conda:
        "../../envs/train.yaml"
    shell:
        "python -m stsq oracle --q {wildcards.q} --N {wildcards.N} --d-e {wildcards.width}"
        " --eval-lengths {params.lengths} --query {params.query} --device cpu --threads {threads}"
        " --out {output:q} > {log:q} 2>&1"


rule evaluate:
    input:
        models=rules.train.output.models,
        data=ancient(DATA_INDEX),
    output:
        PATHS.evaluation(),
    params:
        data=DATA_SETTINGS,
        lengths=lengths_of,
    log:
        PATHS.log("evaluate", ex.cell()),
    benchmark:
        PATHS.benchmark("evaluate", ex.cell())
    threads: 1
    conda:
        "../../envs/train.yaml"
    shell:
        "python -m stsq evaluate --models {input.models:q} --data-index {input.data:q}"
        " --eval-lengths {params.lengths}"
        " --threads {threads} --out {output:q} > {log:q} 2>&1"
