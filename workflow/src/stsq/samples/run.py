"""Sample complexity: the samples a model needs until its test loss falls below a threshold (docs/retrieval.md).

One seed of one cell (stsq.retrieval.cells.SampleCell): AdamW on fresh batches of the cell's mode; every
``check_every`` steps the normalized loss on a fixed test set of ``n_test`` samples (drawn once per seed, in the
cell's ``test_mode``).  The first check below a threshold gives that threshold's samples (the steps so far times
the batch).  Training stops at the check below the lowest threshold, or when the samples reach the cap: a
threshold not reached by then is *censored*, its value the cap, a lower bound and never a measurement.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import torch

from stsq.core.checkpoint import resume_point, save_tensors
from stsq.core.errors import DivergenceError
from stsq.core.seeds import derive_seed
from stsq.core.seeds import generator as make_generator
from stsq.provenance.codehash import stage_hash
from stsq.retrieval import task as retrieval
from stsq.sts.models import build_model
from stsq.sts.task import power, sampler_of
from stsq.width.train import on_its_threads


def _stream(record, seed: int, name: str) -> int:
    return derive_seed(seed, name, record.task, record.q, record.N, record.d)


def test_set(record, seed: int, U: torch.Tensor, model, device="cpu") -> tuple:
    """The seed's test set (X, t, codes, y), drawn once in the cell's ``test_mode``; the same for every arch."""
    g = make_generator(_stream(record, seed, f"qstr_test_{record.test_mode}"), device)
    batch = sampler_of(record.task)(record.n_test, record.N, record.q, record.d, record.test_mode, U, g)
    return batch.X, batch.t, model.positions(record.n_test, record.N, g), batch.target


def chance_level(task: str, N: int, q: int, d: int, n: int = 4096, seed: int = 0) -> float:
    """The loss of predicting 0 at every position on one batch of ``task`` in the general mode, over its ``power``, as
    ``test_loss`` reads it: 1 where the task's normalization is right (stsq.core.guards)."""
    from stsq.retrieval.task import directions
    g = torch.Generator().manual_seed(seed)
    batch = sampler_of(task)(n, N, q, d, "general", directions(d, q, seed), g)
    return float(batch.target.pow(2).mean() / power(task, d, q))


def test_loss(model, test, norm: float, chunk: int = 1000) -> float:
    """The normalized loss on the test set: its mean squared error per position over ``norm`` (E[y_i^2])."""
    X, t, P, y = test
    total = 0.0
    with torch.no_grad():
        for i in range(0, len(X), chunk):
            p = P[i:i + chunk] if P.dim() == 3 else P
            f, _ = model(X[i:i + chunk], t[i:i + chunk], p)
            total += (f - y[i:i + chunk]).pow(2).sum().item()
    return total / (y.numel() * norm)


SAMPLES_FORMAT = 1  # what a samples checkpoint holds (a change starts every cell over)


@on_its_threads
def samples_to_thresholds(record, seed: int, *, checkpoint: str | Path | None = None,
                          device: str | torch.device = "cpu", log=print, stop_after: int | None = None) -> list[dict]:
    """One row per threshold: the samples at the first check below it (or the cap, censored).

    Reuses what training guarantees (stsq.width.train): one thread for a family that trains on one
    (``on_its_threads``); the model, its data and its generators on ``device``; every ``checkpoint_every`` checks
    (and at the end) an atomic checkpoint of the model, the optimizer, the generators and the thresholds reached,
    resumed from on restart where it was written for this cell and seed by this code on this kind of device
    (stsq.core.checkpoint.resume_point), so a killed job goes on to the same numbers; a test loss that is NaN or
    infinite raises ``DivergenceError`` naming the cell, the seed and the step.  ``stop_after`` (steps) stops early
    and returns [] (the tests' kill)."""
    device = torch.device(device)
    label = f"{record.path} seed {seed}"
    torch.manual_seed(derive_seed(seed, "qstr_torch"))
    U = retrieval.directions(record.d, record.q, seed).to(device)
    model = build_model(record, seed).to(device)
    test = test_set(record, seed, U, model, device)
    opt = torch.optim.AdamW(model.parameters(), lr=record.lr, weight_decay=record.weight_decay)
    g = make_generator(_stream(record, seed, f"qstr_train_{record.mode}"), device)
    draw, norm = sampler_of(record.task), power(record.task, record.d, record.q)
    reached: dict[float, tuple[int, float]] = {}
    steps, loss, elapsed = 0, math.nan, 0.0
    fingerprint = f"{record.to_json()} seed={seed}"
    ck = resume_point(checkpoint, label, fingerprint=fingerprint, code=stage_hash("samples"), device=device.type,
                      fmt=SAMPLES_FORMAT, log=log, kind="samples")
    if ck is not None:
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        g.set_state(ck["generator"])
        torch.set_rng_state(ck["torch_rng"])
        steps, loss, elapsed = int(ck["step"]), float(ck["loss"]), float(ck["elapsed"])
        reached = {float(t): (int(n), float(at)) for t, n, at in ck["reached"]}
        log(f"{label}: resumed from checkpoint {checkpoint} at {steps * record.batch_size} samples")
    start = time.perf_counter()

    def save():
        if checkpoint is not None:
            save_tensors({"fingerprint": fingerprint, "code": stage_hash("samples"), "format": SAMPLES_FORMAT,
                          "device": device.type, "step": steps, "loss": loss, "model": model.state_dict(),
                          "optimizer": opt.state_dict(), "generator": g.get_state().cpu(),
                          "torch_rng": torch.get_rng_state(), "reached": [[t, n, at] for t, (n, at) in reached.items()],
                          "elapsed": elapsed + time.perf_counter() - start}, checkpoint)

    while steps * record.batch_size < record.cap and len(reached) < len(record.thresholds):
        batch = draw(record.batch_size, record.N, record.q, record.d, record.mode, U, g)
        f, _ = model(batch.X, batch.t, model.positions(record.batch_size, record.N, g))
        opt.zero_grad(set_to_none=True)
        ((f - batch.target).pow(2).mean() / norm).backward()
        opt.step()
        steps += 1
        if steps % record.check_every == 0 or steps * record.batch_size >= record.cap:
            loss = test_loss(model, test, norm)
            if not math.isfinite(loss):
                raise DivergenceError(f"{label} diverged: test loss {loss} at step {steps} "
                                      f"({steps * record.batch_size} samples, lr {record.lr:g}). Lower the learning "
                                      f"rate `lr` of arch {record.arch} in the config and rerun; no result was written "
                                      "for this cell.")
            for thr in record.thresholds:
                if thr not in reached and loss < thr:
                    reached[thr] = (steps * record.batch_size, loss)
            checks = steps // record.check_every
            if checks % record.log_every == 0 or len(reached) == len(record.thresholds):
                log(f"seed {seed}: {steps * record.batch_size} samples, test loss {loss:.4f}, "
                    f"{len(reached)}/{len(record.thresholds)} thresholds, "
                    f"{elapsed + time.perf_counter() - start:.1f} s")
            if checks % record.checkpoint_every == 0:
                save()
        if stop_after is not None and steps >= stop_after:
            save()
            return []
    save()
    rows = []
    for thr in record.thresholds:
        samples, at = reached.get(thr, (steps * record.batch_size, loss))
        rows.append({**record.axes(), "codes": record.codes, "test_mode": record.test_mode, "seed": seed,
                     "threshold": thr, "samples": samples, "censored": thr not in reached, "test_loss": at,
                     "steps": steps})
    return rows


def samples_cell(record, seeds, out, checkpoint_dir, device="cpu", log=print) -> list[dict]:
    """Every seed of one cell, one after another, each checkpointed to seed~S/last.pt under ``checkpoint_dir``;
    the rows to ``out`` (stsq.samples.table.SAMPLE_COLUMNS)."""
    from stsq.core.experiment import CHECKPOINT, seed_dir
    from stsq.core.files import write_rows
    from stsq.samples.table import SAMPLE_COLUMNS
    rows = []
    for seed in seeds:
        ck = seed_dir(checkpoint_dir, seed) / CHECKPOINT
        ck.parent.mkdir(parents=True, exist_ok=True)
        rows += samples_to_thresholds(record, seed, checkpoint=ck, device=device, log=log)
    write_rows(out, rows, SAMPLE_COLUMNS)
    return rows
