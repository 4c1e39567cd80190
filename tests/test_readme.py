"""Every command in the README's code blocks runs as written, so the docs cannot drift from the code.

Long runs are checked as dry runs (`snakemake -n`, `make -n`); the cluster ones as dry runs with
their profile (no Slurm needed); the one-figure commands for real, verbatim, on a finished run of a
small sweep stored under the name the README uses (`cpu`), after deleting that figure.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess

import pytest
import yaml
from helpers import ROOT, TINY, copy_workflow, env, job_counts, snakemake

pytestmark = pytest.mark.workflow


def readme_commands() -> list[str]:
    """Every line of every ```sh block of README.md, without its trailing comment."""
    text = (ROOT / "README.md").read_text()
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            cmd = re.sub(r"\s+#.*$", "", line).strip()
            if cmd:
                lines.append(cmd)
    return lines


COMMANDS = readme_commands()
FIGURE_COMMANDS = [c for c in COMMANDS if re.search(r"\bfig_\w+|figures/", c)]


def test_the_readme_has_the_commands_users_named():
    assert "make run" in COMMANDS and "make test" in COMMANDS
    assert any("--profile profiles/slurm" in c for c in COMMANDS)
    assert len(FIGURE_COMMANDS) == 2


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A copy of the workflow whose `cpu` sweep is the tiny test sweep, run once (in a folder with a space)."""
    work = copy_workflow(tmp_path_factory.mktemp("readme") / "my project")
    config = yaml.safe_load((work / "config.yaml").read_text())
    config["sweeps"]["cpu"] = yaml.safe_load(TINY.read_text())["sweeps"]["tiny"]
    (work / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    snakemake(work, "--cores", "2", "--config", "sweep=cpu")
    return work


def _dry(cmd: str) -> list[str]:
    """The command as a dry run.  Without --use-conda: this machine cannot reach conda's channels
    (the env files are checked statically by test_envs.py); everything else stays as written."""
    args = shlex.split(cmd)
    assert args[0] == "snakemake", cmd
    return [args[0], "-n", *[a for a in args[1:] if a != "--use-conda"]]


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if c.startswith("snakemake") and c not in FIGURE_COMMANDS])
def test_every_snakemake_command_parses_and_plans(work, cmd):
    args = _dry(cmd)
    if "--report" in args:  # a report of the paper sweep needs its results: check it plans the cpu one
        args = [a.replace("results/paper/", "results/cpu/") for a in args] + ["--config", "sweep=cpu"]
        args.remove("-n")
    r = snakemake(work, *args[1:], check=False, timeout=300)
    assert r.returncode == 0, f"{cmd}:\n{r.stderr[-3000:]}"
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if c.startswith("make ")])
def test_every_make_command_plans(work, cmd):
    """`make -n` in the finished copy (the report's prerequisites exist there, as after a real run)."""
    for name in ("Makefile", "requirements.txt", "pyproject.toml"):
        shutil.copy2(ROOT / name, work / name)
    r = subprocess.run(["make", "-n", *shlex.split(cmd)[1:]], cwd=work, capture_output=True, text=True, env=env())
    assert r.returncode == 0, r.stderr
    assert ("snakemake" in r.stdout) if cmd == "make run" else ("pytest" in r.stdout), r.stdout


@pytest.mark.parametrize("cmd", FIGURE_COMMANDS)
def test_a_one_figure_command_run_verbatim_rebuilds_that_figure_alone(work, cmd):
    name = re.search(r"fig_(\w+)|figures/(\w+)\.", cmd)
    name = name.group(1) or name.group(2)
    pdf = work / "results" / "cpu" / "figures" / f"{name}.pdf"
    pdf.unlink()
    r = subprocess.run(shlex.split(cmd), cwd=work, capture_output=True, text=True, env=env(), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert job_counts(r.stderr) == {f"fig_{name}": 1}
    assert pdf.exists()
