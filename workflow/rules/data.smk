# Stage 1: seed manifests and the fixed evaluation sets of every (q, N, d, seed),
# shared by every arch, budget and width of that (q, N, d).  Code: stsq/data.py.


rule eval_sets:
    output:
        manifest=PATHS.manifest(),
        sets=[PATHS.eval_set(factor=f) for f in ex.eval_factors(SWEEP["eval_length_factors"])],
    params:
        lengths=lengths_of,
        n_eval=SWEEP["n_eval"],
    log:
        PATHS.log("eval_sets", "q~{q}_N~{N}_d~{d}_seed~{seed}"),
    benchmark:
        PATHS.benchmark("eval_sets", "q~{q}_N~{N}_d~{d}_seed~{seed}")
    threads: 1
    conda:
        "../../envs/train.yaml"
    shell:
        "python -m stsq data --q {wildcards.q} --N {wildcards.N} --d {wildcards.d}"
        " --seed {wildcards.seed} --eval-lengths {params.lengths} --n-eval {params.n_eval}"
        " --device cpu --threads {threads} --manifest {output.manifest:q} > {log:q} 2>&1"


localrules:
    data_index,


# One small file per (q, N, d) that lists its seeds' manifests with their SHA-256:
# the training and evaluation jobs take it as their one data input, which keeps
# the DAG of a large sweep small (a 10,000-cell grid with 5 seeds: 80,000 fewer
# input files).
rule data_index:
    input:
        [PATHS.manifest(seed=s) for s in SEEDS],  # each stands for its seed's evaluation sets
    output:
        DATA_INDEX,
    log:
        PATHS.log("data_index", "q~{q}_N~{N}_d~{d}"),
    conda:
        "../../envs/analysis.yaml"
    shell:
        "python -m stsq data-index --q {wildcards.q} --N {wildcards.N} --manifests {input:q}"
        " --out {output:q} > {log:q} 2>&1"
