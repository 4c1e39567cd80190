"""Cluster runs through `--profile profiles/slurm`, against a real single-node Slurm with a fake GPU.

The cluster is installed (apt-get) and started by tests/slurm/cluster.sh, and always stopped when
the whole session ends (tests/conftest.py).  Test-only plugin settings (squeue as the status command, a short first
status check) are passed on the command line, never shipped in the profile.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import SLURM_STARTED, session_owner
from helpers import BIN, ROOT, copy_workflow, job_counts, snakemake, validated_config, venv_at
from stsq.cluster.cost import estimated_memory_mb
from stsq.cluster.requests import memory_request_mb
from stsq.core.experiment import cell
from stsq.core.sweep import cell_records

CONFIG = ROOT / "tests" / "configs" / "slurm.yaml"
CLUSTER = ROOT / "tests" / "slurm" / "cluster.sh"
TEST_FLAGS = ["--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "2",
              "--configfile", CONFIG]
LONG_CELL = "arch~tf_stochastic/q~2/N~8/d~4/steps~15000/width~8"
SLURM_COMMANDS = {"sinfo", "squeue", "sbatch", "srun", "sacct", "scontrol", "scancel", "salloc", "sacctmgr",
                  "sstat", "sshare", "sprio", "sreport", "sview", "sdiag", "strigger", "sattach", "sbcast"}


def test_dry_run_with_the_slurm_profile_resolves_resources_without_slurm(tmp_path):
    """No Slurm on PATH: every job of the paper sweep still gets its runtime and memory, and
    training jobs (only they) a GPU."""
    work = copy_workflow(tmp_path / "wf")
    bare = tmp_path / "bin"  # /usr/bin without any Slurm command
    bare.mkdir()
    for tool in Path("/usr/bin").iterdir():
        if tool.name not in SLURM_COMMANDS:
            (bare / tool.name).symlink_to(tool)
    env = {"PATH": f"{BIN}:{bare}", "HOME": os.environ.get("HOME", "/root")}
    assert shutil.which("sinfo", path=env["PATH"]) is None
    r = subprocess.run([str(BIN / "snakemake"), "-n", "--profile", "profiles/slurm", "--config", "sweep=paper"],
                       cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    text = r.stdout + r.stderr
    blocks = re.findall(r"^rule (\w+):\n(.*?)(?=^\[|\Z)", text, re.S | re.M)
    seen, train_mem = {}, {}
    paper = validated_config()["sweeps"]["paper"]
    record_of = {r.path: r for r in cell_records(paper)}
    for rule, body in blocks:
        if rule == "all":
            continue
        res = re.search(r"resources: (.*)", body).group(1)
        assert re.search(r"\bmem_mb=\d+", res) and re.search(r"\bruntime=\d+", res), (rule, res)
        assert ("gpu=1" in res) == (rule in ("train", "train_seed")), (rule, res)
        seen[rule] = res
        if rule == "train":  # each training job asks for its own cell's memory estimate
            w = dict(re.findall(r"(\w+)=(\w+)", re.search(r"wildcards: (.*)", body).group(1)))
            mem = int(re.search(r"\bmem_mb=(\d+)", res).group(1))
            est = estimated_memory_mb(paper, record_of[cell(**w)])
            assert mem == memory_request_mb(est), (w, mem)
            train_mem[w["arch"], w["N"], w["d"], w["width"]] = mem
    assert {"train", "evaluate", "eval_sets", "aggregate", "fig_length", "claims"} <= set(seen)
    assert len(set(train_mem.values())) > 10  # not one number per rule


def _root_with_apt():
    return os.geteuid() == 0 and shutil.which("apt-get") is not None


@pytest.fixture(scope="module")
def slurm():
    """The cluster, up; stopped when the whole session ends (conftest.pytest_sessionfinish), not when this module
    does: the other workers' Snakemake calls would each wait 10 s for its controller."""
    if not _root_with_apt():
        pytest.skip("a real Slurm needs root and apt-get (CI has both)")
    subprocess.run(["timeout", "600", str(CLUSTER), "install"], check=True, capture_output=True)
    SLURM_STARTED.parent.mkdir(parents=True, exist_ok=True)
    SLURM_STARTED.write_text(session_owner())
    subprocess.run(["timeout", "120", str(CLUSTER), "start"], check=True, capture_output=True, text=True)
    yield


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    work = copy_workflow(tmp_path_factory.mktemp("local") / "wf")
    snakemake(work, "--cores", "2", "--configfile", CONFIG)
    return work


def _training_job():
    out = subprocess.run(["squeue", "-h", "-o", "%i %t %k"], capture_output=True, text=True).stdout
    return next((line.split()[:2] for line in out.splitlines() if "rule_train_wildcards_tf_stochastic" in line),
                None)


def _interrupt_training_mid_run(work: Path, seen: dict, stop: threading.Event):
    """Once the long training cell has checkpointed, `scontrol requeue` its Slurm job (Slurm itself restarts
    it: the profile's slurm-requeue); once the restarted job has resumed and checkpointed again, scancel it
    (Snakemake retries it)."""
    ckpt = work / "results" / "slurm" / "checkpoints" / LONG_CELL / "seed~0" / "last.pt"
    log = work / "results" / "slurm" / "logs" / "train" / f"{LONG_CELL}.log"
    t0 = time.time()
    while not stop.is_set() and time.time() - t0 < 360:
        job = _training_job()
        fresh = ckpt.exists() and time.time() - ckpt.stat().st_mtime < 30
        if job and job[1] == "R" and fresh and "requeued" not in seen:
            time.sleep(2.5)  # let it checkpoint again: resume must not start at step 0
            subprocess.run(["scontrol", "requeue", job[0]], check=True)
            seen["requeued"], seen["requeued_at"] = job[0], time.time()
            # Slurm holds a requeued job for a while (its begin time); a test need not wait for it
            subprocess.run(["scontrol", "update", f"JobId={job[0]}", "StartTime=now"], capture_output=True)
        elif job and job[1] == "R" and "requeued" in seen and "cancelled" not in seen:
            m = re.search(r"resumed from checkpoint .* at step (\d+)/", log.read_text() if log.exists() else "")
            if m and ckpt.stat().st_mtime > seen["requeued_at"] + 1:  # restarted, resumed, checkpointed
                seen["requeue_resumed_at"] = int(m.group(1))
                time.sleep(1.0)
                subprocess.run(["scancel", job[0]], check=True)
                seen["cancelled"] = job[0]
                return
        time.sleep(0.3)


# Snakemake writes its interpreter's path unquoted into each cluster job (an upstream bug): from a
# checkout whose path has a space or a quote the workflow refuses Slurm runs (tested below).
UNSAFE_HERE = any(ch in str(p) for p in (sys.executable, ROOT) for ch in " '\"")


@pytest.fixture(scope="module")
def slurm_run(slurm, tmp_path_factory):
    if UNSAFE_HERE:
        pytest.skip(f"this checkout's path ({ROOT}) has a space or a quote: Slurm runs are refused from it")
    work = copy_workflow(tmp_path_factory.mktemp("slurm") / "wf")
    seen, stop = {}, threading.Event()
    killer = threading.Thread(target=_interrupt_training_mid_run, args=(work, seen, stop), daemon=True)
    killer.start()
    t0 = time.perf_counter()
    try:
        r = snakemake(work, "--profile", "profiles/slurm", "--verbose", *TEST_FLAGS, timeout=540)
    finally:
        stop.set()
        killer.join()
    return work, r, seen, time.perf_counter() - t0


@pytest.mark.slurm
def test_a_slurm_run_from_a_path_with_a_quote_is_refused_before_any_submission(slurm, tmp_path):
    work = copy_workflow(tmp_path / "it's a folder")
    venv_at(work / ".venv")
    r = snakemake(work, "--profile", "profiles/slurm", *TEST_FLAGS, timeout=120, check=False)
    assert r.returncode != 0
    assert "cannot submit to Slurm from" in r.stderr and "unquoted" in r.stderr, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    assert "sbatch call" not in r.stdout + r.stderr and not (work / "results" / "slurm" / "models").exists()


def _sbatch_calls(r):
    return re.findall(r"^sbatch call: (sbatch .*)$", r.stdout + r.stderr, re.M)


@pytest.mark.slurm
def test_slurm_run_produces_every_output_with_the_local_numbers(slurm_run, local_run):
    work, r, _, seconds = slurm_run
    print(f"\n[measured] Slurm run (profiles/slurm, one requeue and one cancellation): {seconds:.0f}s, "
          f"{len(_sbatch_calls(r))} sbatch submissions, job stats {job_counts(r.stdout + r.stderr)}")
    for sub in ("tables/metrics.csv", "tables/claims.csv", "figures/length.pdf",
                "figures/training.png", "figures/separation.pdf", "figures/mechanism.pdf"):
        assert (work / "results" / "slurm" / sub).exists(), sub
    ours = (work / "results/slurm/tables/metrics.csv").read_bytes()
    theirs = (local_run / "results/slurm/tables/metrics.csv").read_bytes()
    assert ours == theirs, "metrics differ between the Slurm run and the local run"


@pytest.mark.slurm
def test_training_jobs_request_a_gpu_and_others_do_not(slurm_run):
    _, r, _, _ = slurm_run
    calls = _sbatch_calls(r)
    train = [c for c in calls if "--comment rule_train_" in c]
    other = [c for c in calls if "--comment rule_train_" not in c]
    assert train and all("--gpus=1" in c for c in train)
    assert other and not any("--gpus" in c or "--gres" in c for c in other)
    print("\n[measured] sbatch options of a training job:",
          re.sub(r" --wrap=.*", "", train[0]))


@pytest.mark.slurm
def test_a_requeued_and_then_cancelled_training_job_resumes_from_its_checkpoint_both_times(slurm_run, local_run):
    work, r, seen, _ = slurm_run
    assert "requeued" in seen, "the training job finished before it could be requeued"
    assert "cancelled" in seen, "the requeued training job did not restart (or finished) before it was cancelled"
    print(f"\n[measured] requeued Slurm job {seen['requeued']}: Slurm restarted it, it resumed at step "
          f"{seen['requeue_resumed_at']}/15000")
    assert seen["requeue_resumed_at"] >= 1000
    log = (work / "results/slurm/logs/train" / f"{LONG_CELL}.log").read_text()
    m = re.search(r"resumed from checkpoint .* at step (\d+)/15000", log)
    assert m, log[-2000:]
    step = int(m.group(1))
    print(f"\n[measured] cancelled Slurm job {seen['cancelled']}; the retry resumed at step {step}/15000")
    assert step >= 1000
    ours = (work / f"results/slurm/models/{LONG_CELL}/seed~0/model.pt")
    theirs = (local_run / f"results/slurm/models/{LONG_CELL}/seed~0/model.pt")
    import torch
    a = torch.load(ours, weights_only=True)["model"]
    b = torch.load(theirs, weights_only=True)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slurm
def test_grouping_packs_small_jobs_into_fewer_submissions(slurm, slurm_run, local_run, tmp_path):
    work = copy_workflow(tmp_path / "wf")
    t0 = time.perf_counter()
    r = snakemake(work, "--profile", "profiles/slurm-grouped", "--verbose", *TEST_FLAGS, timeout=420)
    grouped = len(_sbatch_calls(r))
    plain = len({re.search(r"--comment (\S+)", c).group(1) for c in _sbatch_calls(slurm_run[1])})  # retry once
    print(f"\n[measured] Slurm submissions for the test sweep: {plain} without grouping, {grouped} with "
          f"profiles/slurm-grouped ({time.perf_counter() - t0:.0f}s)")
    assert grouped < plain
    assert (work / "results/slurm/tables/metrics.csv").read_bytes() == \
        (local_run / "results/slurm/tables/metrics.csv").read_bytes()
