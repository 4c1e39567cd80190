"""Drawing a task's batches and scoring them (the tasks' records: stsq.core.tasks; STS_q: docs/paper.md, "The task").

X = (x_1..x_N), x_i ~ N(0, I_d) i.i.d.; y a uniformly random q-subset of [N]; the target is the task's function
of (X, y): for STS_q, (1/q) sum_{i in y} x_i.  Written once: training, evaluation and the tests all draw from
``sample_batch`` and score with ``normalized_loss``, each of the cell's task.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache

import torch

from stsq.core.tasks import DEFAULT_TASK, TASKS


@dataclass
class Batch:
    """One batch of STS_q: ``X`` [B, N, d], ``y`` [B, q] (int64 positions), ``target`` [B, d]."""

    X: torch.Tensor
    y: torch.Tensor
    target: torch.Tensor

    @property
    def N(self) -> int:
        return self.X.shape[1]

    @property
    def q(self) -> int:
        return self.y.shape[1]


def random_subsets(batch_size: int, N: int, q: int, generator: torch.Generator) -> torch.Tensor:
    """y: ``batch_size`` uniformly random q-subsets of {0..N-1}, as [B, q] int64.

    The q positions of the largest of N i.i.d. uniforms form a uniform q-subset.
    """
    if not 1 <= q <= N:
        raise ValueError(f"q must be in [1, N]; got q={q}, N={N}")
    u = torch.rand(batch_size, N, generator=generator, device=generator.device)
    return u.topk(q, dim=1).indices


def sparse_average(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """STS_q(X, y) = (1/q) sum_{i in y} x_i, batched: [B, N, d], [B, q] -> [B, d]."""
    d = X.shape[-1]
    picked = X.gather(1, y.unsqueeze(-1).expand(-1, -1, d))
    return picked.mean(dim=1)


def _function(spec: str):
    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)


GAUSSIAN = "stsq.sts.task:sample_batch"  # the sampler of STS_q and every task of Gaussian tokens


@cache
def target_of(task: str):
    """The target function of ``task`` (its record's ``target``, "module:function")."""
    return _function(TASKS[task].target)


@cache
def sampler_of(task: str):
    """The function drawing ``task``'s batches (its record's ``sampler``, "module:function")."""
    return _function(TASKS[task].sampler)


def sample_batch(batch_size: int, N: int, q: int, d: int, generator: torch.Generator,
                 task: str = DEFAULT_TASK) -> Batch:
    """Draw (X, y, target) from ``task`` (STS_q by default) on the generator's device: Gaussian tokens here, or the
    task's own sampler where its record names another (``Task.sampler``)."""
    if TASKS[task].sampler != GAUSSIAN:
        return sampler_of(task)(batch_size, N, q, d, generator, task)
    X = torch.randn(batch_size, N, d, generator=generator, device=generator.device)
    y = random_subsets(batch_size, N, q, generator)
    return Batch(X=X, y=y, target=target_of(task)(X, y))


def power(task: str, d: int, q: int) -> float:
    """E||t||^2 of ``task``'s target at (d, q): what the loss divides by (STS_q: d / q)."""
    return TASKS[task].power(d, q)


def normalized_loss(prediction: torch.Tensor, target: torch.Tensor, q: int, task: str = DEFAULT_TASK) -> torch.Tensor:
    """E||f - t||^2 / E||t||^2, the task's E||t||^2 (``power``): predicting 0 scores 1.0.  A classification task
    (``Task.classes``): the cross-entropy of the logits f over the chance level's (``power``, at f's classes):
    predicting every class alike scores 1.0."""
    if TASKS[task].classes is not None:
        return per_sample_loss(prediction, target, q, task).mean()
    d = target.shape[-1]
    return (prediction - target).pow(2).sum(dim=-1).mean() / power(task, d, q)


def per_sample_loss(prediction: torch.Tensor, target: torch.Tensor, q: int, task: str = DEFAULT_TASK) -> torch.Tensor:
    """Each sample's normalized loss [B]: its squared error, or for a classification task its cross-entropy, over the
    task's trivial loss (``power``)."""
    if TASKS[task].classes is not None:
        return torch.nn.functional.cross_entropy(prediction, target, reduction="none") / power(
            task, prediction.shape[-1], q)
    return (prediction - target).pow(2).sum(dim=-1) / power(task, target.shape[-1], q)


def correct(prediction: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """How many samples of a classification batch the logits classify right (the largest logit is the label)."""
    return (prediction.argmax(dim=-1) == target).sum()
