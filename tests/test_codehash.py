"""A code change reruns exactly what it changes: each rule's ``params.code`` is the hash of the code its command can
reach (stsq.provenance.codehash).  Each edit below is made to a copy of the library, and the stages whose hash moves are
exactly those whose output the edit can change."""

import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

SRC = ROOT / "workflow" / "src" / "stsq"
STAGES = [("data", None), ("train", None), ("evaluate", None), ("oracle", None), ("aggregate", None),
          ("critical", None), ("reach", None), ("encodings", None), ("claims", None), ("landing", None),
          *(("figure", name) for name in ("training", "separation", "length", "mechanism", "scaling", "encodings",
                                          "reach"))]
ANALYSIS = {"aggregate", "critical", "reach", "encodings", "claims", "landing"}
FIGURES = {f"figure {n}" for c, n in STAGES if c == "figure"}


def hashes(package) -> dict[str, str]:
    """Every stage's hash, computed by a fresh interpreter from the package at ``package``."""
    script = ("import json, sys; from stsq.provenance.codehash import stage_hash; "
              f"print(json.dumps({{f'{{c}} {{k}}' if k else c: stage_hash(c, k) for c, k in {STAGES!r}}}))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(package.parent), "PATH": "/usr/bin:/bin"}).stdout
    import json
    return json.loads(out)


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    package = tmp_path_factory.mktemp("original") / "stsq"
    shutil.copytree(SRC, package, ignore=shutil.ignore_patterns("__pycache__"))
    return hashes(package)


def changed(tmp_path, original, module, old, new) -> set[str]:
    package = tmp_path / "stsq"
    shutil.copytree(SRC, package, ignore=shutil.ignore_patterns("__pycache__"))
    text = (package / module).read_text()
    assert text.count(old) >= 1, f"{module}: {old!r} not found"
    (package / module).write_text(text.replace(old, new, 1))
    after = hashes(package)
    return {stage for stage in original if after[stage] != original[stage]}


EDITS = {
    "a comment in step.py": ("sts/step.py", "import torch\n", "import torch  # a comment\n", set()),
    "a docstring in train.py": ("width/train.py", '"""Train one model of', '"""Trains one model of', set()),
    "the loss in task.py": ("sts/task.py", ".mean() / power(task, d, q)", ".mean() / power(task, d, q) * 2",
                            {"train", "evaluate"}),
    # the claims table, and what quotes the claim's threshold: every caption and the front page
    "a claim's threshold": ("claims/learning.py", "COS_V_MIN = 0.9", "COS_V_MIN = 0.8",
                            {"claims", "landing"} | FIGURES),
    "what a result records": ("provenance/sidecars.py", '"threads": int(threads),',
                              '"threads": int(threads), "host": 1,',
                              set()),
    "a cost constant": ("cluster/cost.py", "StepRate(8.4, 0.14e-3)", "StepRate(9.0, 0.14e-3)", set()),
    # the front page reads what each figure shows, not its caption's text (a record's field counts where it is read)
    "a caption's text": ("core/figure_catalog.py", '"Normalized loss on the fixed', '"The normalized loss on the fixed',
                         {"figure training"}),
    "one figure's colour": ("report/figures.py", 'Ns, shades_of("viridis"', 'Ns, shades_of("magma"',
                            {"figure reach", "landing"}),
    "an arch's colour": ("core/experiment.py", '"tf_stochastic": Style("Blues", "o")',
                         '"tf_stochastic": Style("Purples", "o")', FIGURES | {"landing"}),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edit_moves_the_hash_of_exactly_the_stages_it_can_change(tmp_path, original, edit):
    module, old, new, expected = EDITS[edit]
    moved = changed(tmp_path, original, module, old, new)
    print(f"\n[measured] {edit}: {sorted(moved) or 'no stage'}")
    assert moved == expected


def test_a_figures_record_changes_that_figure_and_not_training(tmp_path, original):
    """What a figure shows (its record's one line) is the front page's and that figure's, nothing upstream."""
    moved = changed(tmp_path, original, "core/figure_catalog.py", '"normalized test loss vs training step"',
                    '"the normalized test loss vs training step"')
    assert moved and moved <= FIGURES | ANALYSIS and not moved & {"train", "evaluate", "data", "oracle"}


def test_the_hash_reaches_a_model_builder_named_by_a_string(tmp_path, original):
    """A family names its builder as "stsq.sts.models:transformer_of": a change there retrains."""
    moved = changed(tmp_path, original, "sts/models.py", "table_seed=derive_seed(seed, \"fixed_pe\"),\n"
                    "                       positional_only", "table_seed=derive_seed(seed, \"fixed_pe2\"),\n"
                    "                       positional_only")
    assert "train" in moved


TASK_STAGES = {"sts": [("train", None), ("evaluate", None), ("aggregate", None), ("claims", None), ("landing", None),
                       ("figure", "training")],
               "qstr": [("samples", None), ("aggregate", None), ("claims", None), ("landing", None),
                        ("figure", "samples")]}


def task_hashes(package) -> dict[str, str]:
    """Each task's stages' hashes as its sweep's rules compute them (its registries' entries only)."""
    script = ("import json; from stsq.provenance.codehash import stage_hash; "
              f"print(json.dumps({{f'{{t}} {{c}}' + (f' {{k}}' if k else ''): stage_hash(c, k, task=t) "
              f"for t, stages in {TASK_STAGES!r}.items() for c, k in stages}}))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(package.parent), "PATH": "/usr/bin:/bin"}).stdout
    import json
    return json.loads(out)


TASK_EDITS = {  # edit -> the stages whose hash it moves, of both tasks' sweeps
    "a retrieval claim's threshold": ("claims/retrieval.py", "AT = 0.3", "AT = 0.5",
                                      {"qstr claims", "qstr landing", "qstr figure samples"}),
    "a retrieval model's activation": ("retrieval/models.py", "f = torch.relu(heads @ self.hidden",
                                       "f = torch.nn.functional.gelu(heads @ self.hidden",
                                       {"qstr samples", "qstr claims", "qstr landing", "qstr figure samples"}),
    "the samples figure's caption": ("report/retrieval.py", 'Markers: the "', 'Markers: each "',
                                     {"qstr figure samples"}),
    "the loss in task.py": ("sts/task.py", ".mean() / power(task, d, q)", ".mean() / power(task, d, q) * 2",
                            {"sts train", "sts evaluate"}),
}


@pytest.fixture(scope="module")
def task_original(tmp_path_factory):
    package = tmp_path_factory.mktemp("task_original") / "stsq"
    shutil.copytree(SRC, package, ignore=shutil.ignore_patterns("__pycache__"))
    return task_hashes(package)


@pytest.mark.parametrize("edit", list(TASK_EDITS))
def test_an_edit_moves_the_stages_of_its_own_task_only(tmp_path, task_original, edit):
    """The runner of a measure does not read its claims, and one task's edit moves no stage of the other's."""
    module, old, new, expected = TASK_EDITS[edit]
    before = task_original
    after_pkg = tmp_path / "after" / "stsq"
    shutil.copytree(SRC, after_pkg, ignore=shutil.ignore_patterns("__pycache__"))
    text = (after_pkg / module).read_text()
    assert old in text, (module, old)
    (after_pkg / module).write_text(text.replace(old, new, 1))
    after = task_hashes(after_pkg)
    moved = {s for s in before if before[s] != after[s]}
    print(f"\n[measured] {edit}: {sorted(moved) or 'no stage'}")
    assert moved == expected
