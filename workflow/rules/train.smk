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
            cell=cell_record,  # the cell's record: its axes and every training setting, resolved
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
            "python -m stsq train --cell {params.cell:q} --seeds {params.seeds}"
            " --data-index {input:q} --models {output.models:q} --curves {output.curves:q}"
            " --checkpoint-dir {params.ckpt_dir:q}"
            " --threads {threads} > {log:q} 2>&1"
