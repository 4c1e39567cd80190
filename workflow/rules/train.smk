# Stage 2: one job per (arch, q, N, d, steps, width) cell, training every seed of the
# sweep one after another (per-seed outputs and checkpoints; a rerun resumes
# from results/<sweep>/checkpoints/).  Code: stsq/train.py, step.py, models.py.


# (a pilot trains every cell of a (q, N, d) in one job instead: workflow/rules/pilot.smk)
if not PILOT:

    rule train:
        input:
            ancient(DATA_INDEX),
        output:
            models=[PATHS.model(seed=s) for s in SEEDS],
            curves=[PATHS.model(seed=s, name=ex.CURVE) for s in SEEDS],
        params:
            data=DATA_SETTINGS,
            ckpt_dir=PATHS.checkpoints(),
            seeds=" ".join(map(str, SEEDS)),
            arch_args=arch_args,
            batch_size=SWEEP["batch_size"],
            query=SWEEP["query"],
            log_every=SWEEP["log_every"],
            checkpoint_every=SWEEP["checkpoint_every"],
        log:
            PATHS.log("train", ex.cell()),
        benchmark:
            PATHS.benchmark("train", ex.cell())
        group:
            packed_group("train", train_runtime_min)
        threads: 1
        priority: cell_priority
        resources:
            gpu=1,
            mem_mb=cell_memory_mb,
            runtime=train_runtime_min,
        conda:
            "../../envs/train.yaml"
        shell:
            "python -m stsq train --arch {wildcards.arch} --q {wildcards.q}"
            " --N {wildcards.N} --d {wildcards.d} --width {wildcards.width} --steps {wildcards.steps}"
            " --seeds {params.seeds}"
            " {params.arch_args} --batch-size {params.batch_size} --query {params.query}"
            " --log-every {params.log_every} --checkpoint-every {params.checkpoint_every}"
            " --data-index {input:q} --models {output.models:q} --curves {output.curves:q}"
            " --checkpoint-dir {params.ckpt_dir:q}"
            " --threads {threads} > {log:q} 2>&1"
