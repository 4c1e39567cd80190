"""Running the workflow in a scratch copy, so tests never touch the checkout's results/."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SNAKEMAKE = str(BIN / "snakemake")
TINY = ROOT / "tests" / "configs" / "tiny.yaml"
QSTR_TINY = ROOT / "tests" / "configs" / "qstr_tiny.yaml"


def copy_workflow(dest: Path) -> Path:
    """The workflow's files (not results/ nor .snakemake/) under ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "config.yaml"):
        shutil.copy2(ROOT / name, dest / name)
    for name in ("workflow", "envs", "profiles"):
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return dest


def copy_finished(run: Path, dest: Path) -> Path:
    """A copy of a finished run (its workflow, results/ and .snakemake/, every file's times kept) at ``dest``:
    Snakemake finds nothing to do in it, as in the run itself."""
    shutil.copytree(run, dest, symlinks=True)
    return dest


def venv_at(folder: Path) -> Path:
    """A virtual environment in ``folder`` (a path with spaces and a quote, as a user's checkout may
    have) that sees this environment's packages; returns its bin/.  Cheap: no install, a .pth file."""
    import site
    import sysconfig
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    purelib = Path(sysconfig.get_path("purelib", vars={"base": str(folder), "platbase": str(folder)}))
    (purelib / "outer.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    bin_dir = folder / "bin"
    # the console script, written the way pip writes one for a path with spaces
    launcher = bin_dir / "snakemake"
    launcher.write_text(f"#!/bin/sh\nexec {shlex.quote(str(bin_dir / 'python'))} -m snakemake \"$@\"\n")
    launcher.chmod(0o755)
    return bin_dir


def env():
    e = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    e.pop("SNAKEMAKE_PROFILE", None)
    return e


def snakemake(workdir: Path, *args, timeout=600, check=True, umask: int | None = None,
              extra_env: dict | None = None) -> subprocess.CompletedProcess:
    """Run Snakemake in ``workdir``: with the checkout's own .venv when it has one (``venv_at``), else ours;
    under ``umask`` when given (as a shared project directory's users set it); with ``extra_env`` set."""
    own = Path(workdir) / ".venv" / "bin"
    e = {**env(), **(extra_env or {})}
    if (own / "snakemake").exists():
        e["PATH"] = f"{own}{os.pathsep}{e['PATH']}"
    cmd = ["timeout", "-k", "10", str(timeout), str(own / "snakemake") if (own / "snakemake").exists() else SNAKEMAKE,
           *map(str, args)]
    r = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, env=e,
                       preexec_fn=None if umask is None else (lambda: os.umask(umask)))
    if check and r.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(map(str, args))} failed ({r.returncode}):\n{r.stdout[-3000:]}"
                             f"\n{r.stderr[-6000:]}")
    return r


def record(arch: str, *, q: int = 2, N: int, d: int, width: int, steps: int = 10, lr: float = 1e-2, **settings):
    """A cell record (stsq.core.experiment.CellRecord) of the given shape and settings, the defaults for the rest."""
    from stsq.core.experiment import CellRecord

    return CellRecord(arch=arch, q=q, N=N, d=d, width=width, steps=steps, lr=lr, **settings)


def cell_json(**settings) -> str:
    """A cell record for ``python -m stsq train --cell``: the given axes and settings, the defaults for the rest."""
    from stsq.core.experiment import CellRecord

    return CellRecord(**settings).to_json()


def job_counts(output: str) -> dict[str, int]:
    """The 'Job stats' table of a Snakemake run or dry run, as {rule: count}."""
    m = re.search(r"Job stats:\n.*?\n-+\s+-+\n(.*?)\ntotal\s+(\d+)", output, re.S)
    if not m:
        return {}
    return {rule: int(n) for rule, n in re.findall(r"^(\S+)\s+(\d+)\s*$", m.group(1), re.M)}


def _merged(base: dict, extra: dict) -> dict:
    for k, v in extra.items():
        base[k] = _merged(base.get(k, {}), v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    return base


def validated_config(configfile: Path | None = None) -> dict:
    """config.yaml as the workflow sees it (with ``configfile`` over it, as `--configfile` does): validated,
    with the schema's defaults filled in."""
    from stsq.config import validate_config
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    if configfile is not None:
        config = _merged(config, yaml.safe_load(Path(configfile).read_text()))
    validate_config(config, ROOT / "workflow" / "schemas" / "config.schema.yaml")
    return config


def tiny_config() -> dict:
    return yaml.safe_load(TINY.read_text())
