"""A cell's settings travel as one record: defined once (stsq.core.experiment.CellRecord), built once per cell
with every derived value resolved (stsq.core.sweep.cell_records), handed whole to the training job, rebuilt by
a constructor that names unknown and missing keys; and no module but the vocabulary spells the list of a
cell's keys."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, TINY, cell_json, copy_workflow, snakemake, validated_config
from stsq.config import sweeps_of
from stsq.core import experiment as ex
from stsq.core.experiment import AXES, CellRecord, CellRecordError
from stsq.core.sweep import cell_lr, cell_records, cells, position_range

SRC = ROOT / "workflow" / "src" / "stsq"


def test_every_cell_of_every_sweep_has_one_record_with_its_settings_resolved():
    config = validated_config()
    for name, sweep in sweeps_of(config, "width").items():  # a samples sweep's cells: tests/test_retrieval.py
        records = cell_records(sweep)
        assert [r.path for r in records] == [ex.cell(**row) for row in cells(sweep).to_dict("records")], name
        assert len({r.path for r in records}) == len(records), f"{name}: two records of one cell"
        for r in records:
            a = sweep["archs"][r.arch]
            assert r.lr == cell_lr(a, r.width)  # the width scaling, resolved
            assert (r.optimizer, r.schedule, r.layers) == (a["optimizer"], a["schedule"], a["layers"])
            batch_size = a.get("batch_size", sweep["batch_size"])  # an arch's own, else the sweep's
            assert (r.batch_size, r.query, r.log_every, r.checkpoint_every) == (
                batch_size, sweep["query"], sweep["log_every"], sweep["checkpoint_every"])
            assert r.position_range == (position_range(sweep) if ex.uses_position_range(r.arch) else 0)
            assert CellRecord.from_json(r.to_json()) == r  # what the training job rebuilds


def test_a_width_scaled_learning_rate_reaches_the_record():
    sweep = validated_config()["sweeps"]["cpu"]
    a = sweep["archs"]["tf_stochastic"]
    a.update(lr_width_exponent=1.0, lr_reference_width=8)
    lrs = {r.width: r.lr for r in cell_records(sweep) if r.arch == "tf_stochastic"}
    assert all(lr == pytest.approx(a["lr"] * min(1.0, 8 / w)) for w, lr in lrs.items())
    assert len(set(lrs.values())) > 1, lrs


def test_a_record_with_an_unknown_or_a_missing_key_is_refused_naming_them():
    good = CellRecord(arch="fcn", q=2, N=8, d=4, steps=10, width=16, lr=1e-3).to_dict()
    with pytest.raises(CellRecordError, match=r"unknown key\(s\) beta2.*missing key\(s\) lr"):
        CellRecord.from_dict({**{k: v for k, v in good.items() if k != "lr"}, "beta2": 0.99}, "job X")
    with pytest.raises(CellRecordError, match="job X: missing key"):
        CellRecord.from_dict({k: v for k, v in good.items() if k != "width"}, "job X")
    assert CellRecord.from_dict(good) == CellRecord(**good)


def test_the_train_command_refuses_a_bad_record_before_any_work(tmp_path):
    bad = json.dumps({**json.loads(cell_json(arch="fcn", q=2, N=8, d=4, steps=10, width=16, lr=1e-3)),
                      "momentum": 0.9})
    env = {**os.environ, "PYTHONPATH": str(ROOT / "workflow" / "src")}
    r = subprocess.run([sys.executable, "-m", "stsq", "train", "--cell", bad, "--seeds", "0", "--data-index",
                        tmp_path / "missing.json", "--models", tmp_path / "m.pt", "--curves", tmp_path / "c.csv",
                        "--checkpoint-dir", tmp_path / "ck"], capture_output=True, text=True, env=env)
    assert r.returncode != 0 and "unknown key(s) momentum" in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.workflow
def test_the_training_job_gets_its_cells_record_whole(tmp_path):
    work = copy_workflow(tmp_path / "wf")
    out = snakemake(work, "-n", "-p", "--configfile", TINY, "--config", "sweep=tiny").stdout
    commands = [line for line in out.splitlines() if "python -m stsq train " in line]
    sweep = validated_config(TINY)["sweeps"]["tiny"]
    records = {r.path: r for r in cell_records(sweep)}
    assert len(commands) == len(records)
    for line in commands:
        args = shlex.split(line.split("set -euo pipefail;")[-1].split(">")[0])
        record = CellRecord.from_json(args[args.index("--cell") + 1])
        assert records[record.path] == record
        # nothing of the record travels beside it as a flag of its own
        assert not {f"--{k.replace('_', '-')}" for k in CellRecord.keys()} - {"--cell"} & set(args), args


def _key_lists(path: Path):
    """Every list or tuple literal of strings in a module that holds at least four of the cell's axes."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.List | ast.Tuple):
            names = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            if len(names & set(AXES)) >= 4:
                yield node.lineno, sorted(names)


def _modules(src: Path = SRC):
    """(path relative to the package, path) of every module of the package, in every folder."""
    return [(p.relative_to(src).as_posix(), p) for p in sorted(src.rglob("*.py")) if "__pycache__" not in p.parts]


def test_no_module_but_the_vocabulary_spells_the_list_of_a_cells_keys():
    # the vocabularies: core/experiment.py (a width sweep's cells), retrieval/cells.py (a samples sweep's)
    spelled = {f"{rel}:{line}": names for rel, p in _modules()
               if rel not in ("core/experiment.py", "retrieval/cells.py")
               for line, names in _key_lists(p)}
    assert spelled == {}, spelled
    rules = [p for p in (ROOT / "workflow" / "rules").glob("*.smk")]
    pattern = re.compile(r"""["']arch["'],\s*["']q["'],\s*["']N["'],\s*["']d["']""")
    assert not [p.name for p in rules if pattern.search(p.read_text())]


def test_the_check_of_spelled_key_lists_finds_one(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('KEYS = ["arch", "q", "N", "d", "steps", "width", "seed"]\n')
    assert list(_key_lists(planted)) == [(1, ["N", "arch", "d", "q", "seed", "steps", "width"])]


def test_the_check_walks_every_folder_of_the_package(tmp_path):
    """A key list planted in a module two folders down is found, and the vocabulary's own folder path is what the
    exclusion names."""
    deep = tmp_path / "claims" / "sub"
    deep.mkdir(parents=True)
    (deep / "planted.py").write_text('X = df[["q", "N", "d", "steps"]]\n')
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "experiment.py").write_text('AXES = ["arch", "q", "N", "d"]\n')
    assert [rel for rel, p in _modules(tmp_path) if list(_key_lists(p))] == ["claims/sub/planted.py",
                                                                             "core/experiment.py"]
