# Shared by the rules of a sweep that measures widths, in order: the sweep's grid, the helpers (the config is
# validated by setup.smk).  No rules here; no torch import (stsq.core.experiment, config, sweep, cost and cluster are
# torch-free).
from snakemake.utils import Paramspace

from stsq.core import experiment as ex  # noqa: E402  the experiment's vocabulary: archs, paths, columns
from stsq.core import figure_catalog as catalog  # noqa: E402  the figures, one record each
from stsq.core import sweep as sw  # noqa: E402  the grid: every cell's record
from stsq.report.pages import analysis_rules, drawn_figures, figure_plan  # noqa: E402
from stsq.cluster.pilot import PILOT_SUFFIX, pilot_sweep  # noqa: E402


# -- 1. the chosen sweep, its (arch, q, N, d, steps, width) grid and where its outputs live; with
# pilot=true, the sweep's pilot (every shape, a few steps of one seed: stsq.cluster.pilot) under results/<sweep>_pilot/
PILOT = bool(config["pilot"])
REAL_SWEEP = config["sweeps"][config["sweep"]]
SWEEP_NAME = config["sweep"] + (PILOT_SUFFIX if PILOT else "")
SWEEP = pilot_sweep(REAL_SWEEP) if PILOT else REAL_SWEEP
# Monte Carlo samples of the oracle and of a model's projection (fewer in a pilot)
ORACLE_SAMPLES = sw.samples(SWEEP, "oracle_samples")
PROJECTION_SAMPLES = sw.samples(SWEEP, "projection_samples")
SEEDS = [int(s) for s in SWEEP["seeds"]]
PATHS = ex.Layout(SWEEP_NAME)  # every output of this sweep lives under results/<sweep>/
POSITION_RANGE = sw.position_range(SWEEP)  # L of randomized positions (stsq.core.sweep.position_range)

# Wildcards (plain strings) are what rules pass on, never Paramspace's numpy scalars.
# Every cell's record (stsq.core.experiment.CellRecord: its axes and every training setting, resolved), built
# once here; its training job gets it whole, as one JSON argument.
RECORDS = sw.cell_records(SWEEP)
GRID = Paramspace(sw.cells(SWEEP), filename_params=None)
assert GRID.wildcard_pattern == ex.cell(), GRID.wildcard_pattern
CELLS = list(GRID.instance_patterns)
assert CELLS == [r.path for r in RECORDS], "the grid's folders are its records' folders"
GRID_ROWS = list(GRID.dataframe.itertuples(index=False))  # (arch, q, N, d, steps, width) of every cell
RECORD_OF = dict(zip(CELLS, RECORDS))
# The d_e of every transformer whose claims read the oracle (the paper's model; positions from a range) at
# each (q, N): one oracle job each (it does not depend on d or steps).
ORACLE_WIDTHS = {(str(q), str(N)): w for (q, N), w in sw.oracle_widths(SWEEP).items()}
ORACLE_FILES = [PATHS.oracle(q, N) for q, N in ORACLE_WIDTHS]
# Every (q, N, d) of the grid: its evaluation sets are shared by every arch, steps and width, and its
# models are evaluated in one job.
QND = list(dict.fromkeys((str(r.q), str(r.N), str(r.d)) for r in GRID_ROWS))  # wildcard values
MODELS_OF = {qnd: [] for qnd in QND}
for c, r in zip(CELLS, GRID_ROWS):
    MODELS_OF[str(r.q), str(r.N), str(r.d)] += [PATHS.model(c, s) for s in SEEDS]

# Paths as patterns of the wildcards, not functions of them: Snakemake calls a function once per
# job and path, which costs a 10,000-cell sweep's DAG seconds (docs/measurements.md, part e).
DATA_INDEX = PATHS.data_index()  # stands for the seeds' manifests and sets: one input per job
# The data a cell job reads, as a param: a change of it reruns the job (params trigger), while a set
# regenerated with the same bytes (after a deletion) does not: the jobs take the index as ancient().
DATA_SETTINGS = f"n_eval={SWEEP['n_eval']} factors={ex.eval_factors(SWEEP['eval_length_factors'])}"


wildcard_constraints:
    arch="|".join(ex.ARCHS),
    q=r"\d+",
    N=r"\d+",
    d=r"\d+",
    steps=r"\d+",
    width=r"\d+",
    seed=r"\d+",


# What the run will cost, said before the first job (and by a dry run); not by the jobs themselves.
if workflow.is_main_process:
    print(cost.cost_message(SWEEP_NAME, SWEEP, gpu=shutil.which("nvidia-smi") is not None, pilot=PILOT), file=sys.stderr)


# Snakemake puts its interpreter's path unquoted into each cluster job's command (snakemake/snakemake#3211,
# snakemake-executor-plugin-slurm#29): from a folder whose path has a space or a quote every Slurm job
# would fail.  Refuse before the first submission and say what to do; local runs are not affected.
onstart:
    unsafe = [p for p in (sys.executable, workflow.basedir) if any(ch in str(p) for ch in " '\"")]
    plugin = getattr(workflow.executor_plugin, "name", "") or ""
    if "slurm" in plugin and "jobstep" not in plugin and unsafe:
        raise WorkflowError(
            f"cannot submit to Slurm from {unsafe[0]!r}: Snakemake writes this path unquoted into every "
            "job's command, so a space or a quote in it breaks each job. Clone (or move) the checkout, with its "
            ".venv, to a path without them for cluster runs; local runs work from any path.")


# -- 2. helpers
# Each cell's estimated training time on one core (stsq.cluster.cost.estimated_seconds); longest cell first: a
# cell job's priority is its estimate in seconds.
CELL_SECONDS = {c: cost.estimated_seconds(SWEEP, r) for c, r in RECORD_OF.items()}
SEED_SECONDS = {c: cost.seed_seconds(SWEEP, r) for c, r in RECORD_OF.items()}
# With `--config requests=pilot`, each job's seconds are the estimate times its cost shape's measured / estimated
# ratio in the sweep's pilot, asked for with the headroom of that shape's spread (stsq.cluster.requests.pilot_factors);
# HEADROOM: each cell's.
HEADROOM = {c: cluster.RUNTIME_HEADROOM for c in RECORD_OF}
if config.get("requests", "estimate") == "pilot" and not PILOT:
    _pilot_csv = Path(ex.Layout(config["sweep"] + PILOT_SUFFIX).pilot("csv"))
    if not _pilot_csv.exists():
        raise WorkflowError(f"requests=pilot takes the requests from {_pilot_csv}, which is missing: run the pilot "
                            f"first (snakemake --cores 2 --config sweep={config['sweep']} pilot=true)")
    import csv as _csv
    with open(_pilot_csv) as _fh:
        _factors, _headrooms = cluster.pilot_factors(list(_csv.DictReader(_fh)))
    for _c, _r in RECORD_OF.items():
        _shape = (_r.arch, _r.N, _r.d, _r.width)
        CELL_SECONDS[_c] *= _factors.get(_shape, 1.0)
        SEED_SECONDS[_c] *= _factors.get(_shape, 1.0)
        HEADROOM[_c] = _headrooms.get(_shape, cluster.RUNTIME_HEADROOM)
# A cell whose job would take longer than an hour trains one job per seed (rule train_seed; stsq.cluster.requests.
# trains_per_seed); a pilot trains one seed anyway.  JOB_SECONDS: every training job, a cell or <cell>/seed~S.
PER_SEED = [] if PILOT else [c for c in CELLS if cluster.trains_per_seed(CELL_SECONDS[c], len(SEEDS))]
JOB_SECONDS = cluster.training_jobs({c: (CELL_SECONDS[c], SEED_SECONDS[c]) for c in CELLS}, SEEDS, cost.JOB_START_S)
PRIORITY = {j: max(1, round(s)) for j, s in JOB_SECONDS.items()}


def train_job(w) -> str:
    """The training job of a job's wildcards: its cell (rule train), or <cell>/seed~S (rule train_seed)."""
    return f"{w.cell}/seed~{w.seed}" if "cell" in w.keys() else ex.cell(**w)


def job_cell(w) -> str:
    """The cell of a training job's wildcards (rule train's axes, or rule train_seed's cell)."""
    return w.cell if "cell" in w.keys() else ex.cell(**w)


def job_record(w):
    return RECORD_OF[job_cell(w)]


def seed_job_data_index(w):
    """The data index of a train_seed job's cell (its (q, N, d)'s)."""
    r = RECORD_OF[w.cell]
    return PATHS.data_index(r.q, r.N, r.d)


def cell_record(w):
    """The cell's record as one JSON argument of its training job (stsq.core.experiment.CellRecord.from_json)."""
    return job_record(w).to_json()


def cell_memory_mb(w, attempt):
    """The train job's memory request: its cell's estimate with headroom, more at each retry."""
    return cluster.memory_request_mb(cost.estimated_memory_mb(SWEEP, job_record(w)), attempt)


def train_threads(w):
    """The threads a training job asks for: those its cell profits from (stsq.cluster.cost.train_threads; Snakemake caps
    them at --cores and at the profile's `max-threads`)."""
    return cost.train_threads(job_record(w))


# -- cluster limits: each job asks for a runtime from its own estimate (max_runtime_min: setup.smk).


def train_runtime_min(w, attempt):
    seconds = JOB_SECONDS[train_job(w)]
    longest = max_runtime_min()
    if longest and attempt == 1:
        refused = cluster.too_many_attempts(JOB_SECONDS, longest, workflow.execution_settings.retries)
        if refused:
            raise WorkflowError(refused)
    return cluster.runtime_request_min(seconds, attempt, longest, HEADROOM[job_cell(w)])


def evaluation_runtime_min(w, attempt):
    return cluster.runtime_request_min(cost.estimated_evaluation_seconds(SWEEP, int(w.q), int(w.N), int(w.d)),
                                       attempt, max_runtime_min())


def evaluation_memory_mb(w, attempt):
    return cluster.memory_request_mb(cost.estimated_evaluation_memory_mb(SWEEP, int(w.N), int(w.d)), attempt)


def oracle_runtime_min(w, attempt):
    return cluster.runtime_request_min(
        cost.estimated_oracle_seconds(SWEEP, int(w.q), int(w.N), ORACLE_WIDTHS[w.q, w.N]), attempt, max_runtime_min())


def data_runtime_min(w, attempt):
    return cluster.runtime_request_min(cost.estimated_data_seconds(SWEEP, int(w.N), int(w.d)), attempt,
                                       max_runtime_min())


# -- packs (profiles/slurm-grouped; stsq.cluster.requests.pack_group): Snakemake sets the group settings after the
# Snakefile is parsed, so a job's group is chosen when it is placed.
_PACKING_SAID = []


def _components(rule):
    """The pack size of ``rule``'s group under this run's `group-components` (1: not packed)."""
    settings = getattr(workflow, "group_settings", None)
    return int((getattr(settings, "group_components", None) or {}).get(cluster.PACKED_GROUPS[rule], 1))


def packed_group(rule, runtime_min):
    """The `group` of ``rule``'s jobs (stsq.cluster.requests.pack_group at the last allowed attempt)."""

    def of(w):
        components = _components(rule)
        if components <= 1:
            return None
        if workflow.is_main_process and not _PACKING_SAID:  # once, when the jobs are first placed
            _PACKING_SAID.append(True)
            print(packing_summary(), file=sys.stderr)
        return cluster.pack_group(rule, components, runtime_min(w, 1 + workflow.execution_settings.retries),
                                  max_runtime_min())

    return of


class _Wildcards(dict):
    """A job's wildcards for the functions above, outside a job (the packing summary)."""
    __getattr__ = dict.__getitem__


def packing_summary():
    """What each packed group does with this sweep's jobs (said once, when the first job is placed, in a
    dry run too; stsq.cluster.requests.packing_summary)."""
    runtime_fns = {"train": train_runtime_min, "evaluate": evaluation_runtime_min, "oracle": oracle_runtime_min,
                   "eval_sets": data_runtime_min}
    jobs = {"train": [_Wildcards({k: str(v) for k, v in r.axes().items()}) for r in RECORDS if r.path not in PER_SEED]
                     + [_Wildcards(cell=c, seed=str(s)) for c in PER_SEED for s in SEEDS],
            "evaluate": [_Wildcards(q=q, N=N, d=d) for q, N, d in QND],
            "eval_sets": [_Wildcards(q=q, N=N, d=d) for q, N, d in QND],
            "oracle": [_Wildcards(q=q, N=N) for q, N in ORACLE_WIDTHS]}
    last = 1 + workflow.execution_settings.retries
    return cluster.packing_summary({rule: [fn(w, last) for w in jobs[rule]] for rule, fn in runtime_fns.items()},
                                   {rule: _components(rule) for rule in runtime_fns}, max_runtime_min(), last)


def cell_priority(w):
    return PRIORITY[train_job(w)]


def lengths_of(w):
    return " ".join(str(L) for L in ex.eval_lengths(int(w.N), SWEEP["eval_length_factors"]))


def seed_files(name):
    """Every seed's file ``name`` (model.pt, curve.csv) of every cell."""
    return [PATHS.model(c, s, name) for c in CELLS for s in SEEDS]


def all_eval_sets():
    """Every evaluation set of the sweep (a target of `all`, so a deleted one is rebuilt)."""
    factors = ex.eval_factors(SWEEP["eval_length_factors"])
    return [PATHS.eval_set(q, N, d, s, f) for q, N, d in QND for s in SEEDS for f in factors]


# The figures this sweep's grid gives something to show (stsq.report.pages.figure_plan): the others are not
# built by `all` nor shown in the report (its front page says why), and are drawn when named.
DRAWN = drawn_figures(SWEEP)  # the figures this sweep draws (the back half's figure rules: report.smk)

