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
    """Every rule that runs a command names an env of envs/; a `run:` rule runs in Snakemake's own
    Python, where conda: is not allowed (data_index: a few lines of json and hashlib)."""
    n_shell = 0
    for smk in (ROOT / "workflow" / "rules").glob("*.smk"):
        for block in re.split(r"^(?=rule \w+:)", smk.read_text(), flags=re.M)[1:]:
            name = block.split(":")[0]
            if "\n    run:" in block:
                assert "conda:" not in block and "import torch" not in block, name
                continue
            n_shell += 1
            envs = re.findall(r'conda:\s*\n\s*"([^"]+)"', block)
            assert len(envs) == 1, f"{smk.name}: {name} names {len(envs)} conda envs"
            assert (smk.parent / envs[0]).resolve().parent == ROOT / "envs", envs[0]
    assert n_shell >= 9
