"""Training is resumable bitwise, deterministic, and loud about divergence."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from helpers import cell_json
from stsq.core.checkpoint import load_tensors, save_tensors
from stsq.core.files import CorruptFileError
from stsq.provenance.codehash import stage_hash
from stsq.sts.data import make_eval_set
from stsq.width.train import DivergenceError, TrainSpec, load_model, save_model, train

ROOT = Path(__file__).resolve().parents[1]


def small_spec(arch="tf_stochastic", seed=0, **kw):
    base = dict(arch=arch, q=2, N=16, d=8, width=32 if arch != "fcn" else 64, seed=seed, steps=240,
                lr=1e-2 if arch != "fcn" else 1e-3, log_every=40, checkpoint_every=80)
    base.update(kw)
    return TrainSpec(**base)


def in_distribution_set(spec):
    return make_eval_set(256, spec.N, spec.q, spec.d, spec.streams["eval_data"])


def same_weights(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.mark.parametrize("arch", ["tf_stochastic", "tf_fixed", "fcn"])
def test_killed_and_resumed_run_equals_uninterrupted_bitwise(tmp_path, seed, arch):
    spec = small_spec(arch, seed)
    full = train(spec, in_distribution_set(spec), checkpoint=tmp_path / "a.pt", log=lambda s: None)
    # Stop at step 130: the last checkpoint is at 80, so steps 81..130 are lost as in a kill.
    stopped = train(spec, in_distribution_set(spec), checkpoint=tmp_path / "b.pt", stop_after=130, log=lambda s: None)
    assert stopped is None
    assert load_tensors(tmp_path / "b.pt")["step"] == 80
    lines = []
    resumed = train(spec, in_distribution_set(spec), checkpoint=tmp_path / "b.pt", log=lines.append)
    assert resumed.resumed_from == 80 and any("resumed from checkpoint" in s and "step 80" in s for s in lines)
    assert same_weights(full.model, resumed.model)
    assert full.curve == resumed.curve


def test_a_checkpoint_of_another_configuration_is_not_resumed(tmp_path):
    spec = small_spec()
    train(spec, in_distribution_set(spec), checkpoint=tmp_path / "c.pt", stop_after=100, log=lambda s: None)
    other = small_spec(lr=5e-3)
    lines = []
    result = train(other, in_distribution_set(other), checkpoint=tmp_path / "c.pt", log=lines.append)
    assert result.resumed_from == 0 and any("another configuration" in s for s in lines)


def test_same_seed_same_numbers_and_different_seed_different_numbers(seed):
    spec = small_spec(seed=seed, steps=80)
    a = train(spec, in_distribution_set(spec), log=lambda s: None)
    b = train(spec, in_distribution_set(spec), log=lambda s: None)
    assert same_weights(a.model, b.model) and a.curve == b.curve
    other = small_spec(seed=seed + 10, steps=80)
    assert not same_weights(a.model, train(other, in_distribution_set(other), log=lambda s: None).model)


def _cli(*args, threads=1):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "workflow" / "src")}
    return subprocess.run([sys.executable, "-m", "stsq", *map(str, args), "--threads", str(threads)],
                          capture_output=True, text=True, env=env)


def _data(tmp_path, q=2, N=16, d=8):
    """One seed's evaluation sets and the (q, N, d)'s data index, as the rule makes them; returns the index."""
    index = tmp_path / "data" / "index.json"
    r = _cli("data", "--q", q, "--N", N, "--d", d, "--seeds", 0, "--eval-lengths", N, "--n-eval", 64,
             "--manifests", tmp_path / "data" / "seed~0" / "manifest.json", "--index", index)
    assert r.returncode == 0, r.stderr
    return index


def _outputs(out):
    return "--models", out / "seed~0" / "model.pt", "--curves", out / "seed~0" / "curve.csv"


def test_a_transformer_trained_in_a_session_on_two_threads_is_its_one_thread_jobs_model():
    """A transformer's job trains on one thread; train() called where torch has two gives the same bits (a batch
    of 32 at N = 8, d = 4, d_e = 16, whose small products MKL sums over the batch by thread on some CPUs), and
    leaves the session's setting as it found it."""
    spec = TrainSpec(arch="tf_stochastic", q=2, N=8, d=4, width=16, seed=0, steps=60, lr=0.02, batch_size=32,
                     log_every=20, checkpoint_every=20)
    test = make_eval_set(64, 8, 2, 4, 5)
    was = torch.get_num_threads()
    models = []
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            models.append(train(spec, test, log=lambda s: None).model)
            assert torch.get_num_threads() == threads
    finally:
        torch.set_num_threads(was)
    assert same_weights(*models)


def test_the_library_holds_the_thread_settings_its_numbers_rely_on_whatever_the_shell_says():
    """MKL and OpenMP never change a call's thread count (an inherited TRUE is overruled); MKL's strict mode is on
    unless the user names another float path, which is kept and recorded as another machine."""
    probe = ("import os, stsq; from stsq.provenance.sidecars import device_of; "
             "print(os.environ['MKL_DYNAMIC'], os.environ['OMP_DYNAMIC'], os.environ['MKL_CBWR'], device_of())")
    shell = {k: v for k, v in os.environ.items() if k not in ("MKL_CBWR", "ATEN_CPU_CAPABILITY")}
    run = lambda **e: subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,  # noqa: E731
                                     env={**shell, "PYTHONPATH": str(ROOT / "workflow" / "src"), **e}).stdout.split()
    assert run(MKL_DYNAMIC="TRUE", OMP_DYNAMIC="TRUE")[:3] == ["FALSE", "FALSE", "AUTO,STRICT"]
    said = run(MKL_CBWR="COMPATIBLE")
    assert said[2] == "COMPATIBLE" and said[-1] == "[MKL_CBWR=COMPATIBLE]"


@pytest.mark.parametrize("arch,width,lr", [("tf_stochastic", 32, 0.01), ("fcn", 1024, 0.001)])
def test_identical_numbers_across_processes_and_thread_counts(tmp_path, arch, width, lr, monkeypatch):
    """A transformer, and an FCN wide enough that its products run on both threads; from a shell that asks MKL and
    OpenMP for dynamic threads."""
    monkeypatch.setenv("MKL_DYNAMIC", "TRUE")
    monkeypatch.setenv("OMP_DYNAMIC", "TRUE")
    index = _data(tmp_path)
    outs = []
    for threads in (1, 2):
        out = tmp_path / f"models{threads}"
        cell = cell_json(arch=arch, q=2, N=16, d=8, width=width, steps=120, lr=lr, log_every=40)
        r = _cli("train", "--cell", cell, "--seeds", 0, "--data-index", index, *_outputs(out),
                 "--checkpoint-dir", tmp_path / f"ck{threads}", "--device", "cpu", threads=threads)
        assert r.returncode == 0, r.stderr
        outs.append(out / "seed~0")
    m1, _ = load_model(outs[0] / "model.pt")
    m2, _ = load_model(outs[1] / "model.pt")
    assert same_weights(m1, m2)
    assert (outs[0] / "curve.csv").read_text() == (outs[1] / "curve.csv").read_text()


@pytest.mark.parametrize("arch,width,lr", [("tf_stochastic", 32, 0.01), ("fcn", 64, 0.001)])
def test_a_seed_trained_alone_is_the_same_seed_of_a_multi_seed_job_bit_for_bit(tmp_path, arch, width, lr):
    """Rule train_seed trains one seed of a long cell: its model and curve are those the multi-seed job writes for
    that seed (each seed's streams are its own), so evaluation and tables do not depend on how a cell was split."""
    index = tmp_path / "data" / "index.json"
    manifests = [tmp_path / "data" / f"seed~{s}" / "manifest.json" for s in (0, 1, 2)]
    r = _cli("data", "--q", 2, "--N", 16, "--d", 8, "--seeds", 0, 1, 2, "--eval-lengths", 16, 32, "--n-eval", 64,
             "--manifests", *manifests, "--index", index)
    assert r.returncode == 0, r.stderr
    cell = cell_json(arch=arch, q=2, N=16, d=8, width=width, steps=90, lr=lr, log_every=30, checkpoint_every=30)
    runs = {}
    for label, seeds in (("together", (0, 1, 2)), ("alone", (2,))):
        out = tmp_path / label
        r = _cli("train", "--cell", cell, "--seeds", *seeds, "--data-index", index,
                 "--models", *[out / f"seed~{s}" / "model.pt" for s in seeds],
                 "--curves", *[out / f"seed~{s}" / "curve.csv" for s in seeds],
                 "--checkpoint-dir", tmp_path / f"ck-{label}", "--device", "cpu")
        assert r.returncode == 0, r.stderr
        runs[label] = out / "seed~2"
    a, _ = load_model(runs["together"] / "model.pt")
    b, _ = load_model(runs["alone"] / "model.pt")
    assert same_weights(a, b)
    assert (runs["together"] / "curve.csv").read_text() == (runs["alone"] / "curve.csv").read_text()
    other, _ = load_model(tmp_path / "together" / "seed~1" / "model.pt")
    assert not same_weights(a, other)  # the seeds differ: the comparison is not of one model with itself


def test_divergence_names_the_cell_and_the_step_and_what_to_change():
    spec = small_spec(optimizer="sgd", lr=1e4)
    with pytest.raises(DivergenceError) as e:
        train(spec, in_distribution_set(spec), log=lambda s: None)
    msg = str(e.value)
    assert "[tf_stochastic q=2 N=16 d=8 steps=240 width=32 seed=0]" in msg
    assert "at step " in msg and "Lower the learning rate" in msg and "lr 10000" in msg


def test_divergent_cli_run_writes_no_result(tmp_path):
    index = _data(tmp_path)
    cell = cell_json(arch="fcn", q=2, N=16, d=8, width=64, steps=200, lr=1e4, optimizer="sgd")
    r = _cli("train", "--cell", cell, "--seeds", 0, "--data-index", index, *_outputs(tmp_path / "out"),
             "--checkpoint-dir", tmp_path / "ck", "--device", "cpu")
    assert r.returncode != 0 and "diverged" in r.stderr and "step" in r.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "ck").exists()


class _RunsCode:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def test_checkpoint_with_a_code_running_pickle_is_refused(tmp_path):
    marker, evil = tmp_path / "pwned", tmp_path / "evil.pt"
    torch.save({"step": 1, "payload": _RunsCode(str(marker))}, evil)
    with pytest.raises(CorruptFileError, match=str(evil)):
        load_tensors(evil, "checkpoint")
    assert not marker.exists()


def test_truncated_checkpoint_names_the_file(tmp_path):
    spec = small_spec(steps=80)
    path = tmp_path / "last.pt"
    train(spec, in_distribution_set(spec), checkpoint=path, log=lambda s: None)
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(CorruptFileError, match="last.pt"):
        train(spec, in_distribution_set(spec), checkpoint=path, log=lambda s: None)


def test_saved_model_round_trips(tmp_path):
    spec = small_spec(steps=40)
    result = train(spec, in_distribution_set(spec), log=lambda s: None)
    save_model(result, spec, tmp_path / "m.pt")
    model, spec2 = load_model(tmp_path / "m.pt")
    assert spec2 == spec and same_weights(model, result.model)
    assert json.loads(spec2.fingerprint()) == json.loads(spec.fingerprint())


def test_positional_only_transformer_learns_quickly():
    spec = small_spec("tf_positional", steps=300, log_every=100, lr=0.05)
    result = train(spec, in_distribution_set(spec), log=lambda s: None)
    assert result.curve[-1]["normalized_loss"] < 0.1, result.curve[-1]


def test_save_tensors_is_atomic(tmp_path):
    save_tensors({"a": torch.ones(3)}, tmp_path / "x.pt")
    assert [p.name for p in tmp_path.iterdir()] == ["x.pt"]


def test_cli_documents_every_command():
    env = {**os.environ, "PYTHONPATH": str(ROOT / "workflow" / "src")}
    top = subprocess.run([sys.executable, "-m", "stsq", "--help"], capture_output=True, text=True, env=env)
    assert top.returncode == 0
    for command in ("data", "train", "evaluate", "oracle", "aggregate", "critical", "figure", "claims"):
        assert command in top.stdout
        r = subprocess.run([sys.executable, "-m", "stsq", command, "--help"], capture_output=True, text=True, env=env)
        assert r.returncode == 0 and "usage:" in r.stdout, command
    train_help = subprocess.run([sys.executable, "-m", "stsq", "train", "--help"], capture_output=True, text=True,
                                env=env).stdout
    assert "--device" in train_help and "auto (CUDA when present, else CPU)" in train_help


def test_a_checkpoint_of_an_earlier_step_format_is_not_resumed(tmp_path):
    spec = small_spec()
    train(spec, in_distribution_set(spec), checkpoint=tmp_path / "e.pt", stop_after=100, log=lambda s: None)
    ck = load_tensors(tmp_path / "e.pt")
    ck["format"] = 1
    save_tensors(ck, tmp_path / "e.pt")
    lines = []
    result = train(spec, in_distribution_set(spec), checkpoint=tmp_path / "e.pt", log=lines.append)
    assert result.resumed_from == 0 and any("earlier version of the training step" in s for s in lines)


def test_a_checkpoint_written_by_other_code_is_not_resumed(tmp_path):
    """A checkpoint records the hash of the training code that wrote it (stsq.provenance.codehash); other code starts
    over."""
    spec = small_spec()
    train(spec, in_distribution_set(spec), checkpoint=tmp_path / "f.pt", stop_after=100, log=lambda s: None)
    ck = load_tensors(tmp_path / "f.pt")
    assert ck["code"] == stage_hash("train")
    ck["code"] = "0123456789abcdef"  # as the old code would have written it
    save_tensors(ck, tmp_path / "f.pt")
    lines = []
    result = train(spec, in_distribution_set(spec), checkpoint=tmp_path / "f.pt", log=lines.append)
    assert result.resumed_from == 0 and any("written by other code (code 0123456789abcdef" in s for s in lines)
