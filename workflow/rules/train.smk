# Stage 2: one job per (arch, q, N, d, steps, width) cell, training every seed of the
# sweep one after another (per-seed outputs and checkpoints; a rerun resumes
# from results/<sweep>/checkpoints/); a cell whose job would take over an hour
# trains one job per seed instead (rule train_seed, PER_SEED: stsq.cluster.requests.
# trains_per_seed), into the same files.  Code: stsq/width/train.py, step.py, models.py.


# (a pilot trains every cell of a (q, N, d) in one job instead: workflow/rules/pilot.smk)
if not PILOT:

    rule train:
        input:
            ancient(DATA_INDEX),
        output:
            models=[PATHS.model(seed=s) for s in SEEDS],
            curves=[PATHS.model(seed=s, name=ex.CURVE) for s in SEEDS],
            provenance=[sidecar(PATHS.model(seed=s)) for s in SEEDS],
        params:
            code=stage_code("train"),  # a change to the code training runs retrains (stsq.provenance.codehash)
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
        threads: train_threads
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

    # The long cells, one job per seed: rule train's job (its command, settings and requests) with one seed, the
    # same files (the seed's streams are its own, so its numbers are those of the multi-seed job:
    # tests/test_train.py).  Only where a cell is long enough (the cpu sweep has none, so its DAG is the
    # multi-seed one).
    if PER_SEED:

        ruleorder: train_seed > train

        use rule train as train_seed with:
            input:
                ancient(seed_job_data_index),
            output:
                models=PATHS.model("{cell}", "{seed}"),
                curves=PATHS.model("{cell}", "{seed}", ex.CURVE),
                provenance=sidecar(PATHS.model("{cell}", "{seed}")),
            wildcard_constraints:
                cell="|".join(re.escape(c) for c in PER_SEED),
            params:  # the others (the code, the data, the cell's record) are rule train's
                ckpt_dir=lambda w: PATHS.checkpoints(w.cell),
                seeds=lambda w: w.seed,
            log:
                PATHS.log("train", "{cell}/seed~{seed}"),
            benchmark:
                PATHS.benchmark("train", "{cell}/seed~{seed}")
            group:
                packed_group("train_seed", train_runtime_min)
