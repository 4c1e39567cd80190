"""The tasks: one record each (no torch).

A task says how a batch is drawn (X = (x_1..x_N), x_i ~ N(0, I_d) i.i.d., y a uniformly random q-subset of [N],
for every task), its target from (X, y), the loss's normalization, and which of the theory's results apply to it:
the oracle (the best loss of the ground-truth family W_pp = c I, V = v [I, 0], stsq.sts.oracle) and the FCN's exact
width floor (stsq.sts.theory).  A claim that reads one of them is NOT TESTED for a task that has none
(``Claim.needs``, stsq.claims.judge).  A cell's record names its task (``CellRecord.task``, the sweep's ``task``);
training, the evaluation sets and the scoring read the task from it (stsq.sts.task).  A new task is one record here
and its target function (docs/extending.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Task:
    name: str
    about: str  # one line for the docs
    target: str  # "module:function": fn(X [B, N, d], y [B, q]) -> the target [B, d]
    power: Callable[[int, int], float]  # E||target||^2 at (d, q): the loss divides by it (predicting 0 scores 1)
    oracle: str | None  # the ground-truth family whose best loss is the task's oracle; None where it has none
    floor: str | None  # the exact width floor an FCN obeys on it; None where it has none
    # what its sweeps measure: a key of stsq.core.measures.MEASURES, whose record names the rules, the cell record,
    # the runner, the tables, the claims and the front page of its sweeps (the width each model needs, or the
    # samples it needs until its test loss falls below a threshold)
    measure: str = "width"
    # "module:function" drawing its batches: STS_q's fn(B, N, q, d, generator, task); a "samples" task's
    # fn(B, N, q, d, mode, directions, generator)
    sampler: str = "stsq.sts.task:sample_batch"
    # a classification task: fn(d) -> its number of classes (its models output one logit each, its loss is the
    # cross-entropy over that of the chance level, ``power``: log classes for uniform labels); None: a regression
    classes: Callable[[int], int] | None = None
    # y points at a position the model must read (STS_q, index lookup); False: y is drawn and unused (bounded Dyck)
    points: bool = True
    # its claims read each N at the arch's largest budget there, so an arch's budget may grow with N (a sweep's
    # ``steps_by_N``); False: its claims fit one budget across N (STS_q's width claims), and steps_by_N is refused
    budget_per_N: bool = False
    # the last paragraph of a width sweep's front page: the task, its models and its loss, in a few sentences
    explained: str = ""
    # the result its sweeps reproduce, as a width sweep's front page names it
    source: str = ("Wang, Wei, Hsu, Lee (ICML 2024), *Transformers Provably Learn Sparse Token Selection While "
                   "Fully-Connected Nets Cannot*")


SEPARATIONS = ("Bhattamishra, Hahn, Blunsom, Kanade (NeurIPS 2024), *Separations in the Representational Capabilities "
               "of Transformers and Recurrent Architectures*")
STS_EXPLAINED = (
    "The task STS_q: N tokens x_i ~ N(0, I_d), a random q-subset y of positions, target the mean of the selected "
    "tokens. The one-layer transformer (merged key-query matrix W, value matrix V, query token [0; p_y]) is "
    "trained with stochastic (``tf_stochastic``, the paper's) or fixed (``tf_fixed``) positional encodings; the FCN "
    "(``fcn``) sees concat(vec(X), 1_y). Every loss is the normalized loss E||f - t||^2 / E||t||^2: predicting 0 "
    "scores 1. The oracle is the best loss of the ground-truth family W_pp = c I, V = v [I_d, 0] that gradient "
    "descent converges to in the paper's theory.")
LOOKUP_EXPLAINED = (
    "The task index lookup: N symbols x_i drawn uniformly from an alphabet of d, and a position y; the label is x_y. "
    "The one-layer transformer (``lookup_tf``: one softmax head of width m, fixed random unit positions, queried by "
    "y's position vector) and the GRU (``lookup_gru``: hidden width m, reading the N symbols, then y) are scored by "
    "their cross-entropy over the chance level's (log d): predicting every symbol alike scores 1. The width a model "
    "needs is the narrowest of the grid reaching 0.1, interpolated.")
DYCK_EXPLAINED = (
    "The task bounded Dyck: a word of N brackets of two types; the label says whether it is well nested with depth "
    "at most 2. Half of each batch is in the language; the other half has two of its tokens swapped, out of it. The "
    "one-layer transformer (``dyck_tf``: one softmax head of width m, fixed random unit positions, a trained query) "
    "and the GRU (``dyck_gru``: hidden width m) are scored by their cross-entropy over the chance level's (log 2): "
    "predicting both labels alike scores 1. The width a model needs is the narrowest of the grid reaching 0.1, "
    "interpolated.")
TASKS: dict[str, Task] = {t.name: t for t in [
    Task("sts", "STS_q: the mean of the q selected tokens (the paper's task)", "stsq.sts.task:sparse_average",
         power=lambda d, q: d / q,
         oracle="the ground-truth family W_pp = c I, V = v [I, 0] (stsq.sts.oracle)",
         floor="the FCN's exact width floor (stsq.sts.theory)", explained=STS_EXPLAINED),
    Task("qstr", "qSTR: each position retrieves sum_k <x_{t_ik}, u_k> from the q positions it points to "
         "(Mousavi-Hosseini et al. 2025; docs/retrieval.md)", "stsq.retrieval.task:retrieved",
         power=lambda d, q: q, oracle=None, floor=None, measure="samples", sampler="stsq.retrieval.task:sample_batch"),
    Task("lookup", "index lookup: the symbol at position y of N uniform symbols (Bhattamishra et al. 2024; "
         "docs/separations.md)", "stsq.tokens.task:lookup_target", power=lambda d, q: math.log(d), oracle=None,
         floor=None, sampler="stsq.tokens.task:sample_lookup", classes=lambda d: d, source=SEPARATIONS,
         budget_per_N=True, explained=LOOKUP_EXPLAINED),
    Task("dyck", "bounded Dyck: whether a word of N brackets of two types is well nested with depth at most 2 "
         "(Bhattamishra et al. 2024; docs/separations.md)", "stsq.tokens.task:dyck_target",
         power=lambda d, q: math.log(2), oracle=None, floor=None, sampler="stsq.tokens.task:sample_dyck",
         classes=lambda d: 2, points=False, source=SEPARATIONS, budget_per_N=True,
         explained=DYCK_EXPLAINED),
    # a new task: one record here and its target function in stsq.sts.task (docs/extending.md)
]}
DEFAULT_TASK = "sts"


def _lookup_shape(N: int, q: int, d: int) -> tuple[str, str] | None:
    return ("q", f"index lookup reads one position: q must be 1, got {q}") if q != 1 else None


def _dyck_shape(N: int, q: int, d: int) -> tuple[str, str] | None:
    if d != 4:
        return "d", f"bounded Dyck has 4 tokens ( ) [ ]: d must be 4, got {d}"
    if N % 2:
        return "N", f"a word of Dyck-(2, 2) has an even length: N = {N}"
    return None


# What a task takes of a sweep's shape, checked before any job (stsq.config): (N, q, d) -> (the axis that is wrong,
# why), or None.  Each says what its sampler refuses (tests/test_guards.py holds the two to agree).  Apart from the
# records, as the front pages are: no job reads it, so adding it reran none.
SHAPE_LIMITS: dict[str, Callable[[int, int, int], tuple[str, str] | None]] = {
    "lookup": _lookup_shape,
    "dyck": _dyck_shape,
}
