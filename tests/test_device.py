"""The device path without a GPU (tests/fakecuda.py: every tensor on a stand-in device, CUDA's rule on
mixed devices enforced, every host read counted), and one GPU slot per concurrent job (stsq.cluster.gpus).

Covered on the stand-in device, for every arch of the vocabulary: training as ``train()`` runs it (the
steps, the curve's scoring at unseen lengths, the cosines), ``evaluate_cell`` at every N' (with the
projection onto the ground-truth family), the oracle, and a pilot cell (``train_pilot``, with its
checkpoints and files).  A CPU tensor planted in the step fails the check.
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from fakecuda import DEVICE, DeviceMismatch, HostRead, fake_device
from helpers import cell_json
from stsq.cluster import gpus
from stsq.cluster.pilot import pilot_cells, pilot_sweep, train_pilot
from stsq.core import experiment as ex
from stsq.core.files import write_data_index
from stsq.sts.data import load_eval_set, make_eval_set, write_data
from stsq.sts.oracle import oracle_rows
from stsq.sts.step import make_step
from stsq.width.evaluate import evaluate_cell
from stsq.width.train import TrainSpec, save_model, train, train_step

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "workflow" / "src"
ARCHS = ex.archs_of()  # STS_q's: the retrieval task's families train in tests/test_retrieval.py
Q, N, D, L = 2, 8, 4, 32  # L: the position range of randomized positions
LENGTHS = [N, 2 * N, 4 * N]


def spec_of(arch, steps=6, log_every=3, checkpoint_every=6, seed=0):
    return TrainSpec(arch=arch, q=Q, N=N, d=D, width=16 if arch == "fcn" else 8, seed=seed, steps=steps, lr=0.01,
                     batch_size=16, log_every=log_every, checkpoint_every=checkpoint_every,
                     position_range=L if ex.ARCHS[arch].encoding == "randomized" else 0)


def unseen_sets(spec):
    """The sets at unseen N' a transformer is scored on along training (as train_cell gives them)."""
    if not ex.ARCHS[spec.arch].transformer:
        return {}
    return {n: make_eval_set(32, n, Q, D, 7) for n in LENGTHS[1:]}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Evaluation sets of (q, N, d) for seed 0 at every N' and their index."""
    root = tmp_path_factory.mktemp("data")
    manifest = root / "seed~0" / ex.MANIFEST
    write_data(manifest, q=Q, N=N, d=D, seed=0, eval_lengths=LENGTHS, n_eval=32)
    write_data_index([str(manifest)], root / "index.json", q=Q, N=N)
    return root


@pytest.mark.parametrize("arch", ARCHS)
def test_training_on_the_device(arch):
    """A few steps as train() runs them, with the curve's scoring at N and at unseen lengths: every tensor on
    the device (a mixed operation would raise), the model stays there, and reads happen at log points only."""
    spec = spec_of(arch)
    with fake_device() as mode:
        result = train(spec, make_eval_set(32, N, Q, D, 1), device=DEVICE, log=lambda s: None,
                       length_sets=unseen_sets(spec))
    assert all(p.device == DEVICE for p in result.model.parameters())
    assert [r["step"] for r in result.curve] == [3, 6]
    assert mode.ops > 100
    places = {w.split(" ")[-1] for w in mode.reads}
    assert places <= {"check_finite", "score", "_cosine"}, mode.reads  # the log points' reads, nothing else


@pytest.mark.parametrize("arch", ["tf_stochastic", "fcn"])
def test_no_host_read_in_the_step(arch):
    """The loop's body (a fresh batch, fresh positions, forward, backward, update) reads nothing back."""
    spec = spec_of(arch)
    with fake_device(forbid_reads=True):
        step = make_step(spec.build(DEVICE), spec)
        from stsq.core.seeds import generator
        g = generator(1, DEVICE)
        losses = [train_step(step, spec, g) for _ in range(5)]
    assert all(x.device == DEVICE for x in losses)


# Host reads per log point (docs/measurements.md, "The device path, tested without a GPU"): the train loss
# (1); the test set's loss, attention mass and evenness (3 per chunk of the set); the two cosines (1 each).
# The FCN: the train loss and the test loss.  Before this was counted: 11 and 3.
READS_PER_LOG = {"tf_stochastic": 6, "fcn": 2}


@pytest.mark.parametrize("arch", list(READS_PER_LOG))
def test_host_reads_per_log_every(arch):
    spec = spec_of(arch, steps=40, log_every=10, checkpoint_every=40)
    with fake_device() as mode:
        train(spec, make_eval_set(32, N, Q, D, 1), device=DEVICE, log=lambda s: None)
    assert len(mode.reads) == 4 * READS_PER_LOG[arch], collections.Counter(mode.reads)


def test_a_cpu_tensor_in_the_step_fails(monkeypatch, capsys):
    """A target built on the CPU (as a misplaced table or index would be) is a device mismatch at step 1."""
    import stsq.width.train as tr
    from stsq.sts.task import Batch

    real = tr.sample_batch

    def planted(*args, **kwargs):
        b = real(*args, **kwargs)
        return Batch(X=b.X, y=b.y, target=torch.zeros(b.target.shape))  # on the CPU

    monkeypatch.setattr(tr, "sample_batch", planted)
    with fake_device(), pytest.raises(DeviceMismatch, match=r"mixes tensors on cpu, meta") as e:
        train(spec_of("tf_stochastic"), make_eval_set(32, N, Q, D, 1), device=DEVICE, log=lambda s: None)
    with capsys.disabled():
        print(f"\nplanted CPU target: {e.value}")


def test_a_cpu_index_fails():
    """A subset index y built on the CPU for a model on the device fails in the forward pass."""
    spec = spec_of("fcn")
    with fake_device(), pytest.raises(DeviceMismatch):
        model = spec.build(DEVICE)
        X = torch.randn(4, N, D, device=DEVICE)
        model(X, torch.zeros(4, Q, dtype=torch.long))


def test_a_read_in_the_step_is_caught(monkeypatch):
    """The read check can fail: a float() of the loss inside the step raises under forbid_reads."""
    import stsq.width.train as tr
    real = tr.train_step
    monkeypatch.setattr(tr, "train_step", lambda *a: float(real(*a)) and real(*a))
    spec = spec_of("tf_fixed")
    with fake_device(forbid_reads=True), pytest.raises(HostRead, match="device-to-host read"):
        step = make_step(spec.build(DEVICE), spec)
        from stsq.core.seeds import generator
        tr.train_step(step, spec, generator(1, DEVICE))


@pytest.mark.filterwarnings("ignore:for .*copying from a non-meta parameter")  # the stand-in holds no numbers
def test_evaluation_on_the_device(data, tmp_path):
    """evaluate_cell of a model of every arch at every N' (and the projection of the stochastic one) on the
    device: the models are read from files written on the CPU, the sets stay on the CPU until scored."""
    paths = []
    for arch in ARCHS:
        spec = spec_of(arch, steps=3, log_every=3, checkpoint_every=3)
        result = train(spec, load_eval_set(data / "seed~0", N), log=lambda s: None)
        paths.append(tmp_path / f"{arch}.pt")
        save_model(result, spec, paths[-1])
    with fake_device() as mode:
        rows = evaluate_cell([str(p) for p in paths], data / "index.json", LENGTHS, DEVICE, log=lambda s: None,
                             projection_samples=16)
    scored = {(r["arch"], r["N_eval"]) for r in rows if r["status"] == ex.OK}
    assert {("tf_stochastic", n) for n in LENGTHS} <= scored and ("fcn", N) in scored
    assert any(r["metric"] == ex.PROJECTION for r in rows)
    assert {w.split(" ")[-1] for w in mode.reads} <= {"score", "family_scale", "_best", "projection_loss"}


def test_oracle_on_the_device():
    with fake_device() as mode:
        rows = oracle_rows(Q, N, 8, LENGTHS, n=64, device=DEVICE)
    assert [r["N_eval"] for r in rows] == LENGTHS and mode.ops > 0


def test_a_pilot_cell_on_the_device(data, tmp_path, monkeypatch):
    """train_pilot of one (q, N, d) with a cell of every arch: models, curves, checkpoints and its timing
    rows written, every tensor on the device."""
    monkeypatch.chdir(tmp_path)
    archs = {a: {"widths": [16 if a == "fcn" else 8], "steps": 20, "lr": 0.01, "optimizer": "adam",
                 "schedule": "constant", "layers": 1} for a in ARCHS}
    sweep = pilot_sweep({"d": D, "N": [N], "q": [Q], "seeds": [0], "eval_length_factors": [1, 2, 4], "n_eval": 32,
                         "batch_size": 16, "log_every": 10, "checkpoint_every": 10, "query": "sum",
                         "position_range": L, "archs": archs})
    out = tmp_path / "timing.csv"
    with fake_device():
        records = pilot_cells(sweep, Q, N, D)
        train_pilot(records, [0] * len(records), "device_pilot", sweep["seeds"], data / "index.json", out,
                    device=DEVICE, log=lambda s: None)
    text = out.read_text()
    assert all(f"arch~{a}/" in text for a in ARCHS) and "meta" in text


# -- one GPU slot per concurrent job (stsq.cluster.gpus), with a fake device count --------------------------------
# A job here is a Python process that claims a slot as a training job does and holds it for HOLD_S seconds,
# logging when it claimed and released it; all are started at once, more jobs than slots.
HOLD_S = 1.0
JOB = """
import sys, time
from stsq.cluster import gpus
slot = gpus.claim(gpus.gpu_names(gpus.fake_gpus()), log=lambda s: print(s, flush=True))
print(f"claimed {slot} at {time.time():.4f}", flush=True)
time.sleep(float(sys.argv[1]))
print(f"released {slot} at {time.time():.4f}", flush=True)
"""


def start_job(tmp_path, k, gpus_, hold=HOLD_S, per_gpu=1):
    env = {**os.environ, "PYTHONPATH": str(SRC), gpus.FAKE_ENV: str(gpus_), gpus.LOCK_DIR_ENV: str(tmp_path / "locks"),
           gpus.JOBS_PER_GPU_ENV: str(per_gpu)}
    log = open(tmp_path / f"job{k}.log", "w")
    return subprocess.Popen([sys.executable, "-c", JOB, str(hold)], env=env, stdout=log, stderr=subprocess.STDOUT)


def read_log(path):
    """(slot, claimed at, released at or None) of one job's log."""
    text = path.read_text()
    claimed = [line.split() for line in text.splitlines() if line.startswith("claimed ")]
    released = [line.split() for line in text.splitlines() if line.startswith("released ")]
    assert len(claimed) == 1, text
    return claimed[0][1], float(claimed[0][3]), float(released[0][3]) if released else None


def longest_overlap(spans):
    """The longest time two jobs held the same slot at once (0: never)."""
    worst = 0.0
    for i, (s, a0, a1) in enumerate(spans):
        for t, b0, b1 in spans[i + 1:]:
            if s == t:
                worst = max(worst, min(a1, b1) - max(a0, b0))
    return worst


@pytest.mark.parametrize("k,jobs", [(2, 5), (3, 7)])
def test_one_job_per_slot(tmp_path, k, jobs, capsys):
    procs = [start_job(tmp_path, i, k) for i in range(jobs)]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    spans = [read_log(tmp_path / f"job{i}.log") for i in range(jobs)]
    assert {s for s, _, _ in spans} == {f"gpu{g}-0" for g in range(k)}  # every GPU used, no other slot
    assert longest_overlap(spans) <= 0
    # at most k at once, and k at once at the start (the jobs beyond k waited)
    events = sorted([(t0, 1) for _, t0, _ in spans] + [(t1, -1) for _, _, t1 in spans])
    running = [sum(e for _, e in events[:i + 1]) for i in range(len(events))]
    assert max(running) == k
    with capsys.disabled():
        print(f"\nK={k}, {jobs} jobs: " + "; ".join(f"job{i} {s} [{a - spans[0][1]:.2f}, {b - spans[0][1]:.2f}] s"
                                                   for i, (s, a, b) in enumerate(spans))
              + f"; longest overlap on one slot {max(0.0, longest_overlap(spans)):.2f} s")


def test_a_killed_jobs_slot_is_taken_by_the_next(tmp_path, capsys):
    a, b = start_job(tmp_path, 0, 2, hold=60), start_job(tmp_path, 1, 2, hold=60)
    try:
        deadline = time.time() + 30
        while time.time() < deadline and not all("claimed" in (tmp_path / f"job{i}.log").read_text() for i in (0, 1)):
            time.sleep(0.1)
        killed_slot = read_log(tmp_path / "job0.log")[0]
        a.send_signal(signal.SIGKILL)
        a.wait(timeout=10)
        killed_at = time.time()
        c = start_job(tmp_path, 2, 2, hold=0)
        assert c.wait(timeout=30) == 0
        slot, claimed, _ = read_log(tmp_path / "job2.log")
        assert slot == killed_slot and claimed - killed_at < 5
    finally:
        for p in (a, b):
            if p.poll() is None:
                p.kill()
                p.wait()
    with capsys.disabled():
        print(f"\nkilled job0 on {killed_slot} (SIGKILL); job2 claimed {slot} {claimed - killed_at:.2f} s later")


def test_slots_spread_over_the_gpus_first(tmp_path):
    order = [str(s) for s in gpus.slot_order(["0", "1"], 2, tmp_path)]
    assert order == ["gpu0-0", "gpu1-0", "gpu0-1", "gpu1-1"]
    got = [str(gpus.claim(["0", "1"], 2, tmp_path, log=lambda s: None)) for _ in range(4)]  # one process: new fds
    assert got == order and gpus.claim(["0", "1"], 2, tmp_path, log=lambda s: None, wait_s=0) is None
    for fd in gpus._HELD[-4:]:  # give them back (the locks of a finished job, as the kernel would)
        os.close(fd)
    del gpus._HELD[-4:]


def test_slurm_and_no_gpu(monkeypatch, tmp_path):
    monkeypatch.setenv(gpus.LOCK_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(gpus.FAKE_ENV, "2")
    monkeypatch.setenv("SLURM_JOB_ID", "123")
    said = []
    assert gpus.pick_device("auto", said.append).type == "cpu" and "Slurm" in said[0]
    assert not list(tmp_path.iterdir())  # no slot claimed
    monkeypatch.delenv("SLURM_JOB_ID")
    monkeypatch.setenv(gpus.FAKE_ENV, "0")
    assert gpus.pick_device("auto", said.append).type == "cpu" and said[-1] == "device cpu: no GPU"
    assert str(gpus.pick_device("cpu", said.append)) == "cpu"
    monkeypatch.setenv(gpus.JOBS_PER_GPU_ENV, "0")
    with pytest.raises(ValueError, match="STSQ_JOBS_PER_GPU"):
        gpus.jobs_per_gpu()


def test_the_train_command_logs_its_slot_and_the_curve_its_device(data, tmp_path):
    """`python -m stsq train` with two fake GPUs: its log names the slot and the device, its curve the device."""
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(SRC), gpus.FAKE_ENV: "2", gpus.LOCK_DIR_ENV: str(tmp_path / "locks")}
    cell = cell_json(arch="tf_fixed", q=Q, N=N, d=D, width=8, steps=4, lr=0.01, batch_size=8, log_every=2,
                     checkpoint_every=4)
    r = subprocess.run([sys.executable, "-m", "stsq", "train", "--cell", cell, "--seeds", "0",
                        "--data-index", str(data / "index.json"), "--models", str(out / "model.pt"),
                        "--curves", str(out / "curve.csv"), "--checkpoint-dir", str(tmp_path / "ck")],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "GPU slot gpu0-0 claimed" in r.stderr and "2 GPUs x 1 jobs" in r.stderr, r.stderr
    header, *rows = (out / "curve.csv").read_text().splitlines()
    assert header.endswith(",device") and all(row.endswith(",cpu") for row in rows)


@pytest.mark.parametrize("arch", ["qstr_transformer", "qstr_ffn", "qstr_rnn"])
def test_a_samples_run_on_the_device(arch):
    """The samples measure's runner on the device, as training is: its model, data, test set and generators there
    (a mixed operation would raise), and the model stays there."""
    from stsq.retrieval.cells import SampleCell, code_width
    from stsq.samples.run import samples_to_thresholds
    record = SampleCell(arch=arch, q=1, N=4, d=4, mode="general", heads=1 if arch == "qstr_transformer" else 0,
                        width=16, d_e=code_width(4), codes="sign", test_mode="general", lr=1e-3, weight_decay=0.01,
                        batch_size=16, check_every=2, n_test=32, cap=16 * 6, thresholds=(0.9, 0.1), log_every=1)
    with fake_device() as mode:
        rows = samples_to_thresholds(record, 0, device=DEVICE, log=lambda s: None)
    assert [r["threshold"] for r in rows] == [0.9, 0.1] and mode.ops > 50
