"""The evaluation of trained models: each at the training length and every unseen N' it takes, with its
projection onto the ground-truth family where its arch is ``projected``."""

from __future__ import annotations

from stsq.core.experiment import ARCHS, DEFAULTS, LOSS, NOT_APPLICABLE, OK, PROJECTION, model_keys
from stsq.core.tasks import TASKS
from stsq.sts.data import load_eval_set, seed_manifest
from stsq.sts.oracle import projection_loss
from stsq.sts.scoring import accepts_length, score
from stsq.width.train import load_model

__all__ = ["accepts_length", "chance_level", "evaluate_cell", "score"]


def chance_level(task: str, N: int, q: int, d: int, n: int = 4096, seed: int = 0) -> float:
    """The loss a predictor that has learned nothing scores on one batch of ``task``, read as training and the
    evaluation read it (stsq.sts.task.normalized_loss): 0 for a regression, equal logits for a classification (one
    per class, ``Task.classes``).  A task's normalization is right when this is 1 (stsq.core.guards)."""
    import torch

    from stsq.sts.task import normalized_loss, sample_batch
    batch = sample_batch(n, N, q, d, torch.Generator().manual_seed(seed), task)
    classes = TASKS[task].classes
    guess = torch.zeros(n, classes(d)) if classes is not None else torch.zeros_like(batch.target)
    return float(normalized_loss(guess, batch.target, q, task))


def evaluate_cell(models, data_index, eval_lengths, device="cpu", log=print,
                  projection_samples: int = DEFAULTS["projection_samples"]) -> list[dict]:
    """Tidy rows (split "eval") of trained models (one per seed) at every length N', on the evaluation
    sets of their (q, N) (found through ``data_index``).

    A model asked for a length it cannot take (the FCN at N' != N, randomized positions at N' > L) gets one
    ``not_applicable`` row with no value.
    """
    rows = []
    for path in models:
        model, spec = load_model(path, device)
        seed = spec.seed
        folder, manifest = seed_manifest(data_index, seed, q=spec.q, N=spec.N, d=spec.d)
        base = {**{k: getattr(spec, k) for k in model_keys()}, "step": spec.steps, "split": "eval"}
        for L in eval_lengths:
            if not accepts_length(model, L):
                rows.append({**base, "N_eval": L, "metric": LOSS, "value": None, "status": NOT_APPLICABLE})
                continue
            metrics = score(model, load_eval_set(folder, L, manifest), manifest["streams"]["eval_positions"], device,
                            with_se=True, task=spec.task)
            if ARCHS[spec.arch].projected and TASKS[spec.task].oracle:  # the stochastic-PE theory's family
                scale, weight = model.family_scale()
                metrics[PROJECTION] = projection_loss(spec.q, L, model.d_e, scale, weight, query=model.query,
                                                      n=projection_samples,
                                                      seed=manifest["streams"]["eval_positions"], device=device)
            rows.extend({**base, "N_eval": L, "metric": k, "value": v, "status": OK} for k, v in metrics.items())
            log(f"{spec.label} N'={L} " + " ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
    return rows
