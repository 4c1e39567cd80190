"""Scoring a model on a fixed evaluation set, at the training length or any unseen N'."""

from __future__ import annotations

import torch

from .data import load_eval_set, seed_manifest
from .experiment import DEFAULTS, LOSS, LOSS_SE, NOT_APPLICABLE, OK, PROJECTION
from .models import attention_on_subset
from .oracle import projection_loss
from .seeds import derive_seed, generator
from .task import normalized_loss

ELEMENTS_PER_CHUNK = 1 << 24  # bounds memory at long N' and large d_e


def accepts_length(model, N_eval: int) -> bool:
    """Whether the model can take sequences of length N_eval (the FCN only its training N; randomized
    positions up to their range L)."""
    return model.accepts_length(N_eval)


@torch.no_grad()
def score(model, eval_set: dict, positions_seed: int, device: str | torch.device = "cpu",
          with_se: bool = False) -> dict[str, float]:
    """Normalized loss, and for transformers the attention mass on y and its evenness inside y; with
    ``with_se``, the loss's standard error over the set's samples too (``LOSS_SE``).

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
    sq_err, sq_err2, mass, even = 0.0, 0.0, 0.0, 0.0
    for lo in range(0, n, chunk):
        X = X_all[lo:lo + chunk].to(device)
        y = y_all[lo:lo + chunk].to(device)
        t = t_all[lo:lo + chunk].to(device)
        b = X.shape[0]
        f, a = model(X, y, model.positions(b, N_eval, g))
        sq_err += float(normalized_loss(f, t, q)) * b
        if with_se:  # the second moment of normalized_loss, sample by sample
            sq_err2 += float(((f - t).pow(2).sum(dim=-1) / (d / q)).double().pow(2).sum())
        if a is not None:
            m, e = attention_on_subset(a, y)
            mass += float(m.sum())
            even += float(e.sum())
    model.train(was_training)
    out = {LOSS: sq_err / n}
    if with_se:
        var = max(0.0, sq_err2 / n - (sq_err / n) ** 2) * n / max(1, n - 1)
        out[LOSS_SE] = (var / n) ** 0.5
    if d_e:
        out["attn_mass_y"] = mass / n
        out["attn_evenness_y"] = even / n
    return out


def evaluate_cell(models, data_index, eval_lengths, device="cpu", log=print,
                  projection_samples: int = DEFAULTS["projection_samples"]) -> list[dict]:
    """Tidy rows (split "eval") of trained models (one per seed) at every length N', on the evaluation
    sets of their (q, N) (found through ``data_index``).

    A model asked for a length it cannot take (the FCN at N' != N, randomized positions at N' > L) gets one
    ``not_applicable`` row with no value.
    """
    from .train import load_model  # train scores its curve with this module's score()

    rows = []
    for path in models:
        model, spec = load_model(path, device)
        seed = spec.seed
        folder, manifest = seed_manifest(data_index, seed, q=spec.q, N=spec.N, d=spec.d)
        base = {"arch": spec.arch, "q": spec.q, "N": spec.N, "d": spec.d, "steps": spec.steps, "width": spec.width,
                "seed": seed,
                "step": spec.steps, "split": "eval"}
        for L in eval_lengths:
            if not accepts_length(model, L):
                rows.append({**base, "N_eval": L, "metric": LOSS, "value": None, "status": NOT_APPLICABLE})
                continue
            metrics = score(model, load_eval_set(folder, L, manifest), manifest["streams"]["eval_positions"], device,
                            with_se=True)
            if getattr(model, "encoding", None) == "stochastic":  # the ground-truth family is for stochastic PE
                scale, weight = model.family_scale()
                metrics[PROJECTION] = projection_loss(spec.q, L, model.d_e, scale, weight, query=model.query,
                                                      n=projection_samples,
                                                      seed=manifest["streams"]["eval_positions"], device=device)
            rows.extend({**base, "N_eval": L, "metric": k, "value": v, "status": OK} for k, v in metrics.items())
            log(f"{spec.cell} N'={L} " + " ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
    return rows
