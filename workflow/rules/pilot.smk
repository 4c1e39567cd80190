# The pilot (config pilot=true): every job of the sweep ran at its real shapes for a few steps of one seed
# (stsq.pilot.pilot_sweep); this rule reads each job's benchmark file and writes, per job, the pilot's
# estimate and measurement and the real sweep's estimate and extrapolated cost (tables/pilot.csv), and
# what that says about the real sweep (tables/pilot.txt, also in the log).  Code: stsq/pilot.py.


if PILOT:

    rule pilot:
        input:
            train=[PATHS.benchmark("train", c) for c in CELLS],
            evaluate=[PATHS.benchmark("evaluate", f"q~{q}_N~{N}_d~{d}") for q, N, d in QND],
            eval_sets=[PATHS.benchmark("eval_sets", f"q~{q}_N~{N}_d~{d}") for q, N, d in QND],
            oracle=[PATHS.benchmark("oracle", f"q~{q}_N~{N}") for q, N in ORACLE_WIDTHS],
        output:
            csv=PATHS.pilot("csv"),
            txt=PATHS.pilot("txt"),
        params:
            sweep=config["sweep"],
            max_runtime=lambda w: max_runtime_min() or 0,
            retries=lambda w: workflow.execution_settings.retries,
            config=lambda w: shlex.quote(json.dumps(REAL_SWEEP)),
        log:
            PATHS.log("pilot"),
        shell:
            "python -m stsq pilot --sweep {params.sweep} --sweep-config {params.config}"
            " --max-runtime-min {params.max_runtime} --retries {params.retries}"
            " --out-csv {output.csv:q} --out-txt {output.txt:q} > {log:q} 2>&1; cat {output.txt:q}"
