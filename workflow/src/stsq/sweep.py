"""The experiment grid from config.yaml: its validation (naming the key) and its cells.

A sweep trains every (arch, q, N, d, steps, width) cell for every seed; width is d_e for
a transformer and the hidden width m for the FCN.  The JSON schema
(workflow/schemas/config.schema.yaml) gives the shape; the names it accepts and
their defaults come from ``stsq.experiment``.  No torch here: this runs at
DAG-parse time.
"""

from __future__ import annotations

import copy
import math
import re

import pandas as pd

from .errors import ConfigError
from .experiment import ARCHS, DEFAULTS, FCN_LAYERS, OPTIMIZERS, QUERIES, SCHEDULES, eval_factors, is_transformer

__all__ = ["ConfigError", "cells", "check_config", "estimated_seconds", "load_schema", "validate_config"]


def load_schema(path) -> dict:
    """The schema file with the vocabulary's names and defaults filled in."""
    import yaml

    with open(path) as fh:
        schema = yaml.safe_load(fh)
    arch = schema["$defs"]["arch"]["properties"]
    arch["optimizer"].update(enum=list(OPTIMIZERS), default=DEFAULTS["optimizer"])
    arch["schedule"].update(enum=list(SCHEDULES), default=DEFAULTS["schedule"])
    arch["layers"].update(enum=list(FCN_LAYERS), default=DEFAULTS["layers"])
    for key in ("lr_width_exponent", "lr_reference_width"):
        arch[key]["default"] = DEFAULTS[key]
    sweep = schema["$defs"]["sweep"]["properties"]
    sweep["query"].update(enum=list(QUERIES), default=DEFAULTS["query"])
    sweep["archs"]["propertyNames"] = {"enum": list(ARCHS)}
    return schema


def _validator(schema):
    """A Draft 2020-12 validator that also fills in the schema's defaults."""
    import jsonschema

    base = jsonschema.Draft202012Validator
    check_properties = base.VALIDATORS["properties"]

    def properties(validator, props, instance, sub):
        if isinstance(instance, dict):
            for key, spec in props.items():
                if "default" in spec:
                    instance.setdefault(key, copy.deepcopy(spec["default"]))
        yield from check_properties(validator, props, instance, sub)

    return jsonschema.validators.extend(base, {"properties": properties})(schema)


def validate_config(config: dict, schema_path) -> None:
    """Check ``config`` (and fill in the defaults): the schema, then the cross-key checks.

    Raises ``ConfigError`` listing every problem, each naming its key and value.
    """
    # `--config pilot=true` arrives as the string "true": read the words true and false as booleans
    if isinstance(config.get("pilot"), str) and config["pilot"].lower() in ("true", "false"):
        config["pilot"] = config["pilot"].lower() == "true"
    lines = schema_errors(config, load_schema(schema_path))
    if lines:
        raise ConfigError("schema workflow/schemas/config.schema.yaml:\n  " + "\n  ".join(lines))
    check_config(config)
    check_memory(config)


def schema_errors(config: dict, schema: dict) -> list[str]:
    """Every JSON-schema violation of ``config``, one line each, naming the key and the value."""
    lines = []
    errors = _validator(schema).iter_errors(config)
    for e in sorted(errors, key=lambda e: [str(p) for p in e.absolute_path]):
        e = _specific(e)
        key = ".".join(str(p) for p in e.absolute_path)
        where = f"config key '{key}'" if key else "config"
        if e.validator == "additionalProperties":
            allowed = sorted(e.schema.get("properties", {}))
            for extra in sorted(set(e.instance) - set(allowed)):
                hint = f" (allowed: {', '.join(allowed)})" if allowed else ""
                lines.append(f"config key '{_join(key, extra)}': unknown key{hint}")
        elif e.validator == "propertyNames":
            lines.append(f"config key '{_join(key, e.instance)}': unknown name {e.instance!r}; expected one of "
                         f"{', '.join(e.schema['enum'])}")
        elif e.validator == "required":
            missing = e.message.split("'")[1]
            lines.append(f"config key '{_join(key, missing)}': missing (required)")
        else:
            lines.append(f"{where}: {e.message}")
    return lines


def _specific(error):
    """For a value that may take one of several forms (a number or a list; a list or relative widths):
    the first error of the form whose type it has ("0 is less than the minimum of 1"); where it has none
    of their types, which types it may have."""
    while error.validator in ("oneOf", "anyOf") and error.context:
        branches: dict = {}
        for c in error.context:
            branches.setdefault(c.schema_path[0], []).append(c)
        typed = [errs for errs in branches.values()
                 if not any(c.validator == "type" and not c.relative_path for c in errs)]
        if not typed:
            types = " or ".join(repr(c.validator_value) for c in error.context if c.validator == "type")
            error.message = f"{error.instance!r} is not of type {types}"
            return error
        error = typed[0][0]
    return error


def _join(key, name):
    return f"{key}.{name}" if key else str(name)


# A sweep's name is a folder under results/: letters, digits, '_', '-' and '.', not leading with '.' or '-'.
SWEEP_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def check_config(config: dict) -> None:
    """Cross-key checks after the schema: every number finite, every sweep name a plain folder
    name, the chosen sweep defined, q <= N."""
    for key, value in _numbers(config):
        if not math.isfinite(value):
            raise ConfigError(f"config key '{key}': {value!r} is not a finite number")
    sweeps = config["sweeps"]
    name = config["sweep"]
    for key, value in [("sweep", name)] + [(f"sweeps.{s}", s) for s in sweeps]:
        if not isinstance(value, str) or not SWEEP_NAME.fullmatch(value):
            raise ConfigError(f"config key '{key}': sweep name {value!r} is not a plain folder name under "
                              "results/ (letters, digits, '_', '-', '.'; no path separators, no leading '.' "
                              "or '-', not empty)")
    if name not in sweeps:
        raise ConfigError(f"config key 'sweep': unknown sweep {name!r}; defined sweeps: {', '.join(sorted(sweeps))}")
    for sname, s in sweeps.items():
        for arch, a in s["archs"].items():
            for axis in ARCH_AXES:
                extra = sorted(set(as_list(a.get(axis, []))) - set(as_list(s[axis])))
                if extra:
                    raise ConfigError(f"config key 'sweeps.{sname}.archs.{arch}.{axis}': {extra} not in the "
                                      f"sweep's {axis} ({as_list(s[axis])}); an arch's own {axis} is a subset of "
                                      "the sweep's")
        for q in s["q"]:
            for N in s["N"]:
                if q > N:
                    raise ConfigError(f"config key 'sweeps.{sname}.q': q={q} exceeds N={N} "
                                      f"(from 'sweeps.{sname}.N'); STS_q needs 1 <= q <= N")


def _numbers(node, key=""):
    """(key, value) of every float in a nested config."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _numbers(v, _join(key, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _numbers(v, _join(key, i))
    elif isinstance(node, float):
        yield key, node


def position_range(sweep: dict) -> int:
    """L, the range randomized positions are drawn from: the sweep's ``position_range``, by default its
    largest evaluation length N' (largest N x largest factor)."""
    if sweep.get("position_range"):
        return int(sweep["position_range"])
    return max(sweep["N"]) * max(eval_factors(sweep["eval_length_factors"]))


def cell_lr(arch: dict, width: int) -> float:
    """The learning rate of a cell: the arch's lr, scaled down as (reference / width)^exponent for widths
    above ``lr_reference_width`` (``lr_width_exponent``, 0 by default: the same lr at every width)."""
    exponent = arch.get("lr_width_exponent", DEFAULTS["lr_width_exponent"])
    reference = arch.get("lr_reference_width", DEFAULTS["lr_reference_width"])
    return float(arch["lr"]) * min(1.0, reference / width) ** exponent


def cell_settings(sweep: dict, arch: str, width: int) -> dict:
    """A cell's training settings beyond its shape, as the schema filled them in: learning rate (stsq.sweep.
    cell_lr), optimizer, schedule, layers, and the position range L where the arch draws from one (else 0)."""
    from .experiment import uses_position_range

    a = sweep["archs"][arch]
    return {"lr": cell_lr(a, int(width)), "optimizer": a["optimizer"], "schedule": a["schedule"],
            "layers": int(a["layers"]), "position_range": position_range(sweep) if uses_position_range(arch) else 0}


def as_list(value) -> list:
    """A grid axis given as one number or a list of them."""
    return list(value) if isinstance(value, list | tuple) else [value]


def problem_size(relative_to: str, q: int, N: int, d: int) -> float:
    """The size a relative width is a multiple of: N d (the FCN's floor), or q log N (the transformer's
    near-orthogonal encodings)."""
    return N * d if relative_to == "N d" else q * math.log(N)


def arch_widths(a: dict, q: int, N: int, d: int) -> list[int]:
    """The widths of an arch at one (q, N, d): the absolute list, or ``factors`` x its problem size
    (``relative_to``), rounded, at least 1, without repeats."""
    w = a["widths"]
    if isinstance(w, list):
        return [int(x) for x in w]
    size = problem_size(w["relative_to"], q, N, d)
    return sorted({max(1, round(f * size)) for f in w["factors"]})


ARCH_AXES = ("q", "N", "d")  # the shape axes an arch may restrict to a subset of the sweep's


def arch_axis(sweep: dict, arch: str, axis: str) -> list:
    """The values of ``axis`` (q, N or d) an arch trains at: its own list where it has one (a subset of
    the sweep's), else the sweep's."""
    return as_list(sweep["archs"][arch].get(axis, sweep[axis]))


def arch_d(sweep: dict, arch: str) -> list:
    """The values of d an arch trains at (``arch_axis`` of d)."""
    return arch_axis(sweep, arch, "d")


def cells(sweep: dict) -> pd.DataFrame:
    """The grid as a table with columns arch, q, N, d, steps, width (for ``snakemake.utils.Paramspace``)."""
    rows = [(arch, q, N, d, steps, w) for arch, a in sweep["archs"].items() for q in arch_axis(sweep, arch, "q")
            for N in arch_axis(sweep, arch, "N") for d in arch_d(sweep, arch)
            for steps in as_list(a["steps"]) for w in arch_widths(a, q, N, d)]
    return pd.DataFrame(rows, columns=["arch", "q", "N", "d", "steps", "width"])


# A step costs about B N (d + d_e) units of work for a transformer, B n_in m (+ B m^2 per extra hidden
# layer) for the FCN, at each arch's nanoseconds per unit, plus its fixed cost per step
# (stsq.experiment.ARCHS); each job starts Python and torch (docs/performance.md, "Memory and cost").
JOB_START_S = 4.0  # Python, torch and the job's wrapper (measured 3.9 to 5.7 s in the pilots)


def estimated_seconds(sweep: dict, arch: str, N: int, d: int, steps: int, width: int) -> float:
    """A cell job's training time on one CPU core, roughly: its steps, and the scoring of its curve (the
    test set every log_every steps; a transformer's unseen lengths N' every checkpoint_every). Used as the
    job's priority (the longest cells start first), for its cluster request and for the cost said before
    a run."""
    a = sweep["archs"][arch]
    B = sweep["batch_size"]
    lengths = _lengths(sweep, N)
    if is_transformer(arch):
        units = B * N * (d + width)
        score = SCORE_NS_PER_UNIT * sweep["n_eval"] * (d + width) * (
            math.ceil(steps / sweep["log_every"]) * N
            + math.ceil(steps / sweep["checkpoint_every"]) * (sum(lengths) - N))
    else:
        units = B * (N * d + N) * width + B * width * width * (a.get("layers", DEFAULTS["layers"]) - 1)
        score = math.ceil(steps / sweep["log_every"]) * sweep["n_eval"] * (N * d + N) * width * ARCHS[arch].ns_per_unit
    per_step = units * ARCHS[arch].ns_per_unit * 1e-9 + ARCHS[arch].step_overhead_s
    return JOB_START_S + len(sweep["seeds"]) * (steps * per_step + score * 1e-9)


# -- the other jobs' time on one core, roughly: n samples x the summed lengths N' x the token width --
EVAL_NS_PER_UNIT = 4.0  # scoring, per sample x N' x (d + d_e) (paper scale: N = 128, d_e = 1024, N' up
                        # to 32 N took about 90 s for 5 seeds)
SCORE_NS_PER_UNIT = 4.0  # ... the same while training (the pilot: 3.7)
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
        lengths = _lengths(sweep, N) if is_transformer(arch) else [N]
        units += sweep["n_eval"] * sum(lengths) * (d + int(width)) * len(sweep["seeds"])
        if ARCHS[arch].encoding == "stochastic":
            projection += samples(sweep, "projection_samples") * sum(lengths) * int(width) * len(sweep["seeds"])
    return JOB_START_S + (units * EVAL_NS_PER_UNIT + projection * PROJECTION_NS_PER_UNIT) * 1e-9


def samples(sweep: dict, key: str) -> int:
    """Monte Carlo samples per N' of the oracle (``oracle_samples``) or of a model's projection
    (``projection_samples``): the defaults, fewer in a pilot (stsq.pilot.pilot_sweep)."""
    return int(sweep.get(key, DEFAULTS[key]))


def estimated_oracle_seconds(sweep: dict, q: int, N: int, widths) -> float:
    """The oracle job of one (q, N): the family's best loss at every N', at each d_e of ``widths``, from the
    sweep's Monte Carlo samples per N'."""
    units = samples(sweep, "oracle_samples") * sum(_lengths(sweep, N)) * sum(int(w) for w in widths)
    return JOB_START_S + units * ORACLE_NS_PER_UNIT * 1e-9


def oracle_widths(sweep: dict) -> dict[tuple[int, int], list[int]]:
    """The d_e the oracle is computed at for each (q, N): those of the archs whose claims read it (the
    paper's model, and positions drawn from a range); one oracle job per (q, N)."""
    from .experiment import paper_model, uses_position_range

    out: dict = {}
    for r in cells(sweep).itertuples():
        if r.arch == paper_model() or uses_position_range(r.arch):
            out.setdefault((int(r.q), int(r.N)), set()).add(int(r.width))
    return {k: sorted(v) for k, v in out.items()}


def estimated_data_seconds(sweep: dict, N: int, d: int) -> float:
    """The data job of one (q, N, d): every seed's evaluation set at every N'."""
    units = sweep["n_eval"] * sum(_lengths(sweep, N)) * d * len(sweep["seeds"])
    return JOB_START_S + units * DATA_NS_PER_UNIT * 1e-9


# -- what a cluster job asks for (docs/cluster.md, "Time and memory") --------------------------------
RUNTIME_HEADROOM = 3.0  # a job asks for this many times its estimate (measured times are within 2-3x)
MIN_RUNTIME_MIN = 5  # and at least this many minutes (a job's start, a slow shared filesystem)
MEMORY_HEADROOM = 1.5  # a job asks for this many times its memory estimate (measured peaks: within 1.1x)
RETRY_GROWTH = 2.0  # each retry (after a TIMEOUT or an out-of-memory kill) asks for this much more time,
RETRY_DOUBLINGS = 2  # ... up to this many times (4x the first request, 12x the estimate): a training job
                     # that needs more resumes from its checkpoint at each further attempt, and the packs of
                     # profiles/slurm-grouped stay the same at any number of retries
MEMORY_RETRY_GROWTH = 1.5  # ... and memory


def runtime_request_min(seconds: float, attempt: int = 1, max_minutes: float | None = None) -> int:
    """The runtime (minutes) a job estimated at ``seconds`` on one core asks the scheduler for at its
    ``attempt``: the estimate with headroom, doubling at the first RETRY_DOUBLINGS retries, capped at the
    longest partition's limit (a killed training job resumes from its checkpoint at its next attempt)."""
    growth = RETRY_GROWTH ** min(attempt - 1, RETRY_DOUBLINGS)
    minutes = max(MIN_RUNTIME_MIN, math.ceil(seconds * RUNTIME_HEADROOM * growth / 60))
    return int(min(minutes, max_minutes)) if max_minutes else minutes


def memory_request_mb(mb: float, attempt: int = 1) -> int:
    """The memory (MB) a job estimated at ``mb`` asks for at its ``attempt``."""
    return int(math.ceil(mb * MEMORY_HEADROOM * MEMORY_RETRY_GROWTH ** (attempt - 1)))


def attempts_needed(seconds: float, max_minutes: float) -> int:
    """How many attempts of at most ``max_minutes`` a training job estimated at ``seconds`` needs (each
    attempt resumes from the last checkpoint of the one before)."""
    return max(1, math.ceil(seconds / 60 / max_minutes))


# -- memory: a training job's peak resident memory, from (arch, N, width, batch) -------------------
BASE_MB = 400  # Python, torch and the pipeline loaded (measured: docs/performance.md, "Memory")
MEMORY_CAP_MB = 96 * 1024  # no job asks for more: above it a cell is refused before any job runs


def estimated_memory_mb(sweep: dict, arch: str, N: int, d: int, width: int) -> int:
    """A training job's peak memory in MB, roughly (float32 throughout):

    - transformer: the step's tensors, about 3 B N (d + d_e) floats (X, the positions, the products of
      forward and backward), the model with its gradient and Adam's two moments, 4 (d + d_e)^2 +
      4 d (d + d_e) floats, and the in-distribution test set, n_eval N d floats;
    - FCN: about 7 floats per parameter (n_in m + m d [+ m^2]: the weights, their gradient, Adam's
      moments and the fused kernel's buffers), the activations autograd keeps, about 4 B (n_in + m)
      floats, with n_in = N d + N, and the test set.

    Measured peaks (docs/performance.md, "Memory") are within 2x of it.
    The train rule asks a cluster for this much (``mem_mb``), and the config check refuses a cell above
    ``MEMORY_CAP_MB``.
    """
    a = sweep["archs"][arch]
    B, n_eval = sweep["batch_size"], sweep["n_eval"]
    if is_transformer(arch):
        D = d + width
        floats = 3 * B * N * D + 4 * D * D + 4 * d * D + n_eval * N * d
    else:
        n_in = N * d + N
        params = n_in * width + width * d + width * width * (a.get("layers", DEFAULTS["layers"]) - 1)
        floats = 7 * params + 4 * B * (n_in + width) + n_eval * N * d
    return int(BASE_MB + 4 * floats / 2**20)


def estimated_evaluation_memory_mb(sweep: dict, N: int, d: int) -> int:
    """An evaluation or data job's peak memory in MB, roughly: the largest evaluation set (n_eval x N' x d
    floats) a few times over, and the scoring's chunks (stsq.evaluate.ELEMENTS_PER_CHUNK floats, bounded)."""
    largest = sweep["n_eval"] * max(_lengths(sweep, N)) * d
    return int(BASE_MB + 4 * (3 * largest + 8 * 2**24) / 2**20)


def check_memory(config: dict) -> None:
    """Refuse, before any job runs, a cell whose training job would need more than ``MEMORY_CAP_MB``."""
    for sname, s in config["sweeps"].items():
        grid = cells(s).drop_duplicates(["arch", "N", "d", "width"])
        for arch, N, d, w in grid[["arch", "N", "d", "width"]].itertuples(index=False):
            mb = estimated_memory_mb(s, arch, int(N), int(d), int(w))
            if mb > MEMORY_CAP_MB:
                raise ConfigError(
                    f"config key 'sweeps.{sname}.archs.{arch}.widths': the cell {arch} N={N} d={d} width={w} "
                    f"needs about {mb / 1024:.0f} GiB to train (estimate from N, d, width and "
                    f"batch_size {s['batch_size']}), above the cap of {MEMORY_CAP_MB // 1024} GiB; "
                    "lower the width, N, d or batch_size")


# The analysis jobs (the tidy table, the claims, the widths needed, the encodings table, each figure):
# a job's start with pandas and matplotlib, and the table's rows (curves and evaluations per model)
ANALYSIS_START_S = 2.0
ANALYSIS_S_PER_MODEL = 0.025


def estimated_analysis_seconds(sweep: dict) -> float:
    """One analysis job (aggregate, claims, critical, encodings, or a figure) of the sweep."""
    return ANALYSIS_START_S + ANALYSIS_S_PER_MODEL * len(cells(sweep)) * len(sweep["seeds"])


def analysis_rules(sweep: dict) -> list[str]:
    """The rules of the analysis stage: the tables, the claims, the report's front page and each figure this
    sweep draws (stsq.report.figure_plan)."""
    from .experiment import FIGURE_RULE
    from .report import drawn_figures

    return ["aggregate", "critical", "encodings", "reach", "claims", "landing"] + [FIGURE_RULE.format(name=n)
                                                                                   for n in drawn_figures(sweep)]


def sweep_cost(sweep: dict, pilot: bool = False) -> dict:
    """The size of a sweep and its estimated time on one CPU core, every job: training (``estimated_seconds``),
    evaluation sets, evaluation, the oracle and the analysis; ``jobs`` and ``seconds`` by rule.  A pilot
    (``pilot``) trains every cell of a (q, N, d) in one job, which starts once."""
    grid = cells(sweep)
    qnd = list(dict.fromkeys((int(r.q), int(r.N), int(r.d)) for r in grid.itertuples()))
    train = sum(estimated_seconds(sweep, a, int(N), int(d), int(steps), int(w)) for a, N, d, steps, w in
                grid[["arch", "N", "d", "steps", "width"]].itertuples(index=False))
    if pilot:
        train -= (len(grid) - len(qnd)) * JOB_START_S
    widths = oracle_widths(sweep)
    analysis = analysis_rules(sweep)
    jobs = {"train": len(qnd) if pilot else len(grid), "eval_sets": len(qnd), "evaluate": len(qnd),
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
        f"{c['train_jobs']} training jobs ({c['models']} models)"
    text = (f"sweep '{name}': {cells_said}, estimated {_hours(c['cpu_hours'] * 3600)} on one core for every job: "
            + ", ".join(f"{rule} {_hours(sec[rule])} ({j[rule]} jobs)" for rule in sec)
            + " (stsq.sweep)")
    if gpu:
        return text + "; a GPU was found (nvidia-smi): training jobs use it, which is much faster"
    if c["cpu_hours"] > LONG_ON_CPU_HOURS and name != "cpu" and not pilot:
        text += ("; no GPU found. That is long on a CPU: for the minutes-sized reproduction run "
                 "`snakemake --cores all --config sweep=cpu` (or `make run`)")
    return text
