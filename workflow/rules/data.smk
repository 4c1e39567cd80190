# Stage 1: seed manifests and the fixed evaluation sets of every (q, N, seed),
# shared by every arch and width of that (q, N).  Code: stsq/data.py.


rule eval_sets:
    output:
        f"{R}/data/q~{{q}}/N~{{N}}/seed~{{seed}}/manifest.json",
    params:
        lengths=lengths_of,
        n_eval=SWEEP["n_eval"],
        d=SWEEP["d"],
    log:
        f"{R}/logs/eval_sets/q~{{q}}_N~{{N}}_seed~{{seed}}.log",
    benchmark:
        f"{R}/benchmarks/eval_sets/q~{{q}}_N~{{N}}_seed~{{seed}}.tsv"
    threads: 1
    conda:
        "../../envs/train.yaml"
    shell:
        "python -m stsq data --q {wildcards.q} --N {wildcards.N} --d {params.d}"
        " --seed {wildcards.seed} --eval-lengths {params.lengths} --n-eval {params.n_eval}"
        " --device cpu --threads {threads} --out-dir \"$(dirname {output:q})\" > {log:q} 2>&1"


localrules:
    data_index,


# One small file per (q, N) that lists its seeds' manifests with their SHA-256:
# the training and evaluation jobs take it as their one data input, which keeps
# the DAG of a large sweep small (a 10,000-cell grid with 5 seeds: 80,000 fewer
# input files).
rule data_index:
    input:
        MANIFESTS,
    output:
        DATA_INDEX,
    log:
        f"{R}/logs/data_index/q~{{q}}_N~{{N}}.log",
    run:
        write_data_index(list(input), output[0], q=int(wildcards.q), N=int(wildcards.N), log=log[0])
