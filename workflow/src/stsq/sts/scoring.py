"""Scoring a model on a fixed evaluation set, at the training length or any unseen N' (used by training for
its curve, stsq.width.train, and by the evaluation of trained models, stsq.width.evaluate)."""

from __future__ import annotations

import torch

from stsq.core.experiment import ACCURACY, LOSS, LOSS_SE
from stsq.core.seeds import derive_seed, generator
from stsq.core.tasks import DEFAULT_TASK, TASKS
from stsq.sts.models import attention_on_subset
from stsq.sts.task import correct, normalized_loss, per_sample_loss

ELEMENTS_PER_CHUNK = 1 << 24  # bounds memory at long N' and large d_e


def accepts_length(model, N_eval: int) -> bool:
    """Whether the model can take sequences of length N_eval (the FCN only its training N; randomized
    positions up to their range L)."""
    return model.accepts_length(N_eval)


@torch.no_grad()
def score(model, eval_set: dict, positions_seed: int, device: str | torch.device = "cpu",
          with_se: bool = False, task: str = DEFAULT_TASK) -> dict[str, float]:
    """Normalized loss (of ``task``'s normalization), and for transformers the attention mass on y and its
    evenness inside y; with ``with_se``, the loss's standard error over the set's samples too (``LOSS_SE``).

    Stochastic positional encodings for the evaluation are drawn from
    ``positions_seed`` (per length and d_e), so every call scores the same data.
    """
    X_all, y_all, t_all = eval_set["X"], eval_set["y"], eval_set["target"]
    n, N_eval, d = X_all.shape
    q = y_all.shape[1]
    d_e = getattr(model, "d_e", 0)
    chunk = max(1, ELEMENTS_PER_CHUNK // (N_eval * (d + d_e)))
    g = generator(derive_seed(positions_seed, "N", N_eval, "d_e", d_e), device)
    was_training = model.training
    model.eval()
    sq_err, sq_err2, mass, even, right = 0.0, 0.0, 0.0, 0.0, 0
    for lo in range(0, n, chunk):
        X = X_all[lo:lo + chunk].to(device)
        y = y_all[lo:lo + chunk].to(device)
        t = t_all[lo:lo + chunk].to(device)
        b = X.shape[0]
        f, a = model(X, y, model.positions(b, N_eval, g))
        sq_err += float(normalized_loss(f, t, q, task)) * b
        if with_se:  # the second moment of normalized_loss, sample by sample
            sq_err2 += float(per_sample_loss(f, t, q, task).double().pow(2).sum())
        if TASKS[task].classes is not None:
            right += int(correct(f, t))
        if a is not None:
            m, e = attention_on_subset(a, y)
            mass += float(m.sum())
            even += float(e.sum())
    model.train(was_training)
    out = {LOSS: sq_err / n}
    if with_se:
        var = max(0.0, sq_err2 / n - (sq_err / n) ** 2) * n / max(1, n - 1)
        out[LOSS_SE] = (var / n) ** 0.5
    if TASKS[task].classes is not None:
        out[ACCURACY] = right / n
    if d_e:
        out["attn_mass_y"] = mass / n
        out["attn_evenness_y"] = even / n
    return out
