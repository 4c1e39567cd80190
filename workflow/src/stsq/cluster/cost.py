"""What every job of a sweep costs, roughly, on one CPU core: its time and its memory, and the cost said
before a run.  One home for the cost's constants; the shape of each model family's work is its
``stsq.core.families.Family`` record, its rate each arch's entry of ``STEP_RATES`` below.  The constants live here and
nowhere else: re-fitting them changes the requests and the cost said up front, never a result, so no job reruns
(stsq.provenance.codehash).

Used as a training job's priority (the longest cells start first), for the cluster requests
(stsq.cluster.requests), by the pilot (stsq.cluster.pilot) and for the memory check of the config.  No torch here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from stsq.core.errors import ConfigError
from stsq.core.experiment import ARCHS, CellRecord, family
from stsq.core.sweep import cell_records, cells, oracle_widths, samples
from stsq.report.pages import analysis_rules

# A training step costs its family's units of work (stsq.core.families: B N (d + d_e) for a transformer,
# B n_in m (+ B m^2 per extra hidden layer) for the FCN) at each arch's nanoseconds per unit, plus its fixed
# cost per step (``STEP_RATES``); each job starts Python and torch (docs/measurements.md, "Memory and
# cost").
JOB_START_S = 4.0  # Python, torch and the job's wrapper (measured 3.9 to 5.7 s in the pilots)


@dataclass(frozen=True)
class StepRate:
    """A training step's cost on one CPU core: nanoseconds per unit of its family's work (B N (d + d_e) for a
    transformer, B n_in m for the FCN) and a fixed cost per step (Python and kernel launches)."""

    ns_per_unit: float
    overhead_s: float


# Each arch's rate, fitted to the per-step times of the paper sweep's pilot (docs/measurements.md, "The cost said up
# front"); those of the paper sweep's own archs re-fitted to direct timings of their step at 16 of its shapes each
# (`make bench BENCH_ARGS="--only s --arch NAME"`): stochastic within 0.86 to 1.17 of each, fixed within 0.51 to
# 1.29, the FCN within 0.87 to 1.10 (docs/measurements.md, "The cost at the cells that dominate").
STEP_RATES: dict[str, StepRate] = {
    "tf_stochastic": StepRate(8.4, 0.14e-3),
    "tf_fixed": StepRate(0.46, 0.80e-3),
    "tf_positional": StepRate(17.0, 2.0e-3),
    "fcn": StepRate(0.057, 0.61e-3),
    "tf_learned": StepRate(2.0, 2.5e-3),
    "tf_sinusoidal": StepRate(2.3, 1.4e-3),
    "tf_randomized": StepRate(13.0, 12.9e-3),
    # index lookup's and bounded Dyck's (docs/separations.md: timed at their sweeps' shapes)
    "lookup_tf": StepRate(0.4, 1.5e-3),
    "dyck_tf": StepRate(0.4, 1.5e-3),
    "lookup_gru": StepRate(3.0, 2.0e-3),
    "dyck_gru": StepRate(3.0, 2.0e-3),
}
# A family's rate for the work of a step that does not grow with the tokens (``Family.weight_units``): the
# transformer's fitted to tf_fixed's direct timings together with its token work
# (`make bench BENCH_ARGS="--only s --arch tf_fixed --fit-weights"`; docs/measurements.md).
WEIGHT_RATES: dict[str, float] = {"transformer": 0.041}


def step_rate(arch: str) -> StepRate:
    """The arch's ``StepRate``; an arch without one (a new encoding, before `make bench` part s has timed it) is
    estimated at the costliest rate of its family's archs that have one."""
    if arch in STEP_RATES:
        return STEP_RATES[arch]
    kin = [STEP_RATES[a] for a in STEP_RATES if a in ARCHS and ARCHS[a].family == ARCHS[arch].family]
    return max(kin, key=lambda r: r.ns_per_unit, default=max(STEP_RATES.values(), key=lambda r: r.ns_per_unit))


def weight_rate(fam) -> float:
    """The family's ns per unit of its weight work (0 for a family without one)."""
    return WEIGHT_RATES.get(fam.name, 0.0)


# Each cost of a training job takes its cell's record (stsq.core.experiment.CellRecord: the arch, its shape, budget,
# batch size and layers) and the sweep (its seeds, evaluation samples and lengths, scoring intervals).
def estimated_seconds(sweep: dict, record: CellRecord) -> float:
    """A cell job's training time on one CPU core, roughly: it starts, then trains every seed of the sweep
    (``seed_seconds``). Used as the job's priority (the longest cells start first), for its cluster request
    and for the cost said before a run."""
    return JOB_START_S + len(sweep["seeds"]) * seed_seconds(sweep, record)


def step_units(record: CellRecord) -> float:
    """The work of one training step of the cell (its family's ``step_units`` at its batch size and layers)."""
    r = record
    return family(r.arch).step_units(r.batch_size, r.N, r.d, r.width, r.layers)


def seed_seconds(sweep: dict, record: CellRecord) -> float:
    """One seed's training on one CPU core, roughly (a job's start apart): its steps, and the scoring of its
    curve (the test set every log_every steps; the unseen lengths N' of a model with positions every
    checkpoint_every).  A cell trained one job per seed (stsq.cluster.requests.trains_per_seed) asks for this plus
    a job's start per job."""
    arch, N, d, steps, width, layers = record.arch, record.N, record.d, record.steps, record.width, record.layers
    fam, rated = family(arch), step_rate(arch)
    rate = rated.ns_per_unit
    n = sweep["n_eval"]
    units = step_units(record)
    scored = math.ceil(steps / sweep["log_every"]) * fam.score_units(n, N, N, d, width, layers)
    if fam.attention:
        scored += math.ceil(steps / sweep["checkpoint_every"]) * sum(
            fam.score_units(n, L, N, d, width, layers) for L in _lengths(sweep, N) if L != N)
    score = scored * rate
    per_step = (units * rate + step_weight_units(fam, record.batch_size, N, d, width, layers)
                * weight_rate(fam)) * 1e-9 + rated.overhead_s
    return steps * per_step + score * 1e-9


def step_weight_units(fam, B: int, N: int, d: int, width: int, layers: int) -> float:
    """A step's work that does not grow with the tokens (``Family.weight_units``; 0 for a family without)."""
    return fam.weight_units(B, N, d, width, layers) if fam.weight_units else 0.0


# -- threads: a training step that is one large product (the FCN's first layer) runs faster on more cores;
# the transformers' steps (many small products, the random draws) do not (docs/measurements.md, part t).
THREAD_UNITS = 2**28  # a step of at least this many units of work (about 20 ms on one core) per thread: the
                      # FCN at the paper's N = 128, m >= 1024 (no cell of the cpu sweep: its largest, 19 M)
TRAIN_THREADS_MAX = 4  # no training job asks for more (the profile's `max-threads` lowers it further)


def train_threads(record: CellRecord, cap: int | None = None) -> int:
    """The threads a training job of this cell profits from: 1, or, for a family whose step is a large
    product (``Family.threads``: the FCN), one per THREAD_UNITS units of its step, at most
    TRAIN_THREADS_MAX and ``cap`` (a run's `max-threads`, its cores)."""
    if not family(record.arch).threads:
        return 1
    units = step_units(record)
    wanted = max(1, min(TRAIN_THREADS_MAX, int(units // THREAD_UNITS)))
    return max(1, min(wanted, cap)) if cap else wanted


# -- the other jobs' time on one core, roughly: n samples x the summed lengths N' x the token width --
EVAL_NS_PER_UNIT = 4.0  # scoring, per sample x N' x (d + d_e) (paper scale: N = 128, d_e = 1024, N' up
                        # to 32 N took about 90 s for 5 seeds)
PROJECTION_NS_PER_UNIT = 50.0  # a stochastic model's projection onto the family, per sample x N' x d_e
                               # (fitted to the paper pilot's evaluation jobs)
ORACLE_NS_PER_UNIT = 23.0  # the oracle, per sample x N' x d_e, every scale (paper scale: 385 s at q = 1,
                           # N = 128, d_e = 1024)
DATA_NS_PER_UNIT = 10.0  # drawing and writing the evaluation sets, per sample x N' x d (the paper pilot)


def _lengths(sweep: dict, N: int) -> list[int]:
    return [int(f) * N for f in sweep["eval_length_factors"]]


def estimated_evaluation_seconds(sweep: dict, q: int, N: int, d: int) -> float:
    """The evaluation job of one (q, N, d): every model (arch, budget, width, seed) at every N' it takes."""
    grid = cells(sweep)
    grid = grid[(grid["q"] == q) & (grid["N"] == N) & (grid["d"] == d)]
    units = projection = 0.0
    for arch, width in grid[["arch", "width"]].itertuples(index=False):
        lengths = _lengths(sweep, N) if family(arch).attention else [N]
        units += sweep["n_eval"] * sum(lengths) * (d + int(width)) * len(sweep["seeds"])
        if ARCHS[arch].projected:
            projection += samples(sweep, "projection_samples") * sum(lengths) * int(width) * len(sweep["seeds"])
    return JOB_START_S + (units * EVAL_NS_PER_UNIT + projection * PROJECTION_NS_PER_UNIT) * 1e-9


def estimated_oracle_seconds(sweep: dict, q: int, N: int, widths) -> float:
    """The oracle job of one (q, N): the family's best loss at every N', at each d_e of ``widths``, from the
    sweep's Monte Carlo samples per N'."""
    units = samples(sweep, "oracle_samples") * sum(_lengths(sweep, N)) * sum(int(w) for w in widths)
    return JOB_START_S + units * ORACLE_NS_PER_UNIT * 1e-9


def estimated_data_seconds(sweep: dict, N: int, d: int) -> float:
    """The data job of one (q, N, d): every seed's evaluation set at every N'."""
    units = sweep["n_eval"] * sum(_lengths(sweep, N)) * d * len(sweep["seeds"])
    return JOB_START_S + units * DATA_NS_PER_UNIT * 1e-9


# -- memory: a training job's peak resident memory, from (arch, N, width, batch) -------------------
BASE_MB = 400  # Python, torch and the pipeline loaded (measured: docs/measurements.md, "Memory")
MEMORY_CAP_MB = 96 * 1024  # no job asks for more: above it a cell is refused before any job runs


def estimated_memory_mb(sweep: dict, record: CellRecord) -> int:
    """A training job's peak memory in MB, roughly (float32 throughout): its family's floats at the peak
    (stsq.core.families: ``memory_floats``), with the in-distribution test set, n_eval N d floats.

    - transformer: the step's tensors, about 3 B N (d + d_e) floats (X, the positions, the products of
      forward and backward), the model with its gradient and Adam's two moments, 4 (d + d_e)^2 +
      4 d (d + d_e) floats;
    - FCN: about 7 floats per parameter (n_in m + m d [+ m^2]: the weights, their gradient, Adam's
      moments and the fused kernel's buffers), the activations autograd keeps, about 4 B (n_in + m)
      floats, with n_in = N d + N.

    Measured peaks (docs/measurements.md, "Memory") are within 2x of it.
    The train rule asks a cluster for this much (``mem_mb``), and the config check refuses a cell above
    ``MEMORY_CAP_MB``.
    """
    r = record
    floats = family(r.arch).memory_floats(r.batch_size, sweep["n_eval"], r.N, r.d, r.width, r.layers)
    return int(BASE_MB + 4 * floats / 2**20)


def estimated_evaluation_memory_mb(sweep: dict, N: int, d: int) -> int:
    """An evaluation or data job's peak memory in MB, roughly: the largest evaluation set (n_eval x N' x d
    floats) a few times over, and the scoring's chunks (stsq.sts.scoring.ELEMENTS_PER_CHUNK floats, bounded)."""
    largest = sweep["n_eval"] * max(_lengths(sweep, N)) * d
    return int(BASE_MB + 4 * (3 * largest + 8 * 2**24) / 2**20)


def check_memory(config: dict) -> None:
    """Refuse, before any job runs, a cell whose training job would need more than ``MEMORY_CAP_MB``."""
    for sname, s in config["sweeps"].items():
        for r in cell_records(s):
            mb = estimated_memory_mb(s, r)
            if mb > MEMORY_CAP_MB:
                raise ConfigError(
                    f"config key 'sweeps.{sname}.archs.{r.arch}.widths': the cell {r.arch} N={r.N} d={r.d} "
                    f"width={r.width} needs about {mb / 1024:.0f} GiB to train (estimate from N, d, width and "
                    f"batch_size {r.batch_size}), above the cap of {MEMORY_CAP_MB // 1024} GiB; "
                    "lower the width, N, d or batch_size")


# The analysis jobs (the tidy table, the claims, the widths needed, the encodings table, each figure):
# a job's start with pandas and matplotlib, and the table's rows (curves and evaluations per model)
ANALYSIS_START_S = 2.0
ANALYSIS_S_PER_MODEL = 0.025


def estimated_analysis_seconds(sweep: dict) -> float:
    """One analysis job (aggregate, claims, critical, encodings, or a figure) of the sweep."""
    return ANALYSIS_START_S + ANALYSIS_S_PER_MODEL * len(cells(sweep)) * len(sweep["seeds"])


def sweep_cost(sweep: dict, pilot: bool = False) -> dict:
    """The size of a sweep and its estimated time on one CPU core, every job: training (``estimated_seconds``),
    evaluation sets, evaluation, the oracle and the analysis; ``jobs`` and ``seconds`` by rule.  A pilot
    (``pilot``) trains every cell of a (q, N, d) in one job, which starts once."""
    from stsq.cluster.requests import training_jobs

    grid = cells(sweep)
    qnd = list(dict.fromkeys((int(r.q), int(r.N), int(r.d)) for r in grid.itertuples()))
    records = cell_records(sweep)
    train = sum(estimated_seconds(sweep, r) for r in records)
    train_jobs = len(grid)
    if pilot:
        train -= (len(grid) - len(qnd)) * JOB_START_S
    else:  # a long cell trains one job per seed (stsq.cluster.requests.trains_per_seed), each with its start
        jobs = training_jobs({r.path: (estimated_seconds(sweep, r), seed_seconds(sweep, r)) for r in records},
                             sweep["seeds"], JOB_START_S)
        train, train_jobs = sum(jobs.values()), len(jobs)
    widths = oracle_widths(sweep)
    analysis = analysis_rules(sweep)
    jobs = {"train": len(qnd) if pilot else train_jobs, "eval_sets": len(qnd), "evaluate": len(qnd),
            "oracle": len(widths), "analysis": len(analysis)}
    seconds = {"train": train,
               "eval_sets": sum(estimated_data_seconds(sweep, N, d) for _, N, d in qnd),
               "evaluate": sum(estimated_evaluation_seconds(sweep, q, N, d) for q, N, d in qnd),
               "oracle": sum(estimated_oracle_seconds(sweep, q, N, w) for (q, N), w in widths.items()),
               "analysis": len(analysis) * estimated_analysis_seconds(sweep)}
    return {"train_jobs": len(grid), "models": len(grid) * len(sweep["seeds"]), "jobs": jobs, "seconds": seconds,
            "cpu_hours": sum(seconds.values()) / 3600}


def _hours(seconds: float) -> str:
    h = seconds / 3600
    return f"{h:.1f} CPU-hours" if h >= 1 else f"{h * 60:.1f} CPU-minutes"


LONG_ON_CPU_HOURS = 1.0


def cost_message(name: str, sweep: dict, gpu: bool, pilot: bool = False) -> str:
    """What ``snakemake`` prints before the first job: the sweep's size and its estimated time, every job."""
    c = sweep_cost(sweep, pilot)
    j, sec = c["jobs"], c["seconds"]
    cells_said = f"{j['train']} training jobs ({c['train_jobs']} cells, {c['models']} models)" if pilot else \
        f"{j['train']} training jobs ({c['train_jobs']} cells, {c['models']} models)"
    text = (f"sweep '{name}': {cells_said}, estimated {_hours(c['cpu_hours'] * 3600)} on one core for every job: "
            + ", ".join(f"{rule} {_hours(sec[rule])} ({j[rule]} jobs)" for rule in sec)
            + " (stsq.cluster.cost)")
    if gpu:
        return text + "; a GPU was found (nvidia-smi): training jobs use it, which is much faster"
    if c["cpu_hours"] > LONG_ON_CPU_HOURS and name != "cpu" and not pilot:
        text += ("; no GPU found. That is long on a CPU: for the minutes-sized reproduction run "
                 "`snakemake --cores all --config sweep=cpu` (or `make run`)")
    return text


# -- a sweep that measures samples (stsq.samples.run): one job per cell, its seeds one after another
# ----------------------
# A samples cell's step, its share of the test checks included, on one core: a fixed part and a part per position
# (times the heads, for the transformer), in seconds.  Fitted by eye to the upper side of the per-step times of the
# qstr sweep's 29 cells (their benchmark files over the steps in samples.csv: 2.9 to 23 ms a step; docs/measurements.md,
# "The cost of a samples job").  A cell stops at its lowest threshold or at the cap: the estimate is at the cap, an
# upper bound.
SAMPLE_STEP_S: dict[str, tuple[float, float]] = {
    "qstr_transformer": (3.0e-3, 0.35e-3),
    "qstr_ffn": (4.0e-3, 0.2e-3),
    "qstr_rnn": (8.0e-3, 1.0e-3),
}
SAMPLE_MEMORY_MB = (400.0, 5.0)  # a samples job's peak: torch and the test set, and per position (times the heads)


def estimated_samples_seconds(record, seeds: int) -> float:
    """A samples job's seconds on one core: every seed trained to the cap (an upper bound), and the job's start.  An
    arch without a rate is estimated at the costliest one."""
    fixed, per = SAMPLE_STEP_S.get(record.arch, max(SAMPLE_STEP_S.values(), key=lambda r: r[0] + 32 * r[1]))
    steps = math.ceil(record.cap / record.batch_size)
    return JOB_START_S + seeds * steps * (fixed + per * record.N * max(1, record.heads))


def estimated_samples_memory_mb(record) -> int:
    """A samples job's peak memory (MB)."""
    base, per = SAMPLE_MEMORY_MB
    return int(math.ceil(base + per * record.N * max(1, record.heads)))


def samples_cost_message(name: str, records, seeds: int) -> str:
    """What ``snakemake`` prints before the first job of a samples sweep: its jobs and their estimated time."""
    total = sum(estimated_samples_seconds(r, seeds) for r in records)
    return (f"sweep '{name}': {len(records)} samples jobs ({len(records) * seeds} runs), estimated at most "
            f"{_hours(total)} on one core, every cell at its cap (stsq.cluster.cost)")
