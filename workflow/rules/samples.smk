# The front half of a sweep whose task measures samples (sparse token retrieval; docs/retrieval.md;
# stsq.core.measures): one job per (arch, q, N, mode, heads) cell, every seed inside, training until the test loss
# falls below each threshold or the cap (stsq.samples.run); one table of every cell and the slopes in log N
# (stsq.samples.table).  The figure, the claims (stsq.claims.retrieval) and the front page are the back half's
# (report.smk).
from stsq.core import experiment as ex  # noqa: E402
from stsq.core import figure_catalog as catalog  # noqa: E402  the figures, one record each
from stsq.cluster.pilot import PILOT_SUFFIX, samples_pilot_sweep  # noqa: E402
from stsq.retrieval.cells import sample_cells  # noqa: E402

# With pilot=true, the sweep's pilot: every cell at its real shape for a few checks of one seed
# (stsq.cluster.pilot.samples_pilot_sweep), under results/<sweep>_pilot/, and what it says of the real sweep.
PILOT = bool(config["pilot"])
REAL_SWEEP = config["sweeps"][config["sweep"]]
SWEEP_NAME = config["sweep"] + (PILOT_SUFFIX if PILOT else "")
SWEEP = samples_pilot_sweep(REAL_SWEEP) if PILOT else REAL_SWEEP
SEEDS = [int(s) for s in SWEEP["seeds"]]
PATHS = ex.Layout(SWEEP_NAME)
SAMPLE_CELLS = {c.path: c for c in sample_cells(SWEEP)}
print(cost.samples_cost_message(SWEEP_NAME, list(SAMPLE_CELLS.values()), len(SEEDS)), file=sys.stderr)
# the longest cells first: a cell's priority is its estimated seconds (stsq.cluster.cost)
PRIORITY = {p: int(cost.estimated_samples_seconds(c, len(SEEDS))) for p, c in SAMPLE_CELLS.items()}
SAMPLES_CSV = f"{PATHS.root}/samples/{{cell}}/samples.csv"  # one cell's rows, every seed
CELL_FILES = [SAMPLES_CSV.format(cell=c) for c in SAMPLE_CELLS]

TABLE = f"{PATHS.root}/tables/samples.csv"
SLOPES = f"{PATHS.root}/tables/slopes.csv"


wildcard_constraints:
    cell="|".join(re.escape(c) for c in SAMPLE_CELLS),


# the targets of `all` (the Snakefile): every file a rule writes
ALL_TARGETS = [TABLE, SLOPES, CELL_FILES, [PATHS.pilot("csv"), PATHS.pilot("txt")] if PILOT else []]


# One cell, every seed: its record travels whole, as one JSON argument; each seed checkpoints under
# checkpoints/<cell>/seed~S/last.pt, and a rerun resumes from there (stsq.samples.run).
rule samples:
    output:
        csv=SAMPLES_CSV,
        provenance=sidecar(SAMPLES_CSV),
    params:
        code=stage_code(MEASURE.runner),
        runner=MEASURE.runner,
        record=lambda w: SAMPLE_CELLS[w.cell].to_json(),
        seeds=SEEDS,
        task=TASK,
        ckpt_dir=f"{PATHS.root}/checkpoints/{{cell}}",
    priority: lambda w: PRIORITY[w.cell]
    log:
        f"{PATHS.root}/logs/samples/{{cell}}.log",
    benchmark:
        f"{PATHS.root}/benchmarks/samples/{{cell}}.tsv"
    threads: 1
    resources:
        gpu=1,
        # from the cell's estimate at the cap (stsq.cluster.cost), growing with every retry, capped at the longest
        # partition (a killed job resumes from its checkpoints at its next attempt)
        runtime=lambda w, attempt: cluster.runtime_request_min(
            cost.estimated_samples_seconds(SAMPLE_CELLS[w.cell], len(SEEDS)), attempt, max_runtime_min()),
        mem_mb=lambda w, attempt: cluster.memory_request_mb(
            cost.estimated_samples_memory_mb(SAMPLE_CELLS[w.cell]), attempt),
    conda:
        "../../envs/train.yaml"
    shell:
        "python -m stsq {params.runner} --task {params.task} --cell {params.record:q} --seeds {params.seeds}"
        " --out {output.csv:q} --checkpoint-dir {params.ckpt_dir:q} --threads {threads} > {log:q} 2>&1"


rule aggregate:
    input:
        cells=CELL_FILES,
        provenance=[sidecar(f) for f in CELL_FILES],
    output:
        table=TABLE,
        checksum=f"{TABLE}.sha256",
        slopes=SLOPES,
        slopes_checksum=f"{SLOPES}.sha256",
        provenance=sidecar(TABLE),
        slopes_provenance=sidecar(SLOPES),
    params:
        code=stage_code("aggregate"),
        task=TASK,
    log:
        PATHS.log("aggregate"),
    conda:
        "../../envs/analysis.yaml"
    shell:
        "python -m stsq aggregate --task {params.task} --cells {input.cells:q} --out {output.table:q}"
        " --slopes-out {output.slopes:q} > {log:q} 2>&1"


# The back half (report.smk) reads the samples table with its sidecars; its claims and figures read no oracle.
CLAIMS_INPUT = {"table": TABLE, "checksum": f"{TABLE}.sha256", "provenance": sidecar(TABLE)}
CLAIMS_ORACLE_ARG = ""
CLAIMS_CAPTION = "../report/claims_samples.rst"
DRAWN = catalog.figures_of(MEASURE.name)  # the samples measure's figures (stsq.core.figure_catalog)
FIGURE_INPUT = CLAIMS_INPUT
FIGURE_ARGS = ""
PROVENANCE_TABLES = {"samples": TABLE, "slopes": SLOPES, "claims": PATHS.claims("csv")}


# The pilot's cost of the real sweep: each cell's time per step, extrapolated to its cap and its seeds
# (stsq.cluster.pilot.samples_pilot_rows), beside the estimate said up front (tables/pilot.csv, pilot.txt).
if PILOT:

    rule pilot:
        input:
            cells=CELL_FILES,
            benchmarks=[f"{PATHS.root}/benchmarks/samples/{c}.tsv" for c in SAMPLE_CELLS],
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
