"""docs/extending.md's changes are each the whole change: its code blocks, put where they say (appended,
inserted after a line, or replacing one) in a copy of the workflow, with no other file edited, give
- a new encoding: an arch that trains, is scored at every N', and appears in the encodings table, the
  encodings figure and the claims table;
- a new training setting (Adam's beta2): it reaches the cell's record, the saved model's spec and the
  optimizer (the model is reproduced bit for bit by the same beta2 only);
- a new model family (linear attention): its arch trains, is scored at every N' and appears in the encodings
  table and figure;
- a new figure (the attention at the end of training): its rule draws it and the report holds it, with a caption
  that reports its claim;
- a new claim (an FCN as wide as N d learns): the copy's claims tests FAIL it on its table and PASS it on the
  paper's picture.
The same small sweep shows randomized positions beyond their range L as not applicable, everywhere."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml
from helpers import ROOT, copy_workflow, job_counts, snakemake

DOC = ROOT / "docs" / "extending.md"
BLOCK = re.compile(r"<!-- extending(?:\[(\w+)\])?: (\S+)(?: (after|replace): (.*?))? -->\n```python\n(.*?)```", re.S)
CHANGES = {"hypercube": {"workflow/src/stsq/sts/positions.py", "workflow/src/stsq/core/experiment.py"},
           "beta2": {"workflow/src/stsq/core/experiment.py", "workflow/schemas/config.schema.yaml",
                     "workflow/src/stsq/sts/step.py"},
           "linear": {"workflow/src/stsq/sts/models.py", "workflow/src/stsq/core/families.py",
                      "workflow/src/stsq/core/experiment.py"},
           "figure": {"workflow/src/stsq/report/figures.py", "workflow/src/stsq/core/figure_catalog.py",
                      "workflow/src/stsq/claims/learning.py"},
           "claim": {"workflow/src/stsq/claims/width.py", "tests/test_claims.py"},
           "task": {"workflow/src/stsq/sts/task.py", "workflow/src/stsq/core/tasks.py"},
           "samples_task": {"workflow/src/stsq/retrieval/task.py", "workflow/src/stsq/core/tasks.py",
                            "workflow/src/stsq/core/experiment.py", "workflow/src/stsq/claims/retrieval.py"},
           "axis": {"workflow/src/stsq/core/experiment.py", "workflow/schemas/config.schema.yaml",
                    "workflow/src/stsq/sts/models.py", "workflow/src/stsq/report/figures.py",
                    "workflow/src/stsq/core/figure_catalog.py"}}
# each run in a copy of its own (the axis moves every cell's folder)
SEPARATE = ("task", "samples_task", "axis", "claim")


def doc_changes() -> dict[str, list[tuple[str, str, str, str]]]:
    """{change: [(file, how, anchor, code)]} of every block of docs/extending.md, in its order: how is "" (append),
    "after" (insert after the line holding anchor) or "replace" (the line holding anchor)."""
    out: dict = {}
    for name, path, how, anchor, code in BLOCK.findall(DOC.read_text()):
        out.setdefault(name or "hypercube", []).append((path, how, anchor, code))
    return out


def apply(work, blocks) -> None:
    for path, how, anchor, code in blocks:
        f = work / path
        if not how:
            f.write_text(f.read_text() + "\n\n" + code)
            continue
        lines = f.read_text().splitlines(keepends=True)
        at = [i for i, line in enumerate(lines) if anchor in line]
        assert len(at) == 1, (path, anchor, at)  # the anchor names one line
        i = at[0]
        lines[i:i + 1] = [lines[i], code] if how == "after" else [code]
        f.write_text("".join(lines))


def test_each_documented_change_is_the_files_and_as_many_lines_as_it_says():
    changes = doc_changes()
    assert {k: {p for p, *_ in v} for k, v in changes.items()} == CHANGES
    said = re.findall(r"That is (?:all the code|the whole change): (\d+) files, (\d+) lines", DOC.read_text())
    counted = [(len({p for p, *_ in v}), sum(len(code.splitlines()) for *_, code in v)) for v in changes.values()]
    assert [(int(f), int(n)) for f, n in said] == counted


@pytest.mark.slow
def test_the_documented_changes_run_through_training_figures_and_claims(tmp_path):
    work = copy_workflow(tmp_path / "wf")
    before = {p.relative_to(work): p.read_bytes() for p in (work / "workflow").rglob("*") if p.is_file()}
    for name, blocks in doc_changes().items():
        if name not in SEPARATE:
            apply(work, blocks)
    changed = sorted(str(p) for p, b in before.items() if (work / p).read_bytes() != b)
    assert changed == sorted(set().union(*(v for k, v in CHANGES.items() if k not in SEPARATE)))

    # beside it, randomized positions from L = 16 rows: N' = 32 is beyond them
    config = {"sweep": "ext", "sweeps": {"ext": {
        "d": 4, "N": [8], "q": [2], "seeds": [0, 1], "eval_length_factors": [1, 2, 4], "n_eval": 64,
        "batch_size": 32, "log_every": 40, "checkpoint_every": 80, "query": "sum", "position_range": 16,
        "archs": {"tf_stochastic": {"widths": [16], "steps": 160, "lr": 0.02, "adam_beta2": 0.9},
                  "tf_hypercube": {"widths": [16], "steps": 160, "lr": 0.02},
                  "tf_randomized": {"widths": [16], "steps": 160, "lr": 0.02},
                  "tf_linear": {"widths": [16], "steps": 160, "lr": 0.02}}}}}
    (work / "ext.yaml").write_text(yaml.safe_dump(config))
    snakemake(work, "--cores", "2", "--configfile", "ext.yaml")

    root = work / "results" / "ext"
    enc = pd.read_csv(root / "tables" / "encodings.csv")
    hyper = enc[enc["arch"] == "tf_hypercube"]
    assert hyper["encoding"].eq("hypercube").all() and sorted(hyper["N_eval"]) == [8, 16, 32]
    assert hyper["loss_mean"].notna().all() and (hyper["seeds"] == 2).all()
    claims = pd.read_csv(root / "tables" / "claims.csv")
    row = claims[(claims["claim"] == "length_fixed") & claims["cell"].str.startswith("tf_hypercube")]
    # a table of positions, drawn once: it fits at N and fails beyond it, as the paper's fixed PE does
    assert len(row) == 1 and row.iloc[0]["verdict"] == "PASS", row.iloc[0]["measured"]
    assert (root / "figures" / "encodings.png").stat().st_size > 10_000

    # randomized positions beyond their range: not applicable in the tidy table, the encodings table and
    # the claim, never a number (and not scored along training either)
    metrics = pd.read_csv(root / "tables" / "metrics.csv")
    rz = metrics[(metrics["arch"] == "tf_randomized") & (metrics["metric"] == "normalized_loss")]
    ev = rz[rz["split"] == "eval"]
    na, ok = ev[ev["status"] == "not_applicable"], ev[ev["status"] == "ok"]
    assert set(na["N_eval"]) == {32} and set(ok["N_eval"]) == {8, 16} and na["value"].isna().all()
    assert 32 not in set(rz[rz["split"] == "test"]["N_eval"])
    row = enc[(enc["arch"] == "tf_randomized") & (enc["N_eval"] == 32)].iloc[0]
    assert row["status"] == "not_applicable" and pd.isna(row["loss_mean"]) and row["position_range"] == 16
    claim = claims[claims["claim"] == "length_randomized"].iloc[0]
    assert "not applicable: [32]" in claim["measured"]
    # the figure draws it: its legend, from the copy's own code
    legend = subprocess.run(
        [sys.executable, "-c", "import sys; from stsq.report.figures import encodings_figure; "
         "from stsq.width.tables import read_metrics_table, read_oracle_table; "
         "fig = encodings_figure(read_metrics_table(sys.argv[1]), read_oracle_table(sys.argv[2])); "
         "print([t.get_text() for leg in fig.legends for t in leg.get_texts()])",
         str(root / "tables" / "metrics.csv"), str(root / "tables" / "oracle.csv")],
        env={**os.environ, "PYTHONPATH": str(work / "workflow" / "src")}, capture_output=True, text=True, timeout=120)
    assert "tf_hypercube d_e=16" in legend.stdout and "tf_linear d_e=16" in legend.stdout, legend.stderr[-2000:]

    # the new family: trained, scored at every N', in the encodings table
    linear = enc[enc["arch"] == "tf_linear"]
    assert sorted(linear["N_eval"]) == [8, 16, 32] and linear["loss_mean"].notna().all()
    assert (metrics[(metrics["arch"] == "tf_linear") & (metrics["split"] == "train")]["value"].notna()).all()

    # the new setting: in the saved model's spec, and what the model is: the same beta2 reproduces it bit for
    # bit (the copy's own code), another does not
    script = (
        "import sys, torch; from stsq.width.train import load_model, train, TrainSpec; "
        "from stsq.sts.data import load_eval_set, "
        "seed_manifest\n"
        "model, spec = load_model(sys.argv[1]); folder, m = seed_manifest(sys.argv[2], 0, q=2, N=8, d=4)\n"
        "test = load_eval_set(folder, 8, m)\n"
        "same = lambda b: all(torch.equal(x, y) for x, y in zip(model.state_dict().values(), train(TrainSpec(**{"
        "**spec.__dict__, 'adam_beta2': b}), test, log=lambda s: None).model.state_dict().values()))\n"
        "print(spec.adam_beta2, same(0.9), same(0.999))")
    model = root / "models" / "arch~tf_stochastic/q~2/N~8/d~4/steps~160/width~16/seed~0/model.pt"
    r = subprocess.run([sys.executable, "-c", script, str(model), str(root / "data/q~2/N~8/d~4/index.json")],
                       env={**os.environ, "PYTHONPATH": str(work / "workflow" / "src")}, capture_output=True,
                       text=True, timeout=300, cwd=work)
    assert r.stdout.split() == ["0.9", "True", "False"], r.stderr[-2000:]

    # the new figure: drawn by its own rule, in the report with a caption that reports its claim
    assert (root / "figures" / "attention.png").stat().st_size > 10_000
    caption = (root / "report" / "attention.rst").read_text()
    assert "**directions**" in caption and "attention mass on y of the final models" in caption
    assert "attention" in (root / "report" / "landing.rst").read_text()


def test_the_new_claim_fails_on_its_table_and_passes_on_the_papers_picture(tmp_path):
    """The new claim in a copy (its record and its falsifying table): the copy's own claims tests, every claim
    with a table that FAILs it, this one FAILed by its own, and the paper's picture PASSing every claim."""
    work = copy_workflow(tmp_path / "wf")
    shutil.copytree(ROOT / "tests", work / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    apply(work, doc_changes()["claim"])
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_claims.py", "-k",
                        "falsifying_table or fcn_learns or papers_picture_passes"],
                       cwd=work, env={**os.environ, "PYTHONPATH": str(work / "workflow" / "src")}, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0 and "3 passed" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]

@pytest.mark.slow
def test_a_new_task_of_each_measure_and_an_axis_run_through_snakemake_to_the_figure_and_claims(tmp_path):
    """The sum of the selected tokens as a task that measures widths and W's initial scale as an axis, one cell
    each through Snakemake: the evaluation sets hold the task's target; the task has no oracle, so its oracle table
    has no row and the claims that read the oracle or the floor say so; the model reads the axis (the two scales
    train two models); the claims are judged per value of it and its figure draws it.  Beside it, the mean of the
    reads as a task that measures samples: records only, through the samples measure's rules to its claims
    table, its figure and its front page."""
    work = copy_workflow(tmp_path / "wf")
    for name in ("task", "axis", "samples_task"):
        apply(work, doc_changes()[name])
    config = {"sweep": "toy", "sweeps": {"toy": {
        "d": 4, "N": [8], "q": [2], "seeds": [0, 1], "eval_length_factors": [1, 2], "n_eval": 64, "batch_size": 32,
        "log_every": 80, "checkpoint_every": 160, "query": "sum", "task": "sum", "init_scale": [0.0, 0.5],
        "archs": {"tf_stochastic": {"widths": [16], "steps": 480, "lr": 0.02}}}}}
    (work / "toy.yaml").write_text(yaml.safe_dump(config))
    snakemake(work, "--cores", "2", "--configfile", "toy.yaml")
    root = work / "results" / "toy"

    # the task: the evaluation sets' targets are sums; no oracle
    script = ("import sys, torch; from stsq.sts.data import load_eval_set, seed_manifest\n"
              "folder, m = seed_manifest(sys.argv[1], 0, q=2, N=8, d=4); s = load_eval_set(folder, 8, m)\n"
              "picked = s['X'].gather(1, s['y'].unsqueeze(-1).expand(-1, -1, 4)).sum(1)\n"
              "print(m.get('task'), torch.allclose(picked, s['target']))")
    r = subprocess.run([sys.executable, "-c", script, str(root / "data/q~2/N~8/d~4/index.json")], cwd=work,
                       env={**os.environ, "PYTHONPATH": str(work / "workflow" / "src")}, capture_output=True,
                       text=True, timeout=120)
    assert r.stdout.split() == ["sum", "True"], r.stderr[-2000:]
    assert pd.read_csv(root / "tables" / "oracle.csv").empty

    # the axis: a column of every table, two models per seed that differ, the claims judged per value
    metrics = pd.read_csv(root / "tables" / "metrics.csv")
    final = metrics[(metrics["split"] == "eval") & (metrics["metric"] == "normalized_loss") & (metrics["N_eval"] == 8)]
    by_scale = final.groupby("init_scale")["value"].apply(list)
    assert sorted(by_scale.index) == [0.0, 0.5] and by_scale[0.0] != by_scale[0.5]
    claims = pd.read_csv(root / "tables" / "claims.csv")
    for scale in ("0.0", "0.5"):
        mine = claims[claims["cell"].str.startswith(f"init_scale={scale}")]
        v = dict(zip(mine["claim"], mine["verdict"]))
        # what reads the ground-truth family or the floor: NOT TESTED, saying why
        for key in ("learns", "directions", "length_stochastic", "fcn_floor", "tf_scaling"):
            row = mine[mine["claim"] == key].iloc[0]
            assert row["verdict"] == "NOT TESTED" and "the task sum has no" in row["measured"], (key, row["measured"])
        # what does not: measured (three checkpoints scored at N' = 2N)
        assert v["length_training"] in ("PASS", "FAIL"), mine[mine["claim"] == "length_training"]["measured"]
    assert (root / "figures" / "init_scale.png").stat().st_size > 10_000
    assert "init_scale" in (root / "report" / "landing.rst").read_text()

    # the samples task: its cells on the samples measure's rules, its claim judged on its samples table
    config = {"sweep": "toy_mean", "sweeps": {"toy_mean": {
        "task": "qmean", "d": 4, "N": [2, 4], "q": [2], "modes": ["general"], "seeds": [0, 1],
        "thresholds": [0.5, 0.3], "cap": 3200, "n_test": 200, "archs": {"qmean_transformer": {"width": 16,
                                                                                             "heads": [2]}}}}}
    (work / "toy_mean.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(work, "--cores", "2", "--configfile", "toy_mean.yaml")
    plan = job_counts(run.stdout + run.stderr)
    root = work / "results" / "toy_mean"
    samples = pd.read_csv(root / "tables" / "samples.csv")
    assert set(samples["arch"]) == {"qmean_transformer"} and len(samples) == 2 * 2 * 2
    claims = pd.read_csv(root / "tables" / "claims.csv")
    assert list(claims["claim"]) == ["qmean_learned"] and claims["verdict"].iloc[0] in ("PASS", "FAIL")
    assert (root / "figures" / "samples.png").stat().st_size > 10_000
    assert "Result:" in (root / "report" / "landing.rst").read_text()
    assert plan["samples"] == 2 and "train" not in plan  # its runner, one job per (N, heads) cell
