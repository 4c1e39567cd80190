"""Online training on STS_q: a fresh batch every step, progress lines, a curve, resumable checkpoints.

Resuming restores the weights, the optimizer and the data generator, so on the
CPU a run that is killed and restarted ends bitwise identical to one that was not.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from functools import wraps
from pathlib import Path

import torch

from stsq.core.checkpoint import load_tensors, resume_point, save_tensors
from stsq.core.errors import CorruptFileError, DivergenceError
from stsq.core.experiment import (
    CHECKPOINT,
    CURVE_COLUMNS,
    LOSS,
    CellRecord,
    family,
    is_transformer,
    length_curve_column,
    model_keys,
    seed_dir,
)
from stsq.core.files import write_rows
from stsq.core.seeds import generator
from stsq.provenance import sidecars as provenance
from stsq.provenance.codehash import stage_hash
from stsq.sts.data import load_eval_set, seed_manifest, seed_streams
from stsq.sts.models import build_model
from stsq.sts.scoring import score
from stsq.sts.step import CHECKPOINT_FORMAT, make_step
from stsq.sts.task import sample_batch

__all__ = ["DivergenceError", "TrainResult", "TrainSpec", "load_model", "save_model", "train", "train_cell"]


@dataclass(frozen=True, kw_only=True)
class TrainSpec(CellRecord):
    """Everything that determines one trained model: its cell's record (stsq.core.experiment.CellRecord: the
    axes and every training setting) and its seed, with the seed's random streams."""

    seed: int
    streams: dict = field(default_factory=dict)  # from the seed manifest; derived from seed if empty

    def __post_init__(self):
        if not self.streams:
            object.__setattr__(self, "streams", seed_streams(self.q, self.N, self.d, self.seed))

    @property
    def label(self) -> str:
        """The model in a log line: its axes and seed."""
        return "[" + " ".join([self.arch, *(f"{k}={getattr(self, k)}" for k in model_keys("arch"))]) + "]"

    def fingerprint(self) -> str:
        """What a checkpoint must match to be resumed (all but the checkpoint interval)."""
        spec = asdict(self)
        spec.pop("checkpoint_every")
        if not spec["position_range"]:  # as before the setting existed
            spec.pop("position_range")
        return json.dumps(spec, sort_keys=True)

    def build(self, device="cpu"):
        return build_model(self, self.seed).to(device)


@dataclass
class TrainResult:
    model: torch.nn.Module
    curve: list[dict]
    steps_done: int
    resumed_from: int
    seconds: float
    loop_seconds: float = 0.0  # this run's training loop (steps and scoring), not counting earlier runs
    scoring_seconds: float = 0.0  # ... of which scoring the curve
    unseen_lengths: tuple[int, ...] = ()  # the N' != N scored at each checkpoint
    first_step_seconds: float = 0.0  # ... of which this run's first step (allocation and warm-up)
    threads: int = 1  # the intra-op threads it trained on (its provenance)


def learning_rate(spec: TrainSpec, step: int) -> float:
    """The learning rate of step ``step`` (1-based): constant, or cosine from lr down to 0 at the last step."""
    if spec.schedule == "cosine":
        return spec.lr * 0.5 * (1.0 + math.cos(math.pi * (step - 1) / spec.steps))
    return spec.lr


def setup(spec: TrainSpec, device="cpu"):
    """What training runs: the cell's fresh model on ``device``, its step (stsq.sts.step.make_step) and the generator
    of its training data (its seed's stream).  ``train`` starts here, and so does the pilot's timing of a step
    (stsq.cluster.pilot.time_steps)."""
    device = torch.device(device)
    model = spec.build(device)
    return model, make_step(model, spec), generator(spec.streams["train_data"], device)


def train_step(step, spec: TrainSpec, g: torch.Generator) -> torch.Tensor:
    """One step of online training: a fresh batch (X, y, target) and fresh positions from ``g``,
    then ``step`` (see stsq.sts.step); returns the batch's normalized loss (detached, not synced)."""
    batch = sample_batch(spec.batch_size, spec.N, spec.q, spec.d, g, spec.task)
    P = step.model.positions(spec.batch_size, spec.N, g)
    return step(batch.X, batch.y, P, batch.target)


def on_its_threads(fn):
    """Run ``fn(spec, ...)`` on one intra-op thread where the spec's family does not train on more (its
    ``threads`` unset: every transformer), whatever this process's setting, and restore the setting after.  Such a
    job asks for one thread (stsq.cluster.cost.train_threads), and a model trained in a Python session with torch's
    default threads must be that job's model: on some CPUs MKL splits a small product's sum over the batch
    between threads, even in its strict reproducible mode (an AMD EPYC: a transformer at a batch of 32 had other
    last bits on two threads than on one).  A family whose step is one large product keeps the process's threads
    (the job's, from its request)."""
    @wraps(fn)
    def run(spec, *args, device="cpu", **kwargs):
        if family(spec.arch).threads or torch.device(device).type != "cpu":
            return fn(spec, *args, device=device, **kwargs)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return fn(spec, *args, device=device, **kwargs)
        finally:
            torch.set_num_threads(threads)
    return run


@on_its_threads
def train(spec: TrainSpec, test_set: dict, *, checkpoint: str | Path | None = None,
          device: str | torch.device = "cpu", log=print, stop_after: int | None = None,
          length_sets: dict[int, dict] | None = None) -> TrainResult | None:
    """Train one model of ``spec``; return it with its curve, or None if stopped at ``stop_after``.
    A transformer trains on one thread (``on_its_threads``).

    Every ``log_every`` steps: a progress line and a curve row (train loss, the
    normalized loss on ``test_set`` (the in-distribution evaluation set), the
    attention diagnostics and the ground-truth cosines).  Every
    ``checkpoint_every`` steps: the normalized loss on each of ``length_sets``
    (evaluation sets at unseen lengths N', keyed by N') in the same curve row,
    then an atomic checkpoint, resumed from on restart if it was written for
    the same spec.  A NaN or infinite loss raises
    ``DivergenceError`` naming the cell and the step.
    """
    device = torch.device(device)
    model, step_fn, g = setup(spec, device)
    step, curve, elapsed = _resume(spec, checkpoint, model, step_fn, g, device, log)
    resumed_from = step

    def save():
        if checkpoint is not None:
            save_tensors({"fingerprint": spec.fingerprint(), "code": stage_hash("train"), "step": step,
                          "model": model.state_dict(),
                          "format": CHECKPOINT_FORMAT, "optimizer": step_fn.state_dict(), "device": device.type,
                          "generator": g.get_state().cpu(), "curve": curve,
                          "elapsed": elapsed + time.perf_counter() - t0}, checkpoint)

    pending: list[torch.Tensor] = []  # train losses since the last check, checked without a sync per step

    def check_finite():  # one host read: the mean is finite if and only if every loss is
        losses = torch.stack(pending)
        mean = float(losses.mean())
        if not math.isfinite(mean):  # the first loss that is not finite (or the largest, if the sum overflowed)
            bad = ~torch.isfinite(losses) if not torch.isfinite(losses).all() else losses == losses.max()
            first = step - len(pending) + 1 + int(bad.nonzero()[0, 0])
            value = float(losses[bad][0])
            raise DivergenceError(
                f"{spec.label} diverged: training loss {value} at step {first} of {spec.steps} "
                f"(optimizer {spec.optimizer}, lr {spec.lr:g}). Lower the learning rate `lr` of arch "
                f"{spec.arch} in the config and rerun; no result was written for this cell.")
        return mean

    t0 = time.perf_counter()
    scoring = 0.0  # seconds spent scoring the curve (the test set, and the sets at N' at each checkpoint)
    first = None  # seconds of this run's first step
    model.train()
    while step < spec.steps:
        step += 1
        if spec.schedule != "constant":
            step_fn.set_lr(learning_rate(spec, step))
        pending.append(train_step(step_fn, spec, g))
        if first is None:
            first = time.perf_counter() - t0

        if step % spec.log_every == 0 or step == spec.steps:
            train_loss = check_finite()
            pending.clear()
            t_score = time.perf_counter()
            at_checkpoint = step % spec.checkpoint_every == 0 or step == spec.steps
            row = _curve_row(model, spec, step, train_loss, test_set, length_sets if at_checkpoint else None, device)
            scoring += time.perf_counter() - t_score
            if not math.isfinite(row["normalized_loss"]):
                raise DivergenceError(f"{spec.label} diverged: test loss {row['normalized_loss']} at step "
                                      f"{step}. Lower the learning rate `lr` of arch {spec.arch} and rerun.")
            curve.append(row)
            secs = elapsed + time.perf_counter() - t0
            extra = "".join(f" {k} {row[k]:.3f}" for k in ("attn_mass_y", "attn_evenness_y") if k in row)
            log(f"{spec.label} step {step}/{spec.steps} train {train_loss:.4f} "
                f"test {row['normalized_loss']:.4f}{extra} {secs:.1f}s")
        if step % spec.checkpoint_every == 0 or step == spec.steps:
            if pending:
                check_finite()
            save()
        if stop_after is not None and step >= stop_after and step < spec.steps:
            return None
    loop = time.perf_counter() - t0
    # the steps' time apart from the scoring's (a pilot reads them from the result: stsq.cluster.pilot)
    log(f"{spec.label} timing: {step - resumed_from} steps in {loop:.4f}s, of which scoring {scoring:.4f}s")
    return TrainResult(model, curve, step, resumed_from, elapsed + loop, loop, scoring,
                       tuple(sorted(length_sets or ())), first or 0.0, torch.get_num_threads())


def _resume(spec: TrainSpec, checkpoint, model, step_fn, g: torch.Generator, device: torch.device,
            log) -> tuple[int, list, float]:
    """(step, curve, seconds) to go on from: the checkpoint's where it was written for this spec by this version
    of the step on this kind of device (the weights, the optimizer and the generator restored: a generator's
    state is the CPU's or CUDA's), else a fresh start, said in the log."""
    ck = resume_point(checkpoint, spec.label, fingerprint=spec.fingerprint(), code=stage_hash("train"),
                      device=device.type, fmt=CHECKPOINT_FORMAT, log=log)
    if ck is not None:
        model.load_state_dict(ck["model"])
        step_fn.load_state_dict(ck["optimizer"])
        g.set_state(ck["generator"])
        log(f"{spec.label} resumed from checkpoint {checkpoint} at step {int(ck['step'])}/{spec.steps}")
        return int(ck["step"]), list(ck["curve"]), float(ck["elapsed"])
    return 0, [], 0.0


def _curve_row(model, spec: TrainSpec, step: int, train_loss: float, test_set: dict, length_sets, device) -> dict:
    """One row of the curve: the train loss, the test set's loss and attention diagnostics, the ground-truth
    cosines, and (``length_sets``, at a checkpoint) the loss at each unseen N' along training."""
    row = {"step": step, "train_loss": train_loss, "device": str(device)}
    row.update(score(model, test_set, spec.streams["eval_positions"], device, task=spec.task))
    row.update(model.ground_truth_cosines())
    for L, s in (length_sets or {}).items():
        row[length_curve_column(L)] = score(model, s, spec.streams["eval_positions"], device, task=spec.task)[LOSS]
    return row


def train_cell(record: CellRecord, seeds, data_index, models, curves, checkpoint_dir, device="cpu",
               log=print) -> list[TrainResult]:
    """Train every seed of one cell, one after another, on its (q, N)'s data (found through ``data_index``).

    ``record``: the cell's record (its axes and every training setting, resolved: stsq.core.sweep.cell_records).
    Seed ``seeds[k]`` writes ``models[k]`` and ``curves[k]``, checkpoints to seed~S/last.pt under
    ``checkpoint_dir`` and resumes from there.
    """
    if not len(seeds) == len(models) == len(curves):
        raise ValueError(f"{len(seeds)} seeds need as many model and curve paths, got {len(models)}, {len(curves)}")
    results = []
    for seed, model_path, curve_path in zip(seeds, models, curves):
        folder, manifest = seed_manifest(data_index, seed, q=record.q, N=record.N, d=record.d)
        spec = TrainSpec(**record.to_dict(), seed=seed, streams=manifest["streams"])
        # a transformer's loss at every unseen N' it can take, along training (the FCN takes length N only;
        # randomized positions up to their range L)
        unseen = []
        if is_transformer(spec.arch):  # (a transformer is cheap to build; an FCN of paper width is not)
            takes = spec.build().accepts_length
            unseen = sorted(int(L) for L in manifest["eval_sets"] if int(L) != spec.N and takes(int(L)))
        result = train(spec, load_eval_set(folder, spec.N, manifest), device=device, log=log,
                       checkpoint=seed_dir(checkpoint_dir, seed) / CHECKPOINT,
                       length_sets={L: load_eval_set(folder, L, manifest) for L in unseen})
        ids = {k: getattr(spec, k) for k in model_keys()}
        write_rows(curve_path, [{**ids, **r} for r in result.curve], CURVE_COLUMNS + [length_curve_column(L)
                                                                                      for L in unseen] + ["device"])
        save_model(result, spec, model_path)
        provenance.write(model_path, "train", device=device, threads=result.threads,
                         what=f"{Path(model_path).name} and {Path(curve_path).name}")
        log(f"{spec.label} done: {result.steps_done} steps ({result.resumed_from} resumed) in {result.seconds:.1f}s")
        results.append(result)
    return results


def save_model(result: TrainResult, spec: TrainSpec, path: str | Path) -> None:
    """The trained weights and the spec that made them, written atomically."""
    save_tensors({"spec": asdict(spec), "model": result.model.state_dict(), "steps": result.steps_done}, path)


def load_model(path: str | Path, device="cpu"):
    """(model, spec) from a file written by ``save_model``; a damaged file raises ``CorruptFileError``."""
    obj = load_tensors(path, "trained model")
    try:
        spec = TrainSpec(**obj["spec"])
        model = spec.build(device)
        model.load_state_dict(obj["model"])
    except (KeyError, TypeError, RuntimeError) as e:
        raise CorruptFileError(f"{path}: not a trained model of this pipeline ({type(e).__name__}: {e})") from None
    return model, spec
