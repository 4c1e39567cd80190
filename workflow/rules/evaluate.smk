# Stage 3: every trained model of a cell at every evaluation length N',
# including lengths never seen in training (the FCN is "not_applicable" there).
# Code: stsq/evaluate.py.


rule evaluate:
    input:
        models=rules.train.output.models,
        manifests=manifests,
    output:
        f"{R}/eval/{CELL}.csv",
    params:
        models_dir=lambda w: f"{R}/models/{GRID.wildcard_pattern.format(**w)}",
        data_dir=data_dir,
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
        "python -m stsq evaluate --models-dir {params.models_dir:q}"
        " --data-dir {params.data_dir:q} --seeds {params.seeds} --eval-lengths {params.lengths}"
        " --threads {threads} --out {output:q} > {log:q} 2>&1"
