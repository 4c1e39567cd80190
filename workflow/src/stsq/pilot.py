"""The pilot of a sweep: every job of the sweep at its real shapes, for a few steps and one seed, timed;
and from those times, what the real sweep will cost on this machine (docs/cluster.md, "The pilot").

``pilot_sweep`` turns a sweep into its pilot (``snakemake --config sweep=NAME pilot=true`` runs it into
results/NAME_pilot/).  Every cell (arch, q, N, d, width) trains PILOT_STEPS steps of one seed; every
(q, N, d) gets its evaluation sets at every N' (PILOT_N_EVAL samples each) and its evaluation job; every
(q, N) its oracle job (PILOT_ORACLE_SAMPLES samples per N').  ``pilot_table`` reads each job's benchmark
file (Snakemake's: wall seconds, CPU seconds, peak resident memory) and writes, per job, the pilot's
estimate and measurement, and the real sweep's estimate and the measurement extrapolated to it:

- training: from the job's own timing line (stsq.train: the steps' seconds apart from the scoring's), the
  seconds per step times the real steps and seeds of every budget of the cell, plus the scoring per
  checkpoint times the real checkpoints (and samples), plus what the pilot job spent outside its
  training loop (starting Python and torch, loading data, saving);
- evaluation: the measured seconds beyond the start, times the real sweep's models per pilot model and its
  samples per pilot sample (n_eval, and the projection's samples);
- oracle: times the real samples per pilot sample;
- evaluation sets: times the real seeds and samples per pilot's.

No torch here: it runs where the rules are parsed, too.
"""

from __future__ import annotations

import copy
import csv
import math
import re
from pathlib import Path

from .experiment import DEFAULTS, Layout, cell
from .sweep import (
    JOB_START_S,
    attempts_needed,
    cells,
    estimated_data_seconds,
    estimated_evaluation_memory_mb,
    estimated_evaluation_seconds,
    estimated_memory_mb,
    estimated_oracle_seconds,
    estimated_seconds,
    oracle_widths,
    position_range,
)

PILOT_STEPS = 30  # training steps of every pilot cell (one checkpoint, one curve point)
PILOT_N_EVAL = 64  # samples per evaluation set
PILOT_ORACLE_SAMPLES = 128  # Monte Carlo samples per N' of the pilot's oracle
PILOT_PROJECTION_SAMPLES = 64  # ... of a pilot model's projection onto the ground-truth family
PILOT_SUFFIX = "_pilot"  # results/<sweep>_pilot/

PILOT_COLUMNS = ["rule", "job", "estimated_s", "measured_s", "cpu_s", "estimated_mb", "measured_mb",
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
    for a in p["archs"].values():
        a["steps"] = PILOT_STEPS
    return p


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


TIMING = re.compile(r"timing: (\d+) steps in ([0-9.]+)s, of which scoring ([0-9.]+)s")


def _timing(log: Path) -> tuple[int, float, float] | None:
    """(steps, loop seconds, scoring seconds) summed over a training log's seeds, or None."""
    if not log.exists():
        return None
    found = TIMING.findall(log.read_text())
    if not found:
        return None
    return (sum(int(n) for n, _, _ in found), sum(float(t) for _, t, _ in found),
            sum(float(sc) for _, _, sc in found))


def pilot_rows(real: dict, sweep_name: str, root: str | Path = ".",
               max_runtime_min: float | None = None) -> tuple[list[dict], float]:
    """One row per job of the pilot of ``real`` (named ``sweep_name``), measured from its benchmark files
    and training logs under ``root`` (the workflow's directory), with the real sweep's estimate and the
    extrapolation; and a job's start as measured (seconds)."""
    pilot = pilot_sweep(real)
    paths = Layout(sweep_name + PILOT_SUFFIX)
    root = Path(root)
    seeds_real, seeds_pilot = len(real["seeds"]), len(pilot["seeds"])
    n_ratio = real["n_eval"] / pilot["n_eval"]
    rows = []

    def add(rule, job, est, real_jobs, real_est, extrapolate, est_mb, need_attempts=False):
        b = _benchmark(root / paths.benchmark(rule, job))
        measured = b["s"] if b else math.nan
        extrapolated = extrapolate(measured) if b else math.nan
        attempts = (attempts_needed(extrapolated, max_runtime_min) if need_attempts and max_runtime_min and b
                    else math.nan)
        rows.append({"rule": rule, "job": job, "estimated_s": est, "measured_s": measured,
                     "cpu_s": b["cpu"] if b else math.nan, "estimated_mb": est_mb,
                     "measured_mb": b["mb"] if b else math.nan, "real_jobs": real_jobs, "real_estimated_s": real_est,
                     "extrapolated_s": extrapolated, "attempts_needed": attempts})

    # what starting a job costs on this machine, measured: the median of the training jobs' time outside
    # their training loop (Python, torch, the data, saving); the other jobs' work is what they took beyond it
    grid = cells(real)
    outside = []
    for (arch, q, N, d, width), _ in grid.groupby(["arch", "q", "N", "d", "width"], sort=False):
        job = cell(arch, q, N, d, PILOT_STEPS, width)
        b, t = _benchmark(root / paths.benchmark("train", job)), _timing(root / paths.log("train", job))
        if b and t:
            outside.append(max(0.0, b["s"] - t[1]))
    start = sorted(outside)[len(outside) // 2] if outside else JOB_START_S

    def beyond_start(seconds: float) -> float:
        return max(0.0, seconds - start)

    # training: one pilot cell per (arch, q, N, d, width), standing for each budget of the real sweep
    for (arch, q, N, d, width), g in grid.groupby(["arch", "q", "N", "d", "width"], sort=False):
        budgets = [int(s) for s in g["steps"]]
        job = cell(arch, q, N, d, PILOT_STEPS, width)
        real_est = sum(estimated_seconds(real, arch, N, d, s, width) for s in budgets)

        timing = _timing(root / paths.log("train", job))

        def train_extra(measured, budgets=budgets, timing=timing):
            if timing is None:  # no timing line: the whole job's time beyond its start, per step
                per_step, per_checkpoint, outside = beyond_start(measured) / (PILOT_STEPS * seeds_pilot), 0.0, start
            else:
                steps, loop, scoring = timing
                per_step = max(0.0, loop - scoring) / steps
                per_checkpoint = scoring / seeds_pilot  # the pilot scores once per seed, at its last step
                outside = max(0.0, measured - loop)
            return sum(outside + seeds_real * (per_step * s + math.ceil(s / real["checkpoint_every"])
                                               * per_checkpoint * n_ratio) for s in budgets)
        add("train", job, estimated_seconds(pilot, arch, N, d, PILOT_STEPS, width), len(budgets), real_est,
            train_extra, estimated_memory_mb(pilot, arch, N, d, width), need_attempts=True)

    # evaluation, evaluation sets: one job per (q, N, d) in both
    qnd = list(dict.fromkeys((int(r.q), int(r.N), int(r.d)) for r in grid.itertuples()))
    models_ratio = {k: 0.0 for k in qnd}
    for (q, N, d) in qnd:
        g = grid[(grid["q"] == q) & (grid["N"] == N) & (grid["d"] == d)]
        pilot_models = len(g.drop_duplicates(["arch", "width"])) * seeds_pilot
        models_ratio[q, N, d] = len(g) * seeds_real / max(1, pilot_models)
    samples_ratio = DEFAULTS["projection_samples"] / PILOT_PROJECTION_SAMPLES
    for (q, N, d) in qnd:
        job = f"q~{q}_N~{N}_d~{d}"
        # scoring grows with n_eval, the projection (stochastic models) with its own samples: the larger
        # of the two ratios, a bound rather than a split
        scale = models_ratio[q, N, d] * max(n_ratio, samples_ratio)
        add("evaluate", job, estimated_evaluation_seconds(pilot, q, N, d), 1,
            estimated_evaluation_seconds(real, q, N, d), lambda m, scale=scale: start + beyond_start(m) * scale,
            estimated_evaluation_memory_mb(pilot, N, d))
        add("eval_sets", job, estimated_data_seconds(pilot, N, d), 1, estimated_data_seconds(real, N, d),
            lambda m: start + beyond_start(m) * n_ratio * seeds_real / seeds_pilot,
            estimated_evaluation_memory_mb(pilot, N, d))

    # the oracle: one job per (q, N), every d_e of the transformers that read it
    for (q, N), widths in oracle_widths(real).items():
        job = f"q~{q}_N~{N}"
        add("oracle", job, estimated_oracle_seconds(pilot, q, N, widths, PILOT_ORACLE_SAMPLES), 1,
            estimated_oracle_seconds(real, q, N, widths),
            lambda m: start + beyond_start(m) * DEFAULTS["oracle_samples"] / PILOT_ORACLE_SAMPLES, math.nan)
    return rows, start


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def summary(rows: list[dict], start: float, sweep_name: str, max_runtime_min: float | None, retries: int) -> str:
    """What the pilot says about the real sweep: its cost on this machine by rule, beside the estimate said
    up front; the largest jobs; what did not run; and the cells that will not fit the partition limit."""
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
    lines = [f"pilot of sweep '{sweep_name}': {len(rows)} jobs timed at every shape, {PILOT_STEPS} steps of one seed",
             f"the real sweep on this machine, one core per job: {ext / 3600:.2f} CPU-hours extrapolated from the "
             f"pilot, {est / 3600:.2f} estimated up front (stsq.sweep)",
             f"a job's start (Python, torch, data, saving) measured at {start:.1f} s (estimate {JOB_START_S:g} s)"]
    for rule, b in by_rule.items():
        lines.append(f"  {rule:10s} {b['jobs']:4d} jobs: extrapolated {b['ext'] / 3600:8.3f} h, estimated "
                     f"{b['est'] / 3600:8.3f} h" + (f" ({b['missing']} not measured)" if b["missing"] else ""))
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
        over = [r for r in rows if r["rule"] == "train" and not math.isnan(r["attempts_needed"])
                and r["attempts_needed"] > allowed]
        lines.append(f"partition limit {max_runtime_min:g} min, {allowed} attempts per job: " + (
            f"{len(over)} cells will not fit: " + "; ".join(f"{r['job']} ({_duration(r['extrapolated_s'])})"
                                                            for r in over) if over else "every cell fits"))
    else:
        lines.append("no Slurm partition file given: no partition limit checked")
    return "\n".join(lines) + "\n"
