# The pilot (config pilot=true): every job of the sweep at its real shapes for a few steps of one seed
# (stsq.cluster.pilot.pilot_sweep).  Its training is one job per (q, N, d), every cell of it in one process, each
# timed (a job per cell would spend more on starting Python and torch than on training); the rule `pilot`
# reads those timings and each job's benchmark file and writes, per job, the pilot's estimate and
# measurement and the real sweep's estimate and extrapolated cost (tables/pilot.csv), and what that says
# about the real sweep (tables/pilot.txt, also in the log).  Code: stsq/cluster/pilot.py.


if PILOT:
    from stsq.cluster.pilot import pilot_cells, step_budget_s

    # one rule per (q, N, d): a job's outputs are its cells' models and curves, which differ between (q, N, d)
    for _q, _N, _d in QND:
        _job = f"q~{_q}_N~{_N}_d~{_d}"
        _records = pilot_cells(SWEEP, int(_q), int(_N), int(_d))  # the records of its cells (stsq.cluster.pilot)
        _cells = [r.path for r in _records]
        _mbs = [cost.estimated_memory_mb(SWEEP, r) for r in _records]
        _mb = max(_mbs)
        _budgets = [step_budget_s(REAL_SWEEP, r) for r in _records]  # a long cell's step timed for 2 s
        _seconds = sum(cost.estimated_seconds(SWEEP, r) for r in _records) + sum(
            _budgets)

        rule:
            name:
                f"pilot_train_q{_q}_N{_N}_d{_d}"
            input:
                ancient(PATHS.data_index(_q, _N, _d)),
            output:
                models=[PATHS.model(c, s) for c in _cells for s in SEEDS],
                curves=[PATHS.model(c, s, name=ex.CURVE) for c in _cells for s in SEEDS],
                provenance=[sidecar(PATHS.model(c, s)) for c in _cells for s in SEEDS],
                timing=PATHS.pilot_training(_q, _N, _d),
            params:
                code=stage_code("pilot_train"),
                data=DATA_SETTINGS,
                sweep=SWEEP_NAME,
                cells=" ".join(f"--cell {shlex.quote(r.to_json())}" for r in _records),  # as rule train's --cell
                estimated_mb=" ".join(map(str, _mbs)),
                budgets=" ".join(f"{b:g}" for b in _budgets),
                seeds=" ".join(map(str, SEEDS)),
            log:
                PATHS.log("train", _job),
            benchmark:
                PATHS.benchmark("train", _job)
            threads: 1
            resources:
                gpu=1,
                mem_mb=lambda w, attempt, mb=_mb: cluster.memory_request_mb(mb, attempt),
                runtime=lambda w, attempt, seconds=_seconds: cluster.runtime_request_min(seconds, attempt,
                                                                                         max_runtime_min()),
            conda:
                "../../envs/train.yaml"
            shell:
                "python -m stsq pilot-train --sweep {params.sweep} {params.cells} --estimated-mb"
                " {params.estimated_mb} --budget-s {params.budgets} --seeds {params.seeds} --data-index {input:q} --out {output.timing:q}"
                " --threads {threads} > {log:q} 2>&1"

    rule pilot:
        input:
            train=[PATHS.benchmark("train", f"q~{q}_N~{N}_d~{d}") for q, N, d in QND],
            timings=[PATHS.pilot_training(q, N, d) for q, N, d in QND],
            evaluate=[PATHS.benchmark("evaluate", f"q~{q}_N~{N}_d~{d}") for q, N, d in QND],
            eval_sets=[PATHS.benchmark("eval_sets", f"q~{q}_N~{N}_d~{d}") for q, N, d in QND],
            oracle=[PATHS.benchmark("oracle", f"q~{q}_N~{N}") for q, N in ORACLE_WIDTHS],
            analysis=[PATHS.benchmark("analysis", r) for r in analysis_rules(SWEEP)],
        output:
            csv=PATHS.pilot("csv"),
            txt=PATHS.pilot("txt"),
        params:
            code=stage_code("pilot"),
            sweep=config["sweep"],
            max_runtime=lambda w: max_runtime_min() or 0,
            retries=lambda w: workflow.execution_settings.retries,
            config=lambda w: shlex.quote(json.dumps(REAL_SWEEP)),
        log:
            PATHS.log("pilot"),
        conda:
            "../../envs/analysis.yaml"
        shell:
            "python -m stsq pilot --sweep {params.sweep} --sweep-config {params.config}"
            " --max-runtime-min {params.max_runtime} --retries {params.retries}"
            " --out-csv {output.csv:q} --out-txt {output.txt:q} > {log:q} 2>&1; cat {output.txt:q}"
