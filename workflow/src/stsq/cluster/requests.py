"""What a cluster job asks for (docs/cluster.md, "Time and memory"), from the cost of its job (stsq.cluster.cost):
its runtime and memory at each attempt, the attempts a long training job needs under the longest
partition, the Slurm partition file a run names, and which jobs share a pack (profiles/slurm-grouped).

Pure Python: workflow/rules/common.smk only calls these with what Snakemake knows of the run.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

RUNTIME_HEADROOM = 3.0  # a job asks for this many times its estimate (measured times are within 2-3x)
MIN_RUNTIME_MIN = 5  # and at least this many minutes (a job's start, a slow shared filesystem)
MEMORY_HEADROOM = 1.5  # a job asks for this many times its memory estimate (measured peaks: within 1.1x)
RETRY_GROWTH = 2.0  # each retry (after a TIMEOUT or an out-of-memory kill) asks for this much more time,
RETRY_DOUBLINGS = 2  # ... up to this many times (4x the first request, 12x the estimate): a training job
                     # that needs more resumes from its checkpoint at each further attempt, and the packs of
                     # profiles/slurm-grouped stay the same at any number of retries
MEMORY_RETRY_GROWTH = 1.5  # ... and memory


def runtime_request_min(seconds: float, attempt: int = 1, max_minutes: float | None = None,
                        headroom: float = RUNTIME_HEADROOM) -> int:
    """The runtime (minutes) a job estimated at ``seconds`` on one core asks the scheduler for at its
    ``attempt``: the estimate with ``headroom`` (RUNTIME_HEADROOM for an estimate; a pilot's measurement asks
    for less: ``pilot_factors``), doubling at the first RETRY_DOUBLINGS retries, capped at the longest
    partition's limit (a killed training job resumes from its checkpoint at its next attempt)."""
    growth = RETRY_GROWTH ** min(attempt - 1, RETRY_DOUBLINGS)
    minutes = max(MIN_RUNTIME_MIN, math.ceil(seconds * headroom * growth / 60))
    return int(min(minutes, max_minutes)) if max_minutes else minutes


# -- a seed as the unit of a long job ---------------------------------------------------------------------
# A cell's training job trains its seeds one after another; where that job would take more than SEED_JOB_S on
# one core, the cell trains one job per seed instead (rule train_seed; each seed's numbers are the same bits
# either way: its streams are its own).  An hour: a quarter of a 4-hour partition, so every seed job of the
# paper sweep finishes in its first attempt there; and at an hour the 4 s start of each extra job costs at most
# 0.1 % more CPU time, while below it the sweep's longest jobs (hours) set the wait anyway and splitting would
# only multiply the jobs (the cpu sweep's longest is 40 s: it keeps every seed together).
SEED_JOB_S = 3600.0


def trains_per_seed(job_seconds: float, seeds: int, threshold_s: float = SEED_JOB_S) -> bool:
    """Whether a cell whose multi-seed training job is estimated at ``job_seconds`` trains one job per seed."""
    return seeds > 1 and job_seconds > threshold_s


def training_jobs(cells: dict[str, tuple[float, float]], seeds, start_s: float,
                  threshold_s: float = SEED_JOB_S) -> dict[str, float]:
    """Every training job of a sweep and its estimated seconds: ``cells`` maps a cell to (its multi-seed job's
    seconds, one seed's seconds without a start); a cell over ``threshold_s`` becomes one job per seed,
    ``<cell>/seed~<s>``, of a start and one seed's seconds."""
    jobs = {}
    for c, (job_s, seed_s) in cells.items():
        if trains_per_seed(job_s, len(seeds), threshold_s):
            jobs.update({f"{c}/seed~{s}": start_s + seed_s for s in seeds})
        else:
            jobs[c] = job_s
    return jobs


# -- requests from the pilot's measurements (config `requests: pilot`; docs/cluster.md, 2d) ---------------
PILOT_HEADROOM_MIN = 1.5  # a measured job asks for at least this many times its measurement


def pilot_factors(rows: list[dict]) -> tuple[dict[tuple, float], dict[tuple, float]]:
    """From a pilot's training rows (tables/pilot.csv: each cell's ``job`` path, its real estimate and its
    extrapolated measurement), keyed by cost shape (arch, N, d, width): its measured / estimated ratio (the median
    over its cells, which differ only in q), and the headroom its own spread asks for: its cells' max / min ratio
    times PILOT_HEADROOM_MIN.  A shape's own: the 10-step timing of a minutes-long cell, noisy, does not widen the
    request of an hours-long one timed for its budget."""
    by_shape: dict[tuple, list[float]] = {}
    for r in rows:
        if r.get("rule") != "train":
            continue
        est, ext = float(r["real_estimated_s"]), float(r["extrapolated_s"])
        if not (est > 0 and math.isfinite(ext)):
            continue
        axes = dict(part.split("~", 1) for part in str(r["job"]).split("/"))
        by_shape.setdefault((axes["arch"], int(axes["N"]), int(axes["d"]), int(axes["width"])), []).append(ext / est)
    factors = {k: sorted(v)[len(v) // 2] for k, v in by_shape.items()}
    headrooms = {k: PILOT_HEADROOM_MIN * max(v) / min(v) for k, v in by_shape.items()}
    return factors, headrooms


def memory_request_mb(mb: float, attempt: int = 1) -> int:
    """The memory (MB) a job estimated at ``mb`` asks for at its ``attempt``."""
    return int(math.ceil(mb * MEMORY_HEADROOM * MEMORY_RETRY_GROWTH ** (attempt - 1)))


def attempts_needed(seconds: float, max_minutes: float) -> int:
    """How many attempts of at most ``max_minutes`` a training job estimated at ``seconds`` needs (each
    attempt resumes from the last checkpoint of the one before)."""
    return max(1, math.ceil(seconds / 60 / max_minutes))


# -- the partition file: its longest partition caps every request -----------------------------------------
def partition_file(executor_setting: str | None = None, environ=os.environ) -> str | None:
    """The Slurm partition file of a run, as the Slurm executor plugin finds it: its ``partition_config`` setting
    (``executor_setting``: Snakemake's ``workflow.executor_settings``, from ``--slurm-partition-config`` or a
    profile's ``slurm-partition-config``; Snakemake 9 parses the named executor's settings in a dry run too),
    else $SNAKEMAKE_SLURM_PARTITIONS (the plugin's own variable, read by a local run as well: the pilot's
    summary); None where neither names one."""
    return str(executor_setting) if executor_setting else environ.get("SNAKEMAKE_SLURM_PARTITIONS")


def longest_partition_min(path: str | None) -> float | None:
    """The longest ``max_runtime`` (minutes) of a Slurm partition file, or None (no file, or a partition
    without a limit)."""
    if not path:
        return None
    from snakemake_executor_plugin_slurm.partitions import read_partition_file

    limits = [p.limits.max_runtime for p in read_partition_file(Path(path))]
    return max(limits) if limits and all(math.isfinite(x) for x in limits) else None


def too_many_attempts(cell_seconds: dict[str, float], longest: float, retries: int) -> str | None:
    """Why the run cannot start, if some training jobs (``cell_seconds``: job -> estimated seconds; a cell
    trained one job per seed is one entry per seed, ``training_jobs``) need
    more attempts under the longest partition (``longest`` minutes) than ``retries`` allow; else None."""
    allowed = 1 + retries
    over = sorted(((attempts_needed(s, longest), s, c) for c, s in cell_seconds.items()
                   if attempts_needed(s, longest) > allowed), reverse=True)
    if not over:
        return None
    most, s, c = over[0]
    return (f"{len(over)} training cells need more attempts than this run allows ({allowed}; retries: "
            f"{allowed - 1}) under the longest partition of the partition file, {longest:g} minutes (each "
            f"attempt resumes from the last checkpoint). The longest, the cell {c}, is estimated at "
            f"{s / 3600:.1f} hours on one core and needs {most} attempts; the others: "
            + ", ".join(f"{cc} ({ss / 3600:.1f} h, {n})" for n, ss, cc in over[1:6])
            + (f" and {len(over) - 6} more" if len(over) > 6 else "")
            + f". Raise `retries` to at least {most - 1}, add a GPU partition, or lower these cells' steps or "
            "width. Nothing was submitted.")


# -- packs (profiles/slurm-grouped): the profile's `group-components` packs up to K independent jobs of a
# group into one submission, run one after another, so a pack asks for the sum of its jobs' runtimes. A
# job joins its group's pack only if K times its request at its last allowed attempt fits the longest
# partition; a longer one is submitted on its own (group `<group>_alone`, packs of one). Without a
# partition file every job packs. A run that packs nothing (profiles/slurm, a local run) sets no group.
PACKED_GROUPS = {"train": "train", "train_seed": "train", "evaluate": "evaluate", "oracle": "evaluate",
                 "eval_sets": "data"}
ALONE = "_alone"


def pack_group(rule: str, components: int, last_request_min: float, longest: float | None) -> str | None:
    """The Snakemake ``group`` of one job of ``rule``: None where its group packs nothing (``components``
    <= 1), else its group, or ``<group>_alone`` where ``components`` jobs of its request at the last attempt
    (``last_request_min``) would not fit the longest partition."""
    if components <= 1:
        return None
    group = PACKED_GROUPS[rule]
    return group if longest is None or components * last_request_min <= longest else group + ALONE


def packing_summary(last_requests: dict[str, list[float]], components: dict[str, int], longest: float | None,
                    last_attempt: int) -> str | None:
    """What each packed rule does with its jobs (``last_requests``: rule -> each job's request in minutes at
    its last attempt; ``components``: rule -> its group's pack size): how many pack and the most a pack can
    ask for, how many go alone; None where nothing packs."""
    parts = []
    for rule, requests in last_requests.items():
        k = components.get(rule, 1)
        if k <= 1 or not requests:
            continue
        groups = [pack_group(rule, k, r, longest) for r in requests]
        packed = [r for r, g in zip(requests, groups) if not g.endswith(ALONE)]
        alone = [r for r, g in zip(requests, groups) if g.endswith(ALONE)]
        parts.append(f"{rule}: {len(packed)} of {len(requests)} jobs in packs of up to {k}"
                     + (f" (a pack asks for at most {k * max(packed)} min at attempt {last_attempt})" if packed else "")
                     + (f", {len(alone)} alone (at most {max(alone)} min)" if alone else ""))
    if not parts:
        return None
    return ("packs (group-components; longest partition "
            + (f"{longest:g} min" if longest else "not given: every job packs") + "): " + "; ".join(parts))
