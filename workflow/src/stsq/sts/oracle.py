"""The oracle: the best normalized loss within the ground-truth family of the transformer.

The paper's theory says gradient descent on stochastic positional encodings converges to the
ground-truth directions: W's p-p block proportional to I (its other blocks 0) and V proportional
to [I_d, 0].  Within that family, W_pp = c I and V = v [I_d, 0], the model is

    s_i = c p_y^T p_i,  a = softmax(s),  f = v sum_i a_i x_i,

and its loss can be computed without drawing any x: the attention depends on the positions and y
only, and x is independent of both, so with b_i = 1[i in y] / q

    E||f - t||^2 = d E[sum_i (v a_i - b_i)^2],   normalized loss = q E[sum_i (v a_i - b_i)^2].

The best v is E[a . b] / E[||a||^2] and leaves  1 - E[m_y]^2 / (q E[||a||^2]),  with m_y the
attention mass on y.  ``oracle_loss`` estimates it by Monte Carlo over fresh positions (uniform on
the sphere, a summed or mean query) and minimizes over a grid of c.  For q <= 2 the selected tokens
always score equally, so the loss tends to 0 as c grows; for q >= 3 the cross terms p_j^T p_k inside
y leave a floor that shrinks as d_e grows (docs/paper.md).
"""

from __future__ import annotations

import math

import torch

from stsq.core.experiment import DEFAULTS, LOSS
from stsq.core.seeds import derive_seed, generator
from stsq.sts.positions import pooled_query, stochastic_positions

# Scales c of W_pp = c I searched: 0 (uniform attention) to 10^4 (hard selection), log-spaced.
SCALES = [0.0] + [10 ** (k / 8) for k in range(-8, 33)]
ORACLE_SAMPLES = DEFAULTS["oracle_samples"]


BLOCKS = 8  # the samples are drawn in this many blocks; their spread gives the standard error


def family_moments(q: int, N: int, d_e: int, scales, *, n: int = ORACLE_SAMPLES, seed: int = 0,
                   query: str = DEFAULTS["query"], device="cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """Per block of samples, E[m_y] and E[||a||^2] of the family's attention at every scale c:
    two [BLOCKS, scales] tensors (Monte Carlo, float64).

    The q selected positions are the first q (the positions are i.i.d., so which ones does not matter).
    Drawn on ``device`` (on a GPU from its generator: the same law, other numbers than on the CPU).
    """
    g = generator(derive_seed(seed, "oracle", q, N, d_e), device)
    c = torch.tensor(list(scales), dtype=torch.float64, device=device)
    per_block = max(1, n // BLOCKS)
    chunk = max(1, min(per_block, (1 << 22) // (len(c) * N), (1 << 24) // (N * d_e)))
    mass, sq = (torch.zeros(BLOCKS, len(c), dtype=torch.float64, device=device) for _ in range(2))
    for k in range(BLOCKS):
        done = 0
        while done < per_block:
            b = min(chunk, per_block - done)
            P = stochastic_positions(b, N, d_e, g)  # [b, N, d_e]
            p_y = pooled_query(P[:, :q].sum(1), query, q)
            s = torch.einsum("bk,bnk->bn", p_y, P).double()  # p_y^T p_i
            a = torch.softmax(c[:, None, None] * s[None], dim=-1)  # [scales, b, N]
            mass[k] += a[..., :q].sum(-1).sum(-1)
            sq[k] += a.pow(2).sum(-1).sum(-1)
            done += b
    return mass / per_block, sq / per_block


def family_loss(q: int, mass: torch.Tensor, sq: torch.Tensor) -> torch.Tensor:
    """The normalized loss at the best v for each scale: 1 - E[m_y]^2 / (q E[||a||^2])."""
    return 1.0 - mass.pow(2) / (q * sq)


def oracle_loss(q: int, N: int, d_e: int, *, n: int = ORACLE_SAMPLES, seed: int = 0,
                query: str = DEFAULTS["query"], scales=SCALES, device="cpu") -> dict[str, float]:
    """The best normalized loss of the ground-truth family at length N with d_e-dimensional stochastic
    encodings: {"normalized_loss", "c", "v", "standard_error"} (c, v the best scale and value weight)."""
    mass, sq = family_moments(q, N, d_e, scales, n=n, seed=seed, query=query, device=device)
    return _best(q, mass, sq, scales)


def _best(q, mass, sq, scales) -> dict[str, float]:
    losses = family_loss(q, mass.mean(0), sq.mean(0))
    k = int(torch.argmin(losses))
    per_block = family_loss(q, mass[:, k], sq[:, k])  # the loss at the chosen c, block by block
    se = float(per_block.std()) / math.sqrt(BLOCKS)
    return {LOSS: max(0.0, float(losses[k])), "c": float(scales[k]),
            "v": float(mass[:, k].mean() / (q * sq[:, k].mean())), "standard_error": se}


def oracle_rows(q: int, N: int, d_e: int, eval_lengths, *, n: int = ORACLE_SAMPLES, seed: int = 0,
                query: str = DEFAULTS["query"], device="cpu") -> list[dict]:
    """The oracle (the family's best loss, c and v fitted at each N') at every N' of ``eval_lengths``,
    for transformers trained at (q, N) with d_e (stsq.core.experiment.ORACLE_COLUMNS; any d: the loss does not
    depend on it)."""
    return [{"q": q, "N": N, "width": d_e, "N_eval": int(L),
             **oracle_loss(q, int(L), d_e, n=n, seed=seed, query=query, device=device), "samples": n}
            for L in eval_lengths]


def projection_loss(q: int, N: int, d_e: int, c: float, v: float, *, n: int = ORACLE_SAMPLES, seed: int = 0,
                    query: str = DEFAULTS["query"], device="cpu") -> float:
    """The loss at length N of the family's model with scale c and value weight v (W_pp = c I, V = v [I, 0]):
    q v^2 E||a||^2 - 2 v E[m_y] + 1.  With a trained model's own c and v (``Transformer.family_scale``)
    it is what the ground-truth directions at the model's training progress score at N."""
    mass, sq = family_moments(q, N, d_e, [c], n=n, seed=seed, query=query, device=device)
    return max(0.0, float(q * v * v * sq.mean() - 2 * v * mass.mean() + 1))
