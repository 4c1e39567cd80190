"""Where a result came from: the code and the machine that made it, written beside it.

Every model, evaluation, oracle and table has a sidecar ``<name>.provenance.json`` (``sidecar``) that records:

- the code: the git commit and whether the tree had uncommitted changes, where the project is a git checkout
  (else the package's version), and the hash of the code its command runs (stsq.provenance.codehash);
- the Python, torch and numpy versions;
- the device: the CPU's model, or the GPU's name and CUDA version; the thread count.

A table also records the provenance of the rows it holds (``rows_from``): each code version and each machine that
made them, with the models or cells of each.  More than one code version (code hash) is *mixed*, and the report's
front page and ``python -m stsq compare`` say so, naming the cells.  No torch import here: the analysis stages read
versions from the installed metadata.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from stsq.core.files import atomic_write_text
from stsq.provenance.codehash import SOURCE, stage_hash

REPOSITORY = SOURCE.parents[2]  # workflow/src/stsq -> the checkout
SUFFIX = ".provenance.json"


def sidecar(path) -> Path:
    """The provenance file of ``path``: ``<folder>/<stem>.provenance.json``."""
    path = Path(path)
    return path.with_name(path.stem + SUFFIX)


def _git(*args) -> str | None:
    try:
        r = subprocess.run(["git", "-C", str(REPOSITORY), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout if r.returncode == 0 else None


@lru_cache(maxsize=1)
def code_version() -> dict:
    """The commit and dirty flag of the checkout (None where it is not a git checkout), the package version."""
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain") if commit else None
    try:
        version = metadata.version("stsq")
    except metadata.PackageNotFoundError:
        version = None
    from stsq import __version__
    return {"commit": commit.strip() if commit else None, "dirty": bool(status.strip()) if status is not None else None,
            "version": version or __version__}


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


@lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo), else what the platform says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def device_of(device=None) -> str:
    """'cpu: <model>' or 'cuda: <GPU name>, CUDA <version>'."""
    name = str(device) if device is not None else "cpu"
    if name.startswith("cuda"):
        import torch
        return f"cuda: {torch.cuda.get_device_name(torch.device(name))}, CUDA {torch.version.cuda}"
    return f"cpu: {cpu_model()}{float_path()}"


# The settings that choose a CPU's float path, and the value each has unless the user sets it (stsq/__init__.py sets
# MKL_CBWR; torch picks its widest vector unit unless ATEN_CPU_CAPABILITY names another).
FLOAT_PATH = {"MKL_CBWR": "AUTO,STRICT", "ATEN_CPU_CAPABILITY": None}


def float_path() -> str:
    """'' on the default float path; else the settings that moved it, as ' [MKL_CBWR=COMPATIBLE]': one CPU model on
    another path sums in another order, so its numbers are another machine's."""
    moved = [f"{k}={os.environ[k].replace(',', '+')}" for k, default in FLOAT_PATH.items()
             if os.environ.get(k, default) != default]
    return f" [{' '.join(moved)}]" if moved else ""


def describe(command: str, key: str | None = None, *, device=None, threads: int | None = None) -> dict:
    """The provenance of what ``python -m stsq <command>`` writes now."""
    if threads is None:
        torch = sys.modules.get("torch")
        threads = torch.get_num_threads() if torch is not None else 1
    return {"command": command + (f" {key}" if key else ""),
            "code": {**code_version(), "code_hash": stage_hash(command, key)},
            "python": platform.python_version(), "torch": _version("torch"), "numpy": _version("numpy"),
            "device": device_of(device), "threads": int(threads),
            "platform": f"{platform.system()} {platform.machine()}"}


def write(path, command: str, key: str | None = None, *, rows_from: dict | None = None, device=None,
          threads: int | None = None, what: str | None = None) -> Path:
    """Write the sidecar of ``path``; returns its path."""
    record = {"of": what or Path(path).name, "made_by": describe(command, key, device=device, threads=threads)}
    if rows_from is not None:
        record["rows_from"] = rows_from
    out = sidecar(path)
    atomic_write_text(out, json.dumps(record, indent=1, sort_keys=True) + "\n")
    return out


def read(path) -> dict | None:
    """The sidecar of ``path``, or None where there is none (a result older than provenance)."""
    p = sidecar(path)
    return json.loads(p.read_text()) if p.exists() else None


def code_identity(made_by: dict) -> str:
    """One code version in words: the commit (+ 'dirty'), or the package version, and the code hash."""
    c = made_by["code"]
    where = (c["commit"][:12] + (" (uncommitted changes)" if c.get("dirty") else "")) if c.get("commit") \
        else f"stsq {c.get('version')}"
    return f"{where}, code {c['code_hash']}"


def machine(made_by: dict) -> str:
    """One machine in words: device, threads, versions."""
    return (f"{made_by['device']}, {made_by['threads']} thread(s); Python {made_by['python']}, "
            f"torch {made_by['torch']}, numpy {made_by['numpy']}")


def _label(path) -> str:
    """A result's cell in words, from its path under results/<sweep>/: 'arch~fcn/q~2/.../seed~0'."""
    parts = [p for p in Path(path).parent.parts if "~" in p]
    return "/".join(parts)


def summarize(paths_by_stage: dict[str, list]) -> dict:
    """What made the rows of a table: per stage (train, evaluate, oracle), each code version and each machine,
    with how many results and which (``cells``); results without a sidecar count as 'unknown'.  ``mixed`` lists
    the stages made by more than one code version: more than one code hash (stsq.provenance.codehash), or a result of
    unknown
    code.  Two commits whose code hash for the stage is the same ran the same code (an incremental run after an
    edit elsewhere): both are listed, and the stage is not mixed."""
    out: dict = {"stages": {}, "mixed": []}
    for stage, paths in paths_by_stage.items():
        codes: dict[str, list[str]] = {}
        machines: dict[str, int] = {}
        hashes: set = set()
        for p in paths:
            rec = read(p)
            if rec is None:
                codes.setdefault("unknown (no provenance recorded)", []).append(_label(p))
                hashes.add(None)
                continue
            hashes.add(rec["made_by"]["code"]["code_hash"])
            codes.setdefault(code_identity(rec["made_by"]), []).append(_label(p))
            m = machine(rec["made_by"])
            machines[m] = machines.get(m, 0) + 1
        out["stages"][stage] = {"code": [{"version": k, "count": len(v), "cells": sorted(v)} for k, v in
                                         sorted(codes.items())],
                                "machines": [{"machine": k, "count": v} for k, v in sorted(machines.items())]}
        if len(hashes) > 1:
            out["mixed"].append(stage)
    return out


def sweep_summary(tables: dict[str, str]) -> dict:
    """The sweep's provenance.json: each table's maker and the rows' origin (from the tidy table's sidecar)."""
    made = {}
    rows_from = None
    for name, path in tables.items():
        rec = read(path)
        if rec is None:
            made[name] = None
            continue
        made[name] = rec["made_by"]
        rows_from = rows_from or rec.get("rows_from")
    return {"tables": made, "rows_from": rows_from or {"stages": {}, "mixed": []}}


def words(summary: dict) -> list[str]:
    """The sweep's provenance as short lines for the report's front page and ``compare``."""
    lines = []
    rows = summary.get("rows_from") or {"stages": {}, "mixed": []}
    for stage, s in rows["stages"].items():
        for c in s["code"]:
            lines.append(f"{stage}: {c['count']} result(s) by {c['version']}")
        for m in s["machines"]:
            lines.append(f"{stage}: {m['count']} on {m['machine']}")
    for stage in rows["mixed"]:
        versions = rows["stages"][stage]["code"]
        fewest = min(versions, key=lambda c: c["count"])
        lines.append(f"MIXED: {stage} ran under {len(versions)} code versions; {fewest['count']} result(s) by "
                     f"{fewest['version']}: {', '.join(fewest['cells'][:5])}" + (" ..." if len(fewest['cells']) > 5
                                                                                  else ""))
    return lines



def brief(summary: dict) -> list[str]:
    """A sweep's provenance in two or three short lines: the commits and each stage's code hash, the machines with
    what each made, and any stage that mixes code versions (naming its cells)."""
    stages = (summary.get("rows_from") or {}).get("stages", {})
    commits = sorted({c["version"].split(", code")[0] for s in stages.values() for c in s["code"]})
    hashes = ", ".join(f"{stage} " + "/".join(c["version"].rsplit("code ", 1)[-1][:8] for c in s["code"])
                       for stage, s in stages.items())
    machines: dict[str, list[str]] = {}
    for stage, s in stages.items():
        for m in s["machines"]:
            machines.setdefault(m["machine"], []).append(f"{m['count']} {stage}")
    lines = [f"code: {' + '.join(commits) or 'unknown'} (hash of the code run: {hashes or 'none recorded'})"]
    lines += [f"machine: {m} ({', '.join(what)})" for m, what in sorted(machines.items())]
    return lines + [line for line in words(summary) if line.startswith("MIXED")]
