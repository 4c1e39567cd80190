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


def test_every_rule_names_a_pinned_conda_env():
    for smk in (ROOT / "workflow" / "rules").glob("*.smk"):
        text = smk.read_text()
        n_rules = len(re.findall(r"^rule \w+:", text, re.M))
        envs = re.findall(r'conda:\s*\n\s*"([^"]+)"', text)
        assert len(envs) == n_rules, f"{smk.name}: {n_rules} rules but {len(envs)} conda: directives"
        for e in envs:
            assert (smk.parent / e).resolve().parent == ROOT / "envs", e
