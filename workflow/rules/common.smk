# Shared by the rules, in order: the config's validation, the sweep's grid, the helpers.
# No rules here; no torch import (stsq.experiment and stsq.sweep are torch-free).
import json
import math
import os
import shlex
import shutil
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import Paramspace

SRC = str(Path(workflow.basedir) / "workflow" / "src")  # the stsq package
sys.path.insert(0, SRC)
# Every shell command finds `python -m stsq` in this checkout, in the venv or a conda env alike.
shell.prefix(f"set -euo pipefail; export PYTHONPATH={shlex.quote(SRC)}; ")

from stsq import experiment as ex  # noqa: E402  the experiment's vocabulary: archs, paths, columns, figures
from stsq import sweep as sw  # noqa: E402  the cost estimates and the resource requests derived from them
from stsq.sweep import ConfigError, as_list, cell_lr, cells, estimated_memory_mb, estimated_seconds  # noqa: E402
from stsq.sweep import validate_config  # noqa: E402
from stsq.sweep import cost_message  # noqa: E402
from stsq.report import drawn_figures, figure_plan  # noqa: E402
from stsq.pilot import PILOT_SUFFIX, pilot_sweep  # noqa: E402


# -- 1. validation: the schema (names and defaults from stsq.experiment), then the cross-key
# checks; any error names the key and stops before a job runs.
try:
    validate_config(config, Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml")
except ConfigError as e:
    raise WorkflowError(f"Invalid config: {e}") from None


# -- 2. the chosen sweep, its (arch, q, N, d, steps, width) grid and where its outputs live; with
# pilot=true, the sweep's pilot (every shape, a few steps of one seed: stsq.pilot) under results/<sweep>_pilot/
PILOT = bool(config["pilot"])
REAL_SWEEP = config["sweeps"][config["sweep"]]
SWEEP_NAME = config["sweep"] + (PILOT_SUFFIX if PILOT else "")
SWEEP = pilot_sweep(REAL_SWEEP) if PILOT else REAL_SWEEP
# Monte Carlo samples of the oracle and of a model's projection (fewer in a pilot)
ORACLE_SAMPLES = sw.samples(SWEEP, "oracle_samples")
PROJECTION_SAMPLES = sw.samples(SWEEP, "projection_samples")
SEEDS = [int(s) for s in SWEEP["seeds"]]
PATHS = ex.Layout(SWEEP_NAME)  # every output of this sweep lives under results/<sweep>/
POSITION_RANGE = sw.position_range(SWEEP)  # L of randomized positions (stsq.sweep.position_range)

# Wildcards (plain strings) are what rules pass on, never Paramspace's numpy scalars.
GRID = Paramspace(cells(SWEEP), filename_params=None)
assert GRID.wildcard_pattern == ex.cell(), GRID.wildcard_pattern
CELLS = list(GRID.instance_patterns)
GRID_ROWS = list(GRID.dataframe.itertuples(index=False))  # (arch, q, N, d, steps, width) of every cell
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
# job and path, which costs a 10,000-cell sweep's DAG seconds (docs/performance.md, part e).
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
    print(cost_message(SWEEP_NAME, SWEEP, gpu=shutil.which("nvidia-smi") is not None, pilot=PILOT), file=sys.stderr)


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


# -- 3. helpers
# Each cell's estimated training time on one core (stsq.sweep.estimated_seconds); longest cell first: a
# cell job's priority is its estimate in seconds.
CELL_SECONDS = {c: estimated_seconds(SWEEP, r.arch, int(r.N), int(r.d), int(r.steps), int(r.width))
                for c, r in zip(CELLS, GRID_ROWS)}
PRIORITY = {c: max(1, round(s)) for c, s in CELL_SECONDS.items()}
# The training settings of each cell as CLI arguments (the schema filled in the defaults; the learning
# rate may depend on the width, stsq.sweep.cell_lr).
ARCH_ARGS = {}
for r in GRID_ROWS:
    _s = sw.cell_settings(SWEEP, r.arch, int(r.width))
    ARCH_ARGS[r.arch, int(r.width)] = (
        f"--lr {_s['lr']!r} --optimizer {_s['optimizer']} --schedule {_s['schedule']} --layers {_s['layers']}"
        + (f" --position-range {_s['position_range']}" if _s["position_range"] else ""))


def cell_memory_mb(w, attempt):
    """The train job's memory request: its cell's estimate with headroom, more at each retry."""
    return sw.memory_request_mb(estimated_memory_mb(SWEEP, w.arch, int(w.N), int(w.d), int(w.width)), attempt)


# -- cluster limits: each job asks for a runtime from its own estimate (stsq.sweep.runtime_request_min),
# growing with every retry and capped at the longest partition of the Slurm partition file the profile
# names (`slurm-partition-config`; docs/cluster.md).  The profiles set no runtime of their own for these.
_MAX_RUNTIME = []


def _partition_file():
    """The Slurm partition file of this run: the executor's `slurm-partition-config` (from the command line
    or the profile; read from them directly in a dry run, which runs no Slurm executor), else
    $SNAKEMAKE_SLURM_PARTITIONS, as the plugin reads it; None for a local run."""
    settings = getattr(workflow, "executor_settings", None)
    if getattr(settings, "partition_config", None):
        return settings.partition_config
    argv = sys.argv[1:]

    def option(names):
        for i, a in enumerate(argv):
            for n in names:
                if a == n and i + 1 < len(argv):
                    return argv[i + 1]
                if a.startswith(f"{n}="):
                    return a.split("=", 1)[1]
        return None

    if option(["--slurm-partition-config"]):
        return option(["--slurm-partition-config"])
    profile = option(["--profile", "--workflow-profile"]) or os.environ.get("SNAKEMAKE_PROFILE")
    if profile:
        p = Path(profile)
        file = p if p.is_file() else next((p / n for n in ("config.yaml", "profile.yaml") if (p / n).exists()), None)
        if file is not None:
            import yaml

            path = (yaml.safe_load(file.read_text()) or {}).get("slurm-partition-config")
            if path:
                return path
    return os.environ.get("SNAKEMAKE_SLURM_PARTITIONS")


def max_runtime_min():
    """The longest `max_runtime` (minutes) of the run's Slurm partition file, or None (no file, or a
    partition without a limit)."""
    if not _MAX_RUNTIME:
        path = _partition_file()
        limits = []
        if path:
            from snakemake_executor_plugin_slurm.partitions import read_partition_file

            limits = [p.limits.max_runtime for p in read_partition_file(Path(path))]
        _MAX_RUNTIME.append(max(limits) if limits and all(math.isfinite(x) for x in limits) else None)
    return _MAX_RUNTIME[0]


def train_runtime_min(w, attempt):
    seconds = CELL_SECONDS[ex.cell(**w)]
    longest = max_runtime_min()
    if longest and attempt == 1:
        need = sw.attempts_needed(seconds, longest)
        allowed = 1 + workflow.execution_settings.retries
        if need > allowed:
            over = sorted(((sw.attempts_needed(s, longest), s, c) for c, s in CELL_SECONDS.items()
                           if sw.attempts_needed(s, longest) > allowed), reverse=True)
            most, s, c = over[0]
            raise WorkflowError(
                f"{len(over)} training cells need more attempts than this run allows ({allowed}; retries: "
                f"{allowed - 1}) under the longest partition of the partition file, {longest:g} minutes (each "
                f"attempt resumes from the last checkpoint). The longest, the cell {c}, is estimated at "
                f"{s / 3600:.1f} hours on one core and needs {most} attempts; the others: "
                + ", ".join(f"{cc} ({ss / 3600:.1f} h, {n})" for n, ss, cc in over[1:6])
                + (f" and {len(over) - 6} more" if len(over) > 6 else "")
                + f". Raise `retries` to at least {most - 1}, add a GPU partition, or lower these cells' steps or "
                "width. Nothing was submitted.")
    return sw.runtime_request_min(seconds, attempt, longest)


def evaluation_runtime_min(w, attempt):
    return sw.runtime_request_min(sw.estimated_evaluation_seconds(SWEEP, int(w.q), int(w.N), int(w.d)), attempt,
                                  max_runtime_min())


def evaluation_memory_mb(w, attempt):
    return sw.memory_request_mb(sw.estimated_evaluation_memory_mb(SWEEP, int(w.N), int(w.d)), attempt)


def oracle_runtime_min(w, attempt):
    return sw.runtime_request_min(sw.estimated_oracle_seconds(SWEEP, int(w.q), int(w.N), ORACLE_WIDTHS[w.q, w.N]),
                                  attempt, max_runtime_min())


def data_runtime_min(w, attempt):
    return sw.runtime_request_min(sw.estimated_data_seconds(SWEEP, int(w.N), int(w.d)), attempt, max_runtime_min())


# -- packs (profiles/slurm-grouped): the profile's `group-components` packs up to K independent jobs of a
# group into one submission, run one after another, so a pack asks for the sum of its jobs' runtimes. A
# job joins its group's pack only if K times its request at its last allowed attempt fits the longest
# partition; a longer one is submitted on its own (group `<group>_alone`, packs of one). Without a
# partition file every job packs. A run that packs nothing (profiles/slurm, a local run) sets no group.
PACKED_GROUPS = {"train": "train", "evaluate": "evaluate", "oracle": "evaluate", "eval_sets": "data"}
_PACKING_SAID = []


def _components(rule):
    """The pack size of ``rule``'s group under this run's `group-components` (1: not packed). Read when a
    job is placed: Snakemake sets the group settings after the Snakefile is parsed."""
    settings = getattr(workflow, "group_settings", None)
    return int((getattr(settings, "group_components", None) or {}).get(PACKED_GROUPS[rule], 1))


def packed_group(rule, runtime_min):
    """The `group` of ``rule``'s jobs: none unless the run packs the rule's group, else the group, or
    `<group>_alone` for a job too long to share a pack under the longest partition."""
    group = PACKED_GROUPS[rule]

    def of(w):
        components = _components(rule)
        if components <= 1:
            return None
        if workflow.is_main_process and not _PACKING_SAID:  # once, when the jobs are first placed
            _PACKING_SAID.append(True)
            print(packing_summary(), file=sys.stderr)
        longest = max_runtime_min()
        last = 1 + workflow.execution_settings.retries
        return group if longest is None or components * runtime_min(w, last) <= longest else f"{group}_alone"

    return of


class _Wildcards(dict):
    """A job's wildcards for the functions above, outside a job (the packing summary)."""
    __getattr__ = dict.__getitem__


def packing_summary():
    """What each packed group does with this sweep's jobs (said once, when the first job is placed, in a
    dry run too): how many pack and the most a pack can ask for at the last attempt, how many go alone."""
    runtime_fns = {"train": train_runtime_min, "evaluate": evaluation_runtime_min, "oracle": oracle_runtime_min,
                   "eval_sets": data_runtime_min}
    jobs = {"train": [_Wildcards(arch=r.arch, q=str(r.q), N=str(r.N), d=str(r.d), steps=str(r.steps),
                                 width=str(r.width)) for r in GRID_ROWS],
            "evaluate": [_Wildcards(q=q, N=N, d=d) for q, N, d in QND],
            "eval_sets": [_Wildcards(q=q, N=N, d=d) for q, N, d in QND],
            "oracle": [_Wildcards(q=q, N=N) for q, N in ORACLE_WIDTHS]}
    last = 1 + workflow.execution_settings.retries
    parts = []
    for rule, fn in runtime_fns.items():
        k = _components(rule)
        if k <= 1 or not jobs[rule]:
            continue
        of = packed_group(rule, fn)
        packed = [fn(w, last) for w in jobs[rule] if not of(w).endswith("_alone")]
        alone = [fn(w, last) for w in jobs[rule] if of(w).endswith("_alone")]
        parts.append(f"{rule}: {len(packed)} of {len(jobs[rule])} jobs in packs of up to {k}"
                     + (f" (a pack asks for at most {k * max(packed)} min at attempt {last})" if packed else "")
                     + (f", {len(alone)} alone (at most {max(alone)} min)" if alone else ""))
    if not parts:
        return None
    longest = max_runtime_min()
    return ("packs (group-components; longest partition "
            + (f"{longest:g} min" if longest else "not given: every job packs") + "): " + "; ".join(parts))


def cell_priority(w):
    return PRIORITY[ex.cell(**w)]


def arch_args(w):
    return ARCH_ARGS[w.arch, int(w.width)]


def lengths_of(w):
    return " ".join(str(L) for L in ex.eval_lengths(int(w.N), SWEEP["eval_length_factors"]))


def seed_files(name):
    """Every seed's file ``name`` (model.pt, curve.csv) of every cell."""
    return [PATHS.model(c, s, name) for c in CELLS for s in SEEDS]


def all_eval_sets():
    """Every evaluation set of the sweep (a target of `all`, so a deleted one is rebuilt)."""
    factors = ex.eval_factors(SWEEP["eval_length_factors"])
    return [PATHS.eval_set(q, N, d, s, f) for q, N, d in QND for s in SEEDS for f in factors]


# The figures this sweep's grid gives something to show (stsq.report.figure_plan): the others are not
# built by `all` nor shown in the report (its front page says why), and are drawn when named.
DRAWN = drawn_figures(SWEEP)


def figure_output(name):
    """The PDF, the PNG (shown in the report where this sweep draws it) and its caption, written from the
    claims table with the figure (read by the report when it is built)."""
    png = PATHS.figure(name, "png")
    if name in DRAWN:
        png = report(
            png,
            caption=os.path.abspath(PATHS.caption(name)),
            category="Figures",
            # the report lists figures sorted by this label: numbered, they come in reading order
            labels={"figure": f"{DRAWN.index(name) + 1}. {name}"},
        )
    return {"pdf": PATHS.figure(name, "pdf"), "png": png, "caption": PATHS.caption(name)}
