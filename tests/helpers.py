"""Running the workflow in a scratch copy, so tests never touch the checkout's results/."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SNAKEMAKE = str(BIN / "snakemake")
TINY = ROOT / "tests" / "configs" / "tiny.yaml"


def copy_workflow(dest: Path) -> Path:
    """The workflow's files (not results/ nor .snakemake/) under ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "config.yaml"):
        shutil.copy2(ROOT / name, dest / name)
    for name in ("workflow", "envs", "profiles"):
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return dest


def env():
    e = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    e.pop("SNAKEMAKE_PROFILE", None)
    return e


def snakemake(workdir: Path, *args, timeout=600, check=True) -> subprocess.CompletedProcess:
    cmd = ["timeout", "-k", "10", str(timeout), SNAKEMAKE, *map(str, args)]
    r = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, env=env())
    if check and r.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(map(str, args))} failed ({r.returncode}):\n{r.stdout[-3000:]}"
                             f"\n{r.stderr[-6000:]}")
    return r


def job_counts(output: str) -> dict[str, int]:
    """The 'Job stats' table of a Snakemake run or dry run, as {rule: count}."""
    m = re.search(r"Job stats:\n.*?\n-+\s+-+\n(.*?)\ntotal\s+(\d+)", output, re.S)
    if not m:
        return {}
    return {rule: int(n) for rule, n in re.findall(r"^(\S+)\s+(\d+)\s*$", m.group(1), re.M)}


def tiny_config() -> dict:
    return yaml.safe_load(TINY.read_text())
