"""Sample complexity: the samples a model needs until its test loss falls below a threshold (docs/retrieval.md).

One seed of one cell (stsq.retrieval_cells.SampleCell): AdamW on fresh batches of the cell's mode; every
``check_every`` steps the normalized loss on a fixed test set of ``n_test`` samples (drawn once per seed, in the
cell's ``test_mode``).  The first check below a threshold gives that threshold's samples (the steps so far times
the batch).  Training stops at the check below the lowest threshold, or when the samples reach the cap: a
threshold not reached by then is *censored*, its value the cap, a lower bound and never a measurement.
"""

from __future__ import annotations

import math
import time

import torch

from . import retrieval
from .models import build_model
from .seeds import derive_seed
from .seeds import generator as make_generator
from .task import power, sampler_of


def _stream(record, seed: int, name: str) -> int:
    return derive_seed(seed, name, record.task, record.q, record.N, record.d)


def test_set(record, seed: int, U: torch.Tensor, model) -> tuple:
    """The seed's test set (X, t, codes, y), drawn once in the cell's ``test_mode``; the same for every arch."""
    g = make_generator(_stream(record, seed, f"qstr_test_{record.test_mode}"))
    batch = sampler_of(record.task)(record.n_test, record.N, record.q, record.d, record.test_mode, U, g)
    return batch.X, batch.t, model.positions(record.n_test, record.N, g), batch.target


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


def samples_to_thresholds(record, seed: int, log=print) -> list[dict]:
    """One row per threshold: the samples at the first check below it (or the cap, censored)."""
    torch.manual_seed(derive_seed(seed, "qstr_torch"))
    U = retrieval.directions(record.d, record.q, seed)
    model = build_model(record, seed)
    test = test_set(record, seed, U, model)
    opt = torch.optim.AdamW(model.parameters(), lr=record.lr, weight_decay=record.weight_decay)
    g = make_generator(_stream(record, seed, f"qstr_train_{record.mode}"))
    draw, norm = sampler_of(record.task), power(record.task, record.d, record.q)
    reached: dict[float, tuple[int, float]] = {}
    steps, loss, start = 0, math.nan, time.perf_counter()
    while steps * record.batch_size < record.cap and len(reached) < len(record.thresholds):
        batch = draw(record.batch_size, record.N, record.q, record.d, record.mode, U, g)
        f, _ = model(batch.X, batch.t, model.positions(record.batch_size, record.N, g))
        opt.zero_grad(set_to_none=True)
        ((f - batch.target).pow(2).mean() / norm).backward()
        opt.step()
        steps += 1
        if steps % record.check_every == 0 or steps * record.batch_size >= record.cap:
            loss = test_loss(model, test, norm)
            for thr in record.thresholds:
                if thr not in reached and loss < thr:
                    reached[thr] = (steps * record.batch_size, loss)
            if (steps // record.check_every) % record.log_every == 0 or len(reached) == len(record.thresholds):
                log(f"seed {seed}: {steps * record.batch_size} samples, test loss {loss:.4f}, "
                    f"{len(reached)}/{len(record.thresholds)} thresholds, {time.perf_counter() - start:.1f} s")
    rows = []
    for thr in record.thresholds:
        samples, at = reached.get(thr, (steps * record.batch_size, loss))
        rows.append({**record.axes(), "codes": record.codes, "test_mode": record.test_mode, "seed": seed,
                     "threshold": thr, "samples": samples, "censored": thr not in reached, "test_loss": at,
                     "steps": steps})
    return rows
