"""The config's validation: the JSON schema (workflow/schemas/config.schema.yaml, its names and defaults from
``stsq.core.experiment``), then the checks across keys; every error names its key and value, before any job.

No torch here: this runs at DAG-parse time.
"""

from __future__ import annotations

import copy
import math
import re

from stsq.cluster.cost import check_memory
from stsq.core.errors import ConfigError
from stsq.core.experiment import ARCHS, DEFAULTS, FCN_LAYERS, OPTIMIZERS, QUERIES, ROLES, SCHEDULES
from stsq.core.measures import MEASURES, measure_of_sweep, resolve, tasks_measuring
from stsq.core.sweep import ARCH_AXES, arch_shapes, as_list
from stsq.core.tasks import DEFAULT_TASK, SHAPE_LIMITS, TASKS

__all__ = ["ConfigError", "check_config", "load_schema", "validate_config"]


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
    # each measure's sweeps: their own keys (the schema's $defs entry its record names), their tasks and archs
    by_def = {}
    for m in MEASURES.values():
        tasks = tasks_measuring(m.name)
        props = schema["$defs"][m.schema]["properties"]
        props["task"]["enum"] = tasks
        if DEFAULT_TASK in tasks:
            props["task"]["default"] = DEFAULT_TASK
        props["archs"]["propertyNames"] = {"enum": [a for a in ARCHS if ARCHS[a].task in tasks]}
        by_def[m.schema] = tasks
    # a sweep is read by the $defs entry of its task's measure: the schema's `then` names the one chosen by `if`
    chosen = schema["properties"]["sweeps"]["additionalProperties"]
    chosen["if"]["properties"]["task"] = {"enum": by_def[chosen["then"]["$ref"].rsplit("/", 1)[1]]}
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


def sweeps_of(config: dict, measure: str) -> dict:
    """The sweeps of ``config`` whose task measures ``measure`` (a key of stsq.core.measures.MEASURES), by name."""
    return {name: s for name, s in config["sweeps"].items() if measure_of_sweep(s).name == measure}


def check_samples_sweeps(config: dict) -> None:
    """The cross-key checks of a sweep that measures samples: an arch's N, q and modes among the sweep's, q <= d
    (orthonormal directions), N >= 2, every threshold below the trivial loss, the arch of the sweep's task, the
    thresholds its task's claims read among its own."""
    from stsq.claims.judge import claims_of

    for sname, s in config["sweeps"].items():
        read = {k: c.at for k, c in claims_of(s["task"]).items() if c.at is not None}
        lacking = sorted(set(read.values()) - set(s["thresholds"]))
        if lacking:
            raise ConfigError(f"config key 'sweeps.{sname}.thresholds': {s['thresholds']} lacks "
                              f"{', '.join(f'{t:g}' for t in lacking)}, the threshold the claims of the task "
                              f"{s['task']!r} read ({', '.join(k for k, t in read.items() if t in lacking)}, "
                              "stsq.claims.retrieval.AT); add it")
        for q in s["q"]:
            if q > s["d"]:
                raise ConfigError(f"config key 'sweeps.{sname}.q': q={q} exceeds d={s['d']}; the q directions u_k "
                                  "are orthonormal in R^d")
        if min(s["N"]) < 2:
            raise ConfigError(f"config key 'sweeps.{sname}.N': N={min(s['N'])}; a sequence to retrieve from has "
                              "N >= 2 tokens")
        caps = [("cap", s["cap"])] + [(f"archs.{a}.cap", v["cap"]) for a, v in s["archs"].items() if "cap" in v]
        for key, cap in caps:
            if cap % s["batch_size"]:
                raise ConfigError(f"config key 'sweeps.{sname}.{key}': {cap} is not a multiple of the batch_size "
                                  f"{s['batch_size']}; training stops at the cap, a whole number of batches")
        for arch, a in s["archs"].items():
            if ARCHS[arch].task != s["task"]:
                raise ConfigError(f"config key 'sweeps.{sname}.archs.{arch}': the arch is {ARCHS[arch].task}'s, "
                                  f"the sweep's task is {s['task']}")
            for axis in ("N", "q", "modes"):
                extra = sorted(set(a.get(axis, [])) - set(s[axis]))
                if extra:
                    raise ConfigError(f"config key 'sweeps.{sname}.archs.{arch}.{axis}': {extra} not in the "
                                      f"sweep's {axis} ({s[axis]}); an arch's own {axis} is a subset of the sweep's")


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
    for m in MEASURES.values():  # each measure's own checks, of its sweeps (stsq.core.measures: ``check``)
        resolve(m.check)({**config, "sweeps": sweeps_of(config, m.name)})


def check_width_sweeps(config: dict) -> None:
    """The cross-key checks of the sweeps that measure widths: an arch's axes among the sweep's, its excluded shapes
    and width factors among its own, q <= N, one arch per role, every cell's memory below the cap."""
    for sname, s in config["sweeps"].items():
        for arch, a in s["archs"].items():
            for axis in ARCH_AXES:
                extra = sorted(set(as_list(a.get(axis, []))) - set(as_list(s[axis])))
                if extra:
                    raise ConfigError(f"config key 'sweeps.{sname}.archs.{arch}.{axis}': {extra} not in the "
                                      f"sweep's {axis} ({as_list(s[axis])}); an arch's own {axis} is a subset of "
                                      "the sweep's")
            for i, e in enumerate(a.get("exclude", [])):
                for axis, v in e.items():
                    if v not in as_list(a.get(axis, s[axis])):
                        raise ConfigError(f"config key 'sweeps.{sname}.archs.{arch}.exclude.{i}.{axis}': {v} is "
                                          f"not a {axis} this arch trains at ({as_list(a.get(axis, s[axis]))})")
            Ns = as_list(a.get("N", s["N"]))
            for key in ("widths_by_N", "steps_by_N"):
                for N in a.get(key, {}):
                    if int(N) not in Ns:
                        raise ConfigError(f"config key 'sweeps.{sname}.archs.{arch}.{key}': N={N!r} is not an N "
                                          f"this arch trains at ({Ns})")
            if a.get("steps_by_N"):
                task = s.get("task", DEFAULT_TASK)
                if not TASKS[task].budget_per_N:
                    raise ConfigError(f"config key 'sweeps.{sname}.archs.{arch}.steps_by_N': the claims of the "
                                      f"task {task!r} fit one budget across N; give the "
                                      "arch one steps (or a list, a budget axis at every N)")
            by_q = a["widths"].get("factors_by_q", {}) if isinstance(a["widths"], dict) else {}
            qs = as_list(a.get("q", s["q"]))
            for q in by_q:
                if q not in qs:
                    raise ConfigError(f"config key 'sweeps.{sname}.archs.{arch}.widths.factors_by_q': q={q!r} "
                                      f"is not a q this arch trains at ({qs})")
        limit = SHAPE_LIMITS.get(s.get("task", DEFAULT_TASK))
        for arch in s["archs"]:  # the shapes an arch trains at: q = 4 may be the transformer's only, from N = 8
            for q, N, d in arch_shapes(s, arch):
                if q > N:
                    raise ConfigError(f"config key 'sweeps.{sname}.q': q={q} exceeds N={N} "
                                      f"(from 'sweeps.{sname}.N', arch {arch}); STS_q needs 1 <= q <= N")
                wrong = limit(N, q, d) if limit else None
                if wrong:
                    axis, why = wrong
                    key = f"archs.{arch}.{axis}" if axis in s["archs"][arch] else axis
                    raise ConfigError(f"config key 'sweeps.{sname}.{key}': {why} (task {s.get('task')!r}, arch {arch})")
    check_roles(config)
    check_memory(config)


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


def check_roles(config: dict) -> None:
    """Refuse a sweep naming two archs of one role (the paper's model, the FCN): the claims and the figures
    read one arch per role, and a second one would be trained but never read."""
    for sname, s in config["sweeps"].items():
        by_role: dict = {}
        for arch in s["archs"]:
            if ARCHS[arch].role in ROLES:
                by_role.setdefault(ARCHS[arch].role, []).append(arch)
        for role, archs in by_role.items():
            if len(archs) > 1:
                raise ConfigError(
                    f"config key 'sweeps.{sname}.archs': {', '.join(archs)} share the role {role!r}; the claims "
                    f"and figures read one arch of that role in a sweep, so the others would be trained and "
                    f"never read. Keep one of them in this sweep, or give the others role COMPARED in "
                    f"stsq/core/experiment.py (measured beside the paper's, with no claim of their own)")
