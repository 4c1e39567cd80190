# Stage 3: every trained model of a cell at every evaluation length N',
# including lengths never seen in training (the FCN is "not_applicable" there).
# Code: stsq/evaluate.py.


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
