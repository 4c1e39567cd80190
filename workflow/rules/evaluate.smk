# Stage 3: every trained model of a cell at every evaluation length N',
# including lengths never seen in training (the FCN is "not_applicable" there).
# Code: stsq/evaluate.py.


rule evaluate:
    input:
        models=rules.train.output.models,
        data=DATA_INDEX,
    output:
        f"{R}/eval/{CELL}.csv",
    params:
        seeds=" ".join(map(str, SEEDS)),
        lengths=lengths_of,
    log:
        f"{R}/logs/evaluate/{CELL}.log",
    benchmark:
        f"{R}/benchmarks/evaluate/{CELL}.tsv"
    threads: 1
    conda:
        "../../envs/train.yaml"
    shell:
        "python -m stsq evaluate --models-dir \"$(dirname \"$(dirname {input.models[0]:q})\")\""
        " --data-dir \"$(dirname {input.data:q})\" --seeds {params.seeds} --eval-lengths {params.lengths}"
        " --threads {threads} --out {output:q} > {log:q} 2>&1"
