"""Nothing lost, nothing silent: kills at any time, damaged files, divergence, concurrent runs."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import torch
import yaml
from helpers import ROOT, SNAKEMAKE, TINY, cell_json, copy_finished, copy_workflow, env, snakemake

KILL = ROOT / "tests" / "configs" / "kill.yaml"
RESULTS = Path("results") / "kill"


# -- kill at any time ------------------------------------------------------------------------------
def start(work, *args):
    return subprocess.Popen([SNAKEMAKE, "--cores", "2", "--configfile", KILL, *args], cwd=work, env=env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def kill_tree_when(proc, condition, timeout=180):
    """SIGKILL Snakemake and every process under it as soon as ``condition()`` holds."""
    t0 = time.time()
    while not condition():
        assert proc.poll() is None, "the workflow finished before the kill point"
        assert time.time() - t0 < timeout, "kill point never reached"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def assert_no_partial_final_files(work):
    """Every final output present is whole: tensors load, tables parse, nothing is empty."""
    for p in (work / RESULTS).rglob("*"):
        if not p.is_file() or p.name.startswith(".") or "logs" in p.parts or "benchmarks" in p.parts:
            continue
        assert p.stat().st_size > 0, f"zero-byte file under a final name: {p}"
        if p.suffix == ".pt":
            torch.load(p, weights_only=True)
        elif p.suffix == ".csv":
            pd.read_csv(p)
        elif p.suffix == ".json":
            json.loads(p.read_text())


def recover(work):
    """The README's command after a kill: remove the stale lock, rerun what was incomplete."""
    snakemake(work, "--unlock", "--configfile", KILL)
    return snakemake(work, "--cores", "2", "--configfile", KILL, "--rerun-incomplete")


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    work = copy_workflow(tmp_path_factory.mktemp("whole") / "wf")
    snakemake(work, "--cores", "2", "--configfile", KILL)
    return (work / RESULTS / "tables" / "metrics.csv").read_bytes()


@pytest.mark.workflow
def test_sigkill_at_any_stage_then_rerun_gives_the_same_table(tmp_path, uninterrupted):
    work = copy_workflow(tmp_path / "wf")
    ckpt = work / RESULTS / "checkpoints/arch~tf_stochastic/q~2/N~8/d~4/steps~4000/width~8/seed~0/last.pt"
    points = {
        "during data generation": lambda: any((work / RESULTS / "data").rglob("eval_x*.pt")),
        "mid-training": lambda: ckpt.exists(),
        "during aggregation": lambda: (work / RESULTS / "logs" / "aggregate.log").exists(),
    }
    for i, condition in enumerate(points.values()):
        if i:  # the lock left by the previous kill is removed first, as documented
            snakemake(work, "--unlock", "--configfile", KILL)
        kill_tree_when(start(work, "--rerun-incomplete"), condition)
        assert_no_partial_final_files(work)
    recover(work)
    assert (work / RESULTS / "tables" / "metrics.csv").read_bytes() == uninterrupted


# -- resume cost -----------------------------------------------------------------------------------
def _cli(*args):
    return [sys.executable, "-m", "stsq", *map(str, args)]


def test_training_killed_at_half_redoes_at_most_one_checkpoint_interval(tmp_path):
    e = {**os.environ, "PYTHONPATH": str(ROOT / "workflow" / "src")}
    manifest = tmp_path / "data" / "seed~0" / "manifest.json"
    subprocess.run(_cli("data", "--q", 2, "--N", 32, "--d", 16, "--seeds", 0, "--eval-lengths", 32,
                        "--n-eval", 256, "--manifests", manifest, "--index", tmp_path / "data" / "index.json"),
                   env=e, check=True)
    steps, every = 3000, 400  # checkpoints at ..., 1200, 1600: a kill at 1500 loses 300 steps
    cell = cell_json(arch="tf_stochastic", q=2, N=32, d=16, width=64, steps=steps, lr=0.01, log_every=50,
                     checkpoint_every=every)
    train = _cli("train", "--cell", cell, "--seeds", 0, "--data-index", tmp_path / "data" / "index.json",
                 "--models", tmp_path / "out" / "model.pt",
                 "--curves", tmp_path / "out" / "curve.csv", "--checkpoint-dir", tmp_path / "ck", "--device", "cpu")
    log = tmp_path / "first.log"
    with open(log, "w") as fh:
        proc = subprocess.Popen(train, env=e, stderr=fh, start_new_session=True)
        t0 = time.perf_counter()
        while f"step {steps // 2}/{steps}" not in log.read_text():
            assert proc.poll() is None and time.perf_counter() - t0 < 300
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    first = time.perf_counter() - t0
    killed_at = max(int(s) for s in re.findall(r"step (\d+)/", log.read_text()))
    t1 = time.perf_counter()
    r = subprocess.run(train, env=e, capture_output=True, text=True, check=True)
    second = time.perf_counter() - t1
    resumed = int(re.search(r"at step (\d+)/", r.stderr).group(1))
    redone = killed_at - resumed
    print(f"\n[measured] killed at step >= {killed_at}/{steps} (last progress line) after {first:.1f}s; "
          f"resumed at {resumed}; "
          f"redone {redone} steps = {redone / steps:.1%} of the run ({redone / every:.2f} checkpoint intervals); "
          f"the resumed run took {second:.1f}s")
    assert 0 <= redone <= every


# -- damaged files ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny(tmp_path_factory, finished_tiny):
    return copy_finished(finished_tiny, tmp_path_factory.mktemp("damage") / "wf")


def _stsq(work, *args):
    e = {**os.environ, "PYTHONPATH": str(work / "workflow" / "src")}
    return subprocess.run(_cli(*args), cwd=work, env=e, capture_output=True, text=True)


def _clear_error(r, name):
    assert r.returncode != 0
    assert name in r.stderr, r.stderr[-2000:]
    assert "Traceback" not in r.stderr, r.stderr[-2000:]


@pytest.mark.workflow
def test_truncated_evaluation_set_is_refused_naming_the_file(tiny, tmp_path):
    data = tiny / "results/tiny/data/q~2/N~8/d~4"
    victim = data / "seed~0" / "eval_x2.pt"
    victim.write_bytes(victim.read_bytes()[:1000])
    r = _stsq(tiny, "evaluate", "--models",
              "results/tiny/models/arch~tf_stochastic/q~2/N~8/d~4/steps~60/width~8/seed~0/model.pt",
              "--data-index", data / "index.json", "--eval-lengths", 8, 16, "--out", tmp_path / "x.csv")
    _clear_error(r, "eval_x2.pt")
    v = shlex.quote(str(victim))
    assert f"Rebuild it with: rm -f {v} && snakemake --cores 1 {v} --config sweep=tiny" in r.stderr
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.workflow
def test_truncated_checkpoint_is_refused_naming_the_file(tiny, tmp_path):
    ck = tiny / "results/tiny/checkpoints/arch~fcn/q~2/N~8/d~4/steps~60/width~16/seed~0/last.pt"
    ck.write_bytes(ck.read_bytes()[: ck.stat().st_size // 2])
    cell = cell_json(arch="fcn", q=2, N=8, d=4, width=16, steps=60, lr=0.001, batch_size=32, log_every=20,
                     checkpoint_every=40)
    r = _stsq(tiny, "train", "--cell", cell, "--seeds", 0, "--data-index", "results/tiny/data/q~2/N~8/d~4/index.json",
              "--models", tmp_path / "model.pt",
              "--curves", tmp_path / "curve.csv", "--checkpoint-dir", ck.parent.parent)
    _clear_error(r, "last.pt")


@pytest.mark.workflow
def test_hand_edited_metrics_table_is_refused_by_every_analysis(tiny):
    table = tiny / "results/tiny/tables/metrics.csv"
    figures = sorted((tiny / "results/tiny/figures").glob("*.png"))
    drawn = {p: p.read_bytes() for p in figures}
    text = table.read_text()
    first_value = re.search(r",normalized_loss,([0-9.e-]+),ok", text).group(1)
    table.write_text(text.replace(first_value, "0.001", 1))
    r = snakemake(tiny, "--cores", "2", "--configfile", TINY, "--keep-going", check=False)
    assert r.returncode != 0
    for rule in ("claims", "critical", "encodings", "reach"):
        log = (tiny / f"results/tiny/logs/{rule}.log").read_text()
        assert "metrics.csv: edited after it was written" in log and "Traceback" not in log, rule
    # the figures, drawn with the claims they caption, are not drawn from the edited table: those of the
    # table as written stay as they were
    assert figures and all(p.read_bytes() == drawn[p] for p in figures)
    r = subprocess.run([sys.executable, "-m", "stsq", "figure", "training", "--table", str(table), "--oracle",
                        str(tiny / "results/tiny/tables/oracle.csv"), "--out", str(tiny / "edited.png")],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "workflow/src")})
    assert r.returncode != 0 and "metrics.csv: edited after it was written" in r.stderr + r.stdout
    assert not (tiny / "edited.png").exists()
    # the table is rebuilt on request and everything is whole again
    snakemake(tiny, "--cores", "2", "--configfile", TINY, "--forcerun", "aggregate")


def test_a_nan_in_the_table_never_reaches_a_figure(tmp_path):
    from stsq.core.files import CorruptFileError
    from stsq.width.tables import COLUMNS, read_metrics_table, write_table
    df = pd.DataFrame([["tf_fixed", 2, 8, 4, 60, 8, 0, 60, "eval", 16, "normalized_loss", float("nan"), "ok"]],
                      columns=COLUMNS)
    write_table(df, tmp_path / "m.csv")
    with pytest.raises(CorruptFileError, match="non-finite value for tf_fixed"):
        read_metrics_table(tmp_path / "m.csv")


# -- divergence ------------------------------------------------------------------------------------
@pytest.mark.workflow
def test_absurd_learning_rate_fails_its_job_naming_cell_and_step(tmp_path):
    work = copy_workflow(tmp_path / "wf")
    config = yaml.safe_load(TINY.read_text())
    config["sweeps"]["tiny"]["archs"]["fcn"] = {"widths": [16], "steps": 60, "lr": 1.0e6, "optimizer": "sgd"}
    (work / "diverge.yaml").write_text(yaml.safe_dump(config))
    r = snakemake(work, "--cores", "2", "--configfile", "diverge.yaml", "--keep-going", check=False)
    assert r.returncode != 0
    log = (work / "results/tiny/logs/train/arch~fcn/q~2/N~8/d~4/steps~60/width~16.log").read_text()
    cell = r"\[fcn q=2 N=8 d=4 steps=60 width=16 seed=0\]"
    assert re.search(cell + r" diverged: training loss (nan|inf) at step \d+", log), log
    assert "Lower the learning rate" in log
    assert not (work / "results/tiny/models/arch~fcn/q~2/N~8/d~4/steps~60/width~16/seed~0/model.pt").exists()
    assert not (work / "results/tiny/tables/metrics.csv").exists()
    assert not list((work / "results/tiny").rglob("*.png"))
    # --keep-going still trained the healthy cells (their (q, N, d)'s evaluation waits for the failed one)
    assert (work / "results/tiny/models/arch~tf_stochastic/q~2/N~8/d~4/steps~60/width~8/seed~1/model.pt").exists()


# -- concurrency -----------------------------------------------------------------------------------
METRICS = "results/tiny/tables/metrics.csv"


@pytest.mark.workflow
def test_a_second_concurrent_run_is_refused_by_the_lock(tmp_path):
    """Each run asks for the metrics table (training, evaluation and their table: minutes on a real sweep, the
    jobs a second run would race for).  The first trains 20x the tiny sweep's steps, so that it still holds the lock
    when the second asks; the second passes --rerun-incomplete, so that the first run's files in progress do not
    stop it before it reaches the lock."""
    work = copy_workflow(tmp_path / "wf")
    config = yaml.safe_load(TINY.read_text())
    for arch in config["sweeps"]["tiny"]["archs"].values():
        arch["steps"] *= 20
    (work / "long.yaml").write_text(yaml.safe_dump(config))
    first = subprocess.Popen([SNAKEMAKE, "--cores", "2", "--configfile", "long.yaml", "--", METRICS], cwd=work,
                             env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    t0 = time.time()
    while not list((work / ".snakemake" / "locks").glob("*.lock")):
        assert time.time() - t0 < 60 and first.poll() is None
        time.sleep(0.05)
    second = snakemake(work, "--cores", "2", "--configfile", "long.yaml", "--rerun-incomplete", "--", METRICS,
                       check=False)
    assert first.poll() is None, "the first run ended before the second was refused: the test saw no lock"
    text = second.stdout + second.stderr
    assert second.returncode != 0 and "Directory cannot be locked" in text, text[-2000:]
    out, _ = first.communicate(timeout=600)
    assert first.returncode == 0, out[-3000:]
    assert (work / METRICS).exists()
    assert "Nothing to be done" in snakemake(work, "--cores", "1", "--configfile", "long.yaml", "--", METRICS).stderr
