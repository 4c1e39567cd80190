"""The conda env files parse, pin every package, and agree with the pip pins of requirements.txt."""

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONDA_TO_PIP = {"pytorch": "torch"}


def pip_pins():
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[name.lower()] = version
    return pins


ENV_FILES = sorted((ROOT / "envs").glob("*.yaml"))


def test_there_is_a_training_and_an_analysis_env():
    assert {p.stem for p in ENV_FILES} >= {"train", "analysis"}


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_env_file_pins_every_package_to_the_pip_version(path):
    env = yaml.safe_load(path.read_text())
    assert env["channels"][0] == "conda-forge"
    pins = pip_pins()
    for dep in env["dependencies"]:
        assert isinstance(dep, str), f"{path.name}: nested pip sections are not allowed: {dep}"
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)=([0-9][0-9A-Za-z.]*)", dep)
        assert m, f"{path.name}: {dep!r} is not pinned as name=version"
        name, version = m.groups()
        if name == "python":
            continue
        pip_name = CONDA_TO_PIP.get(name, name)
        assert pip_name in pins, f"{path.name}: {name} has no pin in requirements.txt"
        assert pins[pip_name] == version, f"{path.name}: {name}={version} but requirements.txt has {pins[pip_name]}"


def test_every_rule_is_a_shell_rule_with_a_pinned_conda_env():
    """Every rule runs the package's CLI through `shell:` in an env of envs/ (no `run:` rule: Snakemake
    runs those through an unquoted interpreter path, which breaks in folders with spaces)."""
    n_rules = 0
    for smk in (ROOT / "workflow" / "rules").glob("*.smk"):
        # rules at the top level and the figure rules generated in a loop (`rule:` + `name:`)
        for block in re.split(r"^(?=[ ]*rule\b[^\n]*:\n)", smk.read_text(), flags=re.M)[1:]:
            name = block.split("\n")[0].strip()
            assert not re.search(r"^\s*run:", block, re.M), f"{smk.name}: {name} is a run: rule"
            assert re.search(r"^\s*shell:", block, re.M), f"{smk.name}: {name} has no shell:"
            n_rules += 1
            envs = re.findall(r'conda:\s*\n\s*"([^"]+)"', block)
            assert len(envs) == 1, f"{smk.name}: {name} names {len(envs)} conda envs"
            assert (smk.parent / envs[0]).resolve().parent == ROOT / "envs", envs[0]
    assert n_rules >= 7  # eval_sets, oracle, train, evaluate, aggregate, critical, the figure rule, claims
