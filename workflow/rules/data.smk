# Stage 1: seed manifests and the fixed evaluation sets of every (q, N, d), all seeds in one job,
# shared by every arch, budget and width of that (q, N, d).  Code: stsq/sts/data.py.


# The job also writes one small file per (q, N, d) that lists its seeds' manifests with their SHA-256:
# the training and evaluation jobs take it as their one data input, which keeps the DAG of a large
# sweep small (a 10,000-cell grid with 5 seeds: 80,000 fewer input files).
rule eval_sets:
    output:
        index=DATA_INDEX,
        provenance=sidecar(DATA_INDEX),
        manifests=[PATHS.manifest(seed=s) for s in SEEDS],
        sets=[PATHS.eval_set(seed=s, factor=f) for s in SEEDS for f in ex.eval_factors(SWEEP["eval_length_factors"])],
    params:
        code=stage_code("data"),  # a change to the code this command runs reruns it (stsq.provenance.codehash)
        lengths=lengths_of,
        n_eval=SWEEP["n_eval"],
        task=SWEEP["task"],
        seeds=" ".join(map(str, SEEDS)),
    log:
        PATHS.log("eval_sets", "q~{q}_N~{N}_d~{d}"),
    benchmark:
        PATHS.benchmark("eval_sets", "q~{q}_N~{N}_d~{d}")
    group:
        packed_group("eval_sets", data_runtime_min)
    threads: 1
    resources:
        runtime=data_runtime_min,
        mem_mb=evaluation_memory_mb,
    conda:
        "../../envs/train.yaml"
    shell:
        "python -m stsq data --q {wildcards.q} --N {wildcards.N} --d {wildcards.d}"
        " --seeds {params.seeds} --eval-lengths {params.lengths} --n-eval {params.n_eval} --task {params.task}"
        " --device cpu --threads {threads} --manifests {output.manifests:q} --index {output.index:q} > {log:q} 2>&1"
