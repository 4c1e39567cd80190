# Stage 2: one job per (arch, q, N, width) cell, training every seed of the
# sweep one after another (per-seed outputs and checkpoints; a rerun resumes
# from results/<sweep>/checkpoints/).  Code: stsq/train.py, stsq/models.py.


resource_scopes:
    gpu="local",  # counted against --resources gpu=N locally, not across a cluster


rule train:
    input:
        DATA_INDEX,
    output:
        models=[f"{MODELS}/seed~{s}/model.pt" for s in SEEDS],
        curves=[f"{MODELS}/seed~{s}/curve.csv" for s in SEEDS],
    params:
        out_dir=MODELS,
        ckpt_dir=CHECKPOINTS,
        seeds=" ".join(map(str, SEEDS)),
        d=SWEEP["d"],
        arch_args=arch_args,
        batch_size=SWEEP["batch_size"],
        query=SWEEP["query"],
        log_every=SWEEP["log_every"],
        checkpoint_every=SWEEP["checkpoint_every"],
    log:
        f"{R}/logs/train/{CELL}.log",
    benchmark:
        f"{R}/benchmarks/train/{CELL}.tsv"
    threads: 1
    priority: cell_priority
    resources:
        gpu=1,
    conda:
        "../../envs/train.yaml"
    shell:
        "python -m stsq train --arch {wildcards.arch} --q {wildcards.q}"
        " --N {wildcards.N} --d {params.d} --width {wildcards.width} --seeds {params.seeds}"
        " {params.arch_args} --batch-size {params.batch_size} --query {params.query}"
        " --log-every {params.log_every} --checkpoint-every {params.checkpoint_every}"
        " --data-dir \"$(dirname {input:q})\" --out-dir {params.out_dir:q} --checkpoint-dir {params.ckpt_dir:q}"
        " --threads {threads} > {log:q} 2>&1"
