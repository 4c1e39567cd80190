"""The pilot of a sweep: every job of the sweep at its real shapes, for a few steps and one seed, timed;
and from those times, what the real sweep will cost on this machine (docs/cluster.md, "The pilot").

``pilot_sweep`` turns a sweep into its pilot (``snakemake --config sweep=NAME pilot=true`` runs it into
results/NAME_pilot/).  Every cell (arch, q, N, d, width) trains PILOT_STEPS steps of one seed, all cells of
a (q, N, d) in one job (``train_pilot``, which times each cell); every (q, N, d) gets its evaluation sets at
every N' (PILOT_N_EVAL samples each) and its evaluation job; every (q, N) its oracle job
(PILOT_ORACLE_SAMPLES samples per N').  ``pilot_rows`` reads those timings and each job's benchmark file
(Snakemake's: wall seconds, CPU seconds, peak resident memory) and writes, per job, the pilot's estimate
and measurement, and the real sweep's estimate and the measurement extrapolated to it:

- training: a job's start (measured: each pilot training job's time beyond its cells'), then per seed the
  cell's building, data and saving as measured, its seconds per step times the real steps, and its
  scoring per position and sample times what the real run scores (the test set every log_every steps,
  the unseen lengths every checkpoint_every), for every budget of the cell;
- evaluation: the measured seconds beyond the start, times the real sweep's models per pilot model and its
  samples per pilot sample (n_eval, and the projection's samples);
- oracle: times the real samples per pilot sample;
- evaluation sets: times the real seeds and samples per pilot's.

Torch is imported by ``train_pilot`` only: the rest runs where the rules are parsed, too.
"""

from __future__ import annotations

import copy
import csv
import math
from dataclasses import replace
from pathlib import Path

from stsq.cluster import cost
from stsq.cluster.requests import RUNTIME_HEADROOM, attempts_needed, trains_per_seed
from stsq.core.experiment import DEFAULTS, CellRecord, Layout, cell, model_keys
from stsq.core.sweep import arch_steps, cell_records, cells, oracle_widths, position_range
from stsq.report.pages import analysis_rules

PILOT_STEPS = 10  # training steps of every pilot cell (one checkpoint, one curve point)
PILOT_N_EVAL = 32  # samples per evaluation set
PILOT_ORACLE_SAMPLES = 64  # Monte Carlo samples per N' of the pilot's oracle
PILOT_PROJECTION_SAMPLES = 32  # ... of a pilot model's projection onto the ground-truth family
PILOT_SUFFIX = "_pilot"  # results/<sweep>_pilot/
# Where the cost matters (a real job of the cell's shape estimated above PILOT_BUDGET_ABOVE_S on one core), the
# pilot also times the cell's step on its own: PILOT_WARMUP_STEPS steps, then steps until PILOT_BUDGET_S have
# passed (at least PILOT_STEPS), so a 350 ms step is timed over 2 s rather than 10 steps shared with a neighbour.
PILOT_BUDGET_S = 2.0
PILOT_BUDGET_ABOVE_S = 600.0
PILOT_WARMUP_STEPS = 2

PILOT_COLUMNS = ["rule", "job", "device", "estimated_s", "measured_s", "cpu_s", "estimated_mb", "measured_mb",
                 "real_jobs", "real_estimated_s", "extrapolated_s", "attempts_needed"]


def pilot_sweep(sweep: dict) -> dict:
    """The pilot of ``sweep``: the same grid of shapes (every arch, q, N, d, width and N'), one seed,
    PILOT_STEPS steps per cell (a budget axis collapses to one run), PILOT_N_EVAL samples per
    evaluation set, and the real sweep's position range L."""
    p = copy.deepcopy(sweep)
    p["seeds"] = [sweep["seeds"][0]]
    p["n_eval"] = min(int(sweep["n_eval"]), PILOT_N_EVAL)
    p["log_every"] = p["checkpoint_every"] = PILOT_STEPS
    p["position_range"] = position_range(sweep)
    p["oracle_samples"] = PILOT_ORACLE_SAMPLES
    p["projection_samples"] = PILOT_PROJECTION_SAMPLES
    for a in p["archs"].values():
        a["steps"] = PILOT_STEPS
        a.pop("steps_by_N", None)
    return p


# timed_s, timed_cpu_s: the timed steps of a long cell's step timed alone (time_steps); timing_s: that whole timing
# (building the model, its warm-up steps), which is neither the cell's training nor the job's start
PILOT_TRAIN_COLUMNS = ["cell", "arch", "width", "device", "seconds", "loop_s", "scoring_s", "first_step_s", "steps",
                       "scored_length", "peak_mb", "estimated_mb", "timed_steps", "timed_s", "timed_cpu_s",
                       "timing_s"]


def step_budget_s(real: dict, record: CellRecord) -> float:
    """The seconds a pilot times ``record``'s step for on its own (``time_steps``): PILOT_BUDGET_S where a real
    job of its shape (its longest budget at its N) is estimated above PILOT_BUDGET_ABOVE_S, else 0 (its 10 steps do)."""
    longest = max(int(s) for s in arch_steps(real["archs"][record.arch], record.N))
    job = cost.estimated_seconds(real, replace(record, steps=longest))
    return PILOT_BUDGET_S if job > PILOT_BUDGET_ABOVE_S else 0.0


def time_steps(record: CellRecord, seed: int, budget_s: float, device="cpu") -> tuple[int, float, float]:
    """(steps, seconds, CPU seconds) of ``record``'s training step run on its own after PILOT_WARMUP_STEPS: at
    least PILOT_STEPS steps and until ``budget_s`` of this process's CPU time have passed (each step's loss read,
    so a GPU's too is timed whole).  CPU time, not wall time: on a machine shared with other jobs (the pilot runs
    two at once on two cores) a process waits for a core for a varying share of the wall time, which a cluster
    job on its own cores does not; what it computes takes the same CPU time either way."""
    import time

    from stsq.width.train import TrainSpec, setup, train_step

    spec = TrainSpec(**record.to_dict(), seed=int(seed))
    _, step, g = setup(spec, device)  # training's own model, step and data stream
    for _ in range(PILOT_WARMUP_STEPS):
        float(train_step(step, spec, g))
    n, t0, c0 = 0, time.perf_counter(), time.process_time()
    while n < PILOT_STEPS or time.process_time() - c0 < budget_s:
        float(train_step(step, spec, g))
        n += 1
    return n, time.perf_counter() - t0, time.process_time() - c0


def pilot_cells(sweep: dict, q: int, N: int, d: int) -> list[CellRecord]:
    """The records of every cell of a pilot sweep at (q, N, d), smallest estimated memory first (so the
    process's peak after a cell is that cell's own peak, or a smaller one's)."""
    records = [r for r in cell_records(sweep) if (r.q, r.N, r.d) == (q, N, d)]
    return sorted(records, key=lambda r: (cost.estimated_memory_mb(sweep, r), cost.estimated_seconds(sweep, r)))


def train_pilot(records: list[CellRecord], estimated_mb: list[int], sweep_name: str, seeds, data_index, out,
                device="cpu", log=print, budgets_s: list[float] | None = None) -> None:
    """Train every cell of ``records`` (a pilot sweep's cells of one (q, N, d): ``pilot_cells``) in this one
    process, into the same files the train rule writes (models, curves, checkpoints of
    results/``sweep_name``/), and write each cell's timing to ``out``: its seconds (building, data, steps,
    scoring, saving), its training loop's and scoring's seconds, the lengths it scored, and the process's
    peak resident memory after it, beside ``estimated_mb``.

    One process per (q, N, d), not per cell: a paper sweep has hundreds of cells, and starting Python and
    torch for each would cost the pilot more than its training."""
    import resource
    import shutil
    import time

    from stsq.core.experiment import CURVE
    from stsq.core.files import write_rows
    from stsq.width.train import train_cell

    paths = Layout(sweep_name)
    seeds = [int(s) for s in seeds]
    rows = []
    budgets_s = budgets_s or [0.0] * len(records)
    for record, estimate, budget in zip(records, estimated_mb, budgets_s):
        c = record.path
        # a pilot times every cell from its first step: a rerun after a kill does not resume from checkpoints
        shutil.rmtree(paths.checkpoints(c), ignore_errors=True)
        t = time.perf_counter()
        results = train_cell(record, seeds, data_index, [paths.model(c, s) for s in seeds],
                             [paths.model(c, s, CURVE) for s in seeds], paths.checkpoints(c), device=device, log=log)
        seconds = time.perf_counter() - t
        timed_steps, timed_s, timed_cpu_s = (time_steps(record, seeds[0], budget, device) if budget > 0
                                             else (0, 0.0, 0.0))
        timing_s = time.perf_counter() - t - seconds
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
        rows.append({"cell": c, "arch": record.arch, "width": record.width, "device": str(device),
                     "seconds": seconds, "loop_s": sum(r.loop_seconds for r in results),
                     "scoring_s": sum(r.scoring_seconds for r in results),
                     "first_step_s": sum(r.first_step_seconds for r in results),
                     "steps": sum(r.steps_done - r.resumed_from for r in results),
                     "scored_length": record.N + sum(results[0].unseen_lengths), "peak_mb": peak,
                     "estimated_mb": estimate, "timed_steps": timed_steps, "timed_s": timed_s,
                     "timed_cpu_s": timed_cpu_s, "timing_s": timing_s})
        timed = (f"; its step timed alone: {timed_steps} steps in {timed_s:.2f} s ({timed_cpu_s:.2f} s CPU)"
                 if timed_steps else "")
        log(f"pilot {c}: {seconds:.2f} s, process peak {peak:.0f} MB so far (estimate {estimate:.0f} MB){timed}")
    write_rows(out, rows, PILOT_TRAIN_COLUMNS)


def _benchmark(path: Path) -> dict | None:
    """Snakemake's benchmark file: wall seconds (s), CPU seconds (cpu_time) and peak memory (max_rss, MB)."""
    if not path.exists():
        return None
    with open(path) as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    if not rows:
        return None
    r = rows[-1]

    def num(k):
        try:
            return float(r.get(k, "nan"))
        except ValueError:
            return math.nan
    return {"s": num("s"), "cpu": num("cpu_time"), "mb": num("max_rss")}


def _read_rows(path: Path) -> list[dict]:
    """The rows of a CSV file, or none if it is missing."""
    if not path.exists():
        return []
    with open(path) as fh:
        return list(csv.DictReader(fh))


def pilot_rows(real: dict, sweep_name: str, root: str | Path = ".",
               max_runtime_min: float | None = None) -> tuple[list[dict], float]:
    """One row per job of the pilot of ``real`` (named ``sweep_name``), measured from its benchmark files
    and training logs under ``root`` (the workflow's directory), with the real sweep's estimate and the
    extrapolation; and a job's start as measured (seconds)."""
    pilot = pilot_sweep(real)
    paths = Layout(sweep_name + PILOT_SUFFIX)
    root = Path(root)
    grid = cells(real)
    qnd = list(dict.fromkeys((int(r.q), int(r.N), int(r.d)) for r in grid.itertuples()))
    timed, start = _timed_cells(paths, root, qnd)
    rows = _train_rows(real, pilot, timed, start, max_runtime_min)
    seeds_real, seeds_pilot = len(real["seeds"]), len(pilot["seeds"])
    n_ratio = real["n_eval"] / pilot["n_eval"]

    def bench(rule, job):
        return _benchmark(root / paths.benchmark(rule, job))

    # evaluation, evaluation sets: one job per (q, N, d) in both; scoring grows with n_eval and the models,
    # the projection (stochastic models) with its own samples: the larger of the two ratios, a bound rather
    # than a split
    samples_ratio = DEFAULTS["projection_samples"] / PILOT_PROJECTION_SAMPLES
    for (q, N, d) in qnd:
        g = grid[(grid["q"] == q) & (grid["N"] == N) & (grid["d"] == d)]
        pilot_models = len(g.drop_duplicates(model_keys("q", "N", "d", "steps", "seed"))) * seeds_pilot
        models_ratio = len(g) * seeds_real / max(1, pilot_models)
        job = f"q~{q}_N~{N}_d~{d}"
        mb = cost.estimated_evaluation_memory_mb(pilot, N, d)
        rows.append(_job_row("evaluate", job, cost.estimated_evaluation_seconds(pilot, q, N, d),
                             cost.estimated_evaluation_seconds(real, q, N, d), mb, bench("evaluate", job), start,
                             models_ratio * max(n_ratio, samples_ratio)))
        rows.append(_job_row("eval_sets", job, cost.estimated_data_seconds(pilot, N, d),
                             cost.estimated_data_seconds(real, N, d), mb, bench("eval_sets", job), start,
                             n_ratio * seeds_real / seeds_pilot))
    # the oracle: one job per (q, N), every d_e of the transformers that read it
    for (q, N), widths in oracle_widths(real).items():
        job = f"q~{q}_N~{N}"
        rows.append(_job_row("oracle", job, cost.estimated_oracle_seconds(pilot, q, N, widths),
                             cost.estimated_oracle_seconds(real, q, N, widths), math.nan, bench("oracle", job), start,
                             DEFAULTS["oracle_samples"] / PILOT_ORACLE_SAMPLES))
    # the analysis (the tidy table, claims, widths needed, encodings table, figures): what the fastest of
    # them took stands for its start (pandas, matplotlib); the rest grows with the models read
    a_rules = analysis_rules(pilot)  # the rules its pilot ran
    benches = {r: bench("analysis", r) for r in a_rules}
    a_start = min((b["s"] for b in benches.values() if b), default=0.0)
    real_models = len(grid) * seeds_real
    pilot_models = len(grid.drop_duplicates(model_keys("steps", "seed"))) * seeds_pilot
    for r in a_rules:
        rows.append(_job_row("analysis", r, cost.estimated_analysis_seconds(pilot),
                             cost.estimated_analysis_seconds(real), math.nan, benches[r], a_start,
                             real_models / max(1, pilot_models)))
    return rows, start


def _job_row(rule: str, job: str, estimated_s: float, real_estimated_s: float, estimated_mb: float,
             bench: dict | None, base: float, scale: float) -> dict:
    """One pilot row of a job that is not training: its benchmark (None: not measured), extrapolated to the
    real sweep as ``base`` (a job's start) plus ``scale`` times the pilot's time beyond it."""
    nan = math.nan
    measured = bench["s"] if bench else nan
    return {"rule": rule, "job": job, "device": "cpu", "estimated_s": estimated_s, "measured_s": measured,
            "cpu_s": bench["cpu"] if bench else nan, "estimated_mb": estimated_mb,
            "measured_mb": bench["mb"] if bench else nan, "real_jobs": 1, "real_estimated_s": real_estimated_s,
            "extrapolated_s": base + max(0.0, measured - base) * scale if bench else nan, "attempts_needed": nan}


def _timing_s(row: dict) -> float:
    """The wall seconds a pilot cell's step took to be timed alone (a pilot table without ``timing_s``: its timed
    steps)."""
    value = row.get("timing_s") or row.get("timed_s") or 0.0
    return float(value)


def _timed_cells(paths: Layout, root: Path, qnd) -> tuple[dict, float]:
    """Each pilot cell's timing (``train_pilot``'s rows, by cell) and what starting a job costs on this machine
    (Python, torch, Snakemake's wrapper): the median over the pilot's training jobs of each job's time beyond
    its cells' and their steps' timing alone (the estimate JOB_START_S where none was measured)."""
    timed, outside = {}, []
    for q, N, d in qnd:
        t = _read_rows(root / paths.pilot_training(q, N, d))
        b = _benchmark(root / paths.benchmark("train", f"q~{q}_N~{N}_d~{d}"))
        for r in t:
            timed[r["cell"]] = {**r, "job_s": b["s"] if b else math.nan}
        if b and t:
            outside.append(max(0.0, b["s"] - sum(float(r["seconds"]) + _timing_s(r) for r in t)))
    return timed, sorted(outside)[len(outside) // 2] if outside else cost.JOB_START_S


def _train_rows(real: dict, pilot: dict, timed: dict, start: float, max_runtime_min) -> list[dict]:
    """One row per pilot cell (every axis but the budget), standing for each budget of the real sweep: the real
    job starts, then per seed builds, loads and saves as the pilot's did, steps at the pilot's seconds per
    step, and scores its test set every log_every steps and its unseen lengths every checkpoint_every, at the
    pilot's seconds per scored position and sample."""
    seeds_real, seeds_pilot = len(real["seeds"]), len(pilot["seeds"])
    n_ratio = real["n_eval"] / pilot["n_eval"]
    rows = []
    shape = model_keys("steps", "seed")
    by_shape: dict[tuple, list[CellRecord]] = {}  # the real sweep's cells of each pilot cell (one per budget)
    for r in cell_records(real):
        by_shape.setdefault(tuple(getattr(r, k) for k in shape), []).append(r)
    for key, records in by_shape.items():
        axes = dict(zip(shape, key))
        N = axes["N"]
        budgets = [r.steps for r in records]
        job = cell(**axes, steps=PILOT_STEPS)
        t = timed.get(job)
        real_est = sum(cost.estimated_seconds(real, r) for r in records)
        if t is None:
            measured = mb = extrapolated = math.nan
        else:
            seconds, loop, scoring = float(t["seconds"]), float(t["loop_s"]), float(t["scoring_s"])
            first, steps = float(t["first_step_s"]), int(t["steps"])
            # the first step (allocation, warm-up) once per seed, the others at the pilot's pace: that of the step
            # timed on its own for its time budget where it was (time_steps), else of the pilot's own steps
            per_step = max(0.0, loop - scoring - first) / max(1, steps - seeds_pilot)
            # (its CPU time on a CPU: what a job on its own cores takes; wall time on a GPU)
            if int(float(t.get("timed_steps") or 0)) > 0:
                on_cpu = str(t.get("device", "cpu")).startswith("cpu") and t.get("timed_cpu_s") not in (None, "")
                per_step = float(t["timed_cpu_s" if on_cpu else "timed_s"]) / int(float(t["timed_steps"]))
            per_position = scoring / max(1, int(t["scored_length"])) / seeds_pilot
            unseen = int(t["scored_length"]) - N
            measured, mb = seconds, float(t["peak_mb"])
            extrapolated = sum(
                start + seeds_real * (max(0.0, seconds - loop) / seeds_pilot + first / seeds_pilot
                                      + per_step * (s - 1)
                                      + n_ratio * per_position * (math.ceil(s / real["log_every"]) * N
                                                                  + math.ceil(s / real["checkpoint_every"]) * unseen))
                for s in budgets)
        # a cell trained one job per seed (stsq.cluster.requests.trains_per_seed) needs the attempts of one seed's job
        job_s = extrapolated
        if t is not None and trains_per_seed(real_est, seeds_real):
            job_s = start + (extrapolated - start * len(budgets)) / (seeds_real * len(budgets))
        attempts = (attempts_needed(job_s, max_runtime_min) if max_runtime_min and t is not None
                    else math.nan)
        rows.append({"rule": "train", "job": job, "device": t["device"] if t is not None else "",
                     "estimated_s": cost.estimated_seconds(pilot, replace(records[0], steps=PILOT_STEPS)),
                     "measured_s": measured, "cpu_s": math.nan,
                     "estimated_mb": cost.estimated_memory_mb(pilot, records[0]),
                     "measured_mb": mb, "real_jobs": len(budgets), "real_estimated_s": real_est,
                     "extrapolated_s": extrapolated, "attempts_needed": attempts})
    return rows


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _units(rows: list[dict]) -> str:
    """What the extrapolated hours are: CPU-hours, or GPU-hours for training that ran on a GPU."""
    gpus = sorted({str(r["device"]) for r in rows if r["rule"] == "train" and str(r["device"]).startswith("cuda")})
    return f"training in GPU-hours on {', '.join(gpus)}, the other jobs in CPU-hours" if gpus else "CPU-hours"


def shape_spreads(rows: list[dict]) -> list[tuple[str, float, float, int]]:
    """The training cells of one cost shape (every axis but q, which does not change a step's work), with the
    least and the most the pilot extrapolated for them and how many: (shape, min s, max s, cells), the most
    expensive shape first."""
    by: dict[str, list[float]] = {}
    for r in rows:
        if r["rule"] == "train" and not math.isnan(r["extrapolated_s"]):
            shape = "/".join(p for p in str(r["job"]).split("/") if not p.startswith("q~"))
            by.setdefault(shape, []).append(float(r["extrapolated_s"]))
    return sorted(((k, min(v), max(v), len(v)) for k, v in by.items() if len(v) > 1), key=lambda x: -x[2])


TIMED = (f"{PILOT_STEPS} steps of one seed (the step of a cell whose real job exceeds {PILOT_BUDGET_ABOVE_S:g} s "
         f"timed alone for {PILOT_BUDGET_S:g} CPU-s)")


def summary(rows: list[dict], start: float, sweep_name: str, max_runtime_min: float | None, retries: int,
            timed: str = TIMED) -> str:
    """What the pilot says about the real sweep: its cost on this machine by rule, beside the estimate said
    up front; the largest jobs; what did not run; and the cells (of the runner: training, or samples) that will not
    fit the partition limit."""
    by_rule: dict = {}
    for r in rows:
        b = by_rule.setdefault(r["rule"], {"est": 0.0, "ext": 0.0, "jobs": 0, "missing": 0})
        b["est"] += r["real_estimated_s"]
        b["jobs"] += 1
        if math.isnan(r["extrapolated_s"]):
            b["missing"] += 1
        else:
            b["ext"] += r["extrapolated_s"]
    est = sum(b["est"] for b in by_rule.values())
    ext = sum(b["ext"] for b in by_rule.values())
    lines = [f"pilot of sweep '{sweep_name}': {len(rows)} jobs timed at every shape, {timed}",
             f"the real sweep on this machine, one device per job: {ext / 3600:.2f} hours extrapolated from the pilot "
             f"({_units(rows)}), {est / 3600:.2f} CPU-hours estimated up front (stsq.cluster.cost)",
             f"a job's start (Python, torch, data, saving) measured at {start:.1f} s (estimate {cost.JOB_START_S:g} s)"]
    for rule, b in by_rule.items():
        ratio = b["ext"] / b["est"] if b["est"] else math.nan
        lines.append(f"  {rule:10s} {b['jobs']:4d} jobs: extrapolated {b['ext'] / 3600:8.3f} h, estimated (one core) "
                     f"{b['est'] / 3600:8.3f} h, ratio {ratio:.2f}"
                     + (f" ({b['missing']} not measured)" if b["missing"] else ""))
    ratio = ext / est if est else math.nan
    lines.append(f"the estimate said up front is {'within' if 0.5 <= ratio <= 2 else 'NOT within'} 2x of the pilot "
                 f"(ratio {ratio:.2f}); the cluster requests ask for {RUNTIME_HEADROOM:g}x the estimate")
    spreads = shape_spreads(rows)
    if spreads:
        widest = max(spreads, key=lambda x: x[2] / x[1] if x[1] > 0 else 0)
        k, lo, hi, n = spreads[0]
        lines.append(f"cells of one cost shape (differing only in q): at the most expensive, {k}, {n} cells "
                     f"{_duration(lo)} to {_duration(hi)} ({hi / lo:.2f}x); widest spread {widest[2] / widest[1]:.2f}x "
                     f"({widest[0]})")
    top = sorted((r for r in rows if not math.isnan(r["extrapolated_s"])), key=lambda r: -r["extrapolated_s"])[:5]
    lines.append("largest jobs (extrapolated): " + "; ".join(
        f"{r['rule']} {r['job']} {_duration(r['extrapolated_s'])} (estimate {_duration(r['real_estimated_s'])}, "
        f"pilot peak {r['measured_mb']:.0f} MB)" for r in top))
    heaviest = max((r for r in rows if not math.isnan(r["measured_mb"])), key=lambda r: r["measured_mb"], default=None)
    if heaviest:
        lines.append(f"largest peak memory in the pilot: {heaviest['measured_mb']:.0f} MB ({heaviest['rule']} "
                     f"{heaviest['job']}; estimate {heaviest['estimated_mb']:.0f} MB)")
    if max_runtime_min:
        allowed = retries + 1
        over = [r for r in rows if not math.isnan(r["attempts_needed"]) and r["attempts_needed"] > allowed]
        lines.append(f"partition limit {max_runtime_min:g} min, {allowed} attempts per job: " + (
            f"{len(over)} cells will not fit: " + "; ".join(f"{r['job']} ({_duration(r['extrapolated_s'])})"
                                                            for r in over) if over else "every cell fits"))
    else:
        lines.append("no Slurm partition file given: no partition limit checked")
    return "\n".join(lines) + "\n"


# -- the samples measure's pilot (docs/retrieval.md): every cell at its real shape for a few checks of one seed --------
SAMPLES_PILOT_CHECKS = 3  # test checks of every pilot cell: its cap is these checks' samples


SAMPLES_TIMED = f"{SAMPLES_PILOT_CHECKS} checks of one seed, a job's start taken as {cost.JOB_START_S:g} s"


def width_pilot(real: dict, sweep_name: str, root: str | Path = ".", max_runtime_min: float | None = None):
    """The width measure's pilot (stsq.core.measures: ``pilot``): its rows, a job's start, how it timed."""
    rows, start = pilot_rows(real, sweep_name, root, max_runtime_min)
    return rows, start, TIMED


def samples_pilot(real: dict, sweep_name: str, root: str | Path = ".", max_runtime_min: float | None = None):
    """The samples measure's pilot (stsq.core.measures: ``pilot``): its rows, a job's start, how it timed."""
    rows, start = samples_pilot_rows(real, sweep_name, root, max_runtime_min)
    return rows, start, SAMPLES_TIMED


def samples_pilot_sweep(sweep: dict) -> dict:
    """The pilot of a samples sweep: the same cells (every arch, q, N, mode, heads), one seed, and a cap of
    SAMPLES_PILOT_CHECKS checks' samples for every cell."""
    p = copy.deepcopy(sweep)
    p["seeds"] = [sweep["seeds"][0]]
    p["cap"] = int(sweep["batch_size"]) * int(sweep["check_every"]) * SAMPLES_PILOT_CHECKS
    for a in p["archs"].values():
        a.pop("cap", None)
        if "check_every" in a:
            a["cap"] = int(sweep["batch_size"]) * int(a["check_every"]) * SAMPLES_PILOT_CHECKS
    return p


def samples_pilot_rows(real: dict, sweep_name: str, root: str | Path = ".",
                       max_runtime_min: float | None = None) -> tuple[list[dict], float]:
    """One row per samples job of the pilot of ``real``: its benchmark file and its steps (its samples.csv),
    extrapolated to the real job as a job's start (stsq.cluster.cost.JOB_START_S) plus the pilot's time beyond it
    per step times the real job's steps at the cap, every seed (an upper bound, as the estimate is)."""
    from stsq.retrieval.cells import sample_cells
    pilot = samples_pilot_sweep(real)
    paths = Layout(sweep_name + PILOT_SUFFIX)
    root = Path(root)
    rows = []
    for r_pilot, r_real in zip(sample_cells(pilot), sample_cells(real)):
        steps = [int(x["steps"]) for x in _read_rows(root / paths.root / "samples" / r_pilot.path / "samples.csv")]
        pilot_steps = max(steps, default=0) * len(pilot["seeds"])
        real_steps = math.ceil(r_real.cap / r_real.batch_size) * len(real["seeds"])
        row = _job_row("samples", r_pilot.path, cost.estimated_samples_seconds(r_pilot, len(pilot["seeds"])),
                       cost.estimated_samples_seconds(r_real, len(real["seeds"])),
                       cost.estimated_samples_memory_mb(r_real),
                       _benchmark(root / paths.benchmark("samples", r_pilot.path)), cost.JOB_START_S,
                       real_steps / pilot_steps if pilot_steps else math.nan)
        if max_runtime_min and not math.isnan(row["extrapolated_s"]):
            row["attempts_needed"] = attempts_needed(row["extrapolated_s"], max_runtime_min)
        rows.append(row)
    return rows, cost.JOB_START_S
