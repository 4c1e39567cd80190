"""The experiment grid from config.yaml: checks the JSON schema cannot express, and the cells.

A sweep trains every (arch, q, N, width) cell for every seed; width is d_e for
a transformer and the hidden width m for the FCN.  No torch here: this runs at
DAG-parse time.
"""

from __future__ import annotations

import pandas as pd


class ConfigError(ValueError):
    """An invalid config; the message names the key and the value."""


def schema_errors(config: dict, schema_path) -> list[str]:
    """Every JSON-schema violation of ``config``, one line each, naming the key and the value."""
    import jsonschema
    import yaml

    with open(schema_path) as fh:
        schema = yaml.safe_load(fh)
    validator = jsonschema.Draft202012Validator(schema)
    lines = []
    for e in sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path]):
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


def _join(key, name):
    return f"{key}.{name}" if key else str(name)


def check_config(config: dict) -> None:
    """Cross-key checks after the schema: the chosen sweep exists, and q <= N everywhere."""
    sweeps = config["sweeps"]
    name = config["sweep"]
    if name not in sweeps:
        raise ConfigError(f"config key 'sweep': unknown sweep {name!r}; defined sweeps: {', '.join(sorted(sweeps))}")
    for sname, s in sweeps.items():
        for q in s["q"]:
            for N in s["N"]:
                if q > N:
                    raise ConfigError(f"config key 'sweeps.{sname}.q': q={q} exceeds N={N} "
                                      f"(from 'sweeps.{sname}.N'); STS_q needs 1 <= q <= N")


def cells(sweep: dict) -> pd.DataFrame:
    """The grid as a table with columns arch, q, N, width (for ``snakemake.utils.Paramspace``)."""
    rows = [(arch, q, N, w) for arch, a in sweep["archs"].items() for q in sweep["q"] for N in sweep["N"]
            for w in a["widths"]]
    return pd.DataFrame(rows, columns=["arch", "q", "N", "width"])


def eval_lengths(sweep: dict, N: int) -> list[int]:
    """The evaluation lengths N' = N x factor, always including N itself."""
    return sorted({int(N) * int(f) for f in sweep["eval_length_factors"]} | {int(N)})


# Nanoseconds of one training step per unit of work, measured on a 2-core x86 CPU
# (`make bench`, part b): a transformer step costs about B N (d + d_e) units, an
# FCN step B n_in m (+ B m^2 per extra hidden layer).
NS_PER_UNIT = {"tf_stochastic": 5.5, "tf_fixed": 2.0, "tf_positional": 5.5, "fcn": 0.066}


def estimated_seconds(sweep: dict, arch: str, N: int, width: int) -> float:
    """A cell job's training time on one CPU core, roughly: used as the job's priority, so the
    longest cells start first and short ones fill the cores around them."""
    a = sweep["archs"][arch]
    B, d = sweep["batch_size"], sweep["d"]
    if arch == "fcn":
        units = B * (N * d + N) * width + B * width * width * (a.get("layers", 1) - 1)
    else:
        units = B * N * (d + width)
    return a["steps"] * len(sweep["seeds"]) * units * NS_PER_UNIT[arch] * 1e-9
