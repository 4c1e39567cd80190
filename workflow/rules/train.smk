# Stage 2: one job per (arch, q, N, width) cell, training every seed of the
# sweep one after another (per-seed outputs and checkpoints; a rerun resumes
# from results/<sweep>/checkpoints/).  Code: stsq/train.py, stsq/models.py.


resource_scopes:
    gpu="local",  # counted against --resources gpu=N locally, not across a cluster


rule train:
    input:
        manifests,
    output:
        models=[f"{R}/models/{CELL}/seed~{s}/model.pt" for s in SEEDS],
        curves=[f"{R}/models/{CELL}/seed~{s}/curve.csv" for s in SEEDS],
    params:
        data_dir=data_dir,
        out_dir=lambda w: f"{R}/models/{GRID.wildcard_pattern.format(**w)}",
        ckpt_dir=lambda w: f"{R}/checkpoints/{GRID.wildcard_pattern.format(**w)}",
        seeds=" ".join(map(str, SEEDS)),
        d=SWEEP["d"],
        steps=lambda w: int(arch_setting(w, "steps")),
        lr=lambda w: float(arch_setting(w, "lr")),
        optimizer=lambda w: arch_setting(w, "optimizer"),
        layers=lambda w: int(arch_setting(w, "layers")),
        batch_size=SWEEP["batch_size"],
        query=SWEEP["query"],
        log_every=SWEEP["log_every"],
        checkpoint_every=SWEEP["checkpoint_every"],
    log:
        f"{R}/logs/train/{CELL}.log",
    benchmark:
        f"{R}/benchmarks/train/{CELL}.tsv"
    threads: 1
    resources:
        gpu=1,
    conda:
        "../../envs/train.yaml"
    shell:
        "python -m stsq train --arch {wildcards.arch} --q {wildcards.q}"
        " --N {wildcards.N} --d {params.d} --width {wildcards.width} --seeds {params.seeds}"
        " --steps {params.steps} --lr {params.lr} --optimizer {params.optimizer}"
        " --layers {params.layers} --batch-size {params.batch_size} --query {params.query}"
        " --log-every {params.log_every} --checkpoint-every {params.checkpoint_every}"
        " --data-dir {params.data_dir:q} --out-dir {params.out_dir:q} --checkpoint-dir {params.ckpt_dir:q}"
        " --threads {threads} > {log:q} 2>&1"
