"""q-sparse token retrieval (qSTR): the second task (docs/retrieval.md; its record: stsq.core.tasks.TASKS["qstr"]).

Every position i of a sequence points to q positions t_i1..t_iq of the same sequence, and its target is what it
retrieves there: y_i = sum_k <x_{t_ik}, u_k>.  X = (x_1..x_N), x_j ~ N(0, I_d) i.i.d.  The directions u_1..u_q are
orthonormal, drawn once per seed.  At q = 1 this is Mousavi-Hosseini et al.'s 1STR; at q = 2, with u_1 orthogonal
to u_2, it is this project's extension (docs/retrieval.md says why one attention head cannot represent it).

- ``general`` mode: every t_ik is uniform on [N], independently for every position.
- ``simple`` mode: one t_k per sample and k, shared by every position of the sequence.

Each token the models read is [x_i; e_i; e_{t_i1}; ..; e_{t_iq}]: the token, its own position code and the codes
of the positions it points to.  The codes are either the authors' ``sign`` codes (entries +-1/sqrt(d_e), one table
per seed and N) or ``stochastic`` unit vectors drawn afresh for every sample (this project's stochastic positions).
d_e = floor(5 ln N) by default, the authors' choice.

The loss is the mean squared error per position over E[y_i^2] = q (the task record's ``power``): predicting 0 scores
1, the trivial loss.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from stsq.core.seeds import derive_seed
from stsq.core.seeds import generator as make_generator
from stsq.retrieval.cells import code_width  # noqa: F401  the codes' width, torch-free
from stsq.sts.positions import unit_rows

MODES = ("general", "simple")
CODES = ("sign", "stochastic")


def sign_codes(N: int, d_e: int, table_seed: int) -> torch.Tensor:
    """One table of N codes with entries +-1/sqrt(d_e), each sign a fair coin: [N, d_e] (CPU, any device's run)."""
    g = make_generator(derive_seed(table_seed, "qstr_codes", N, d_e))
    return (torch.randint(0, 2, (N, d_e), generator=g).float() * 2 - 1) / math.sqrt(d_e)


def stochastic_codes(batch_size: int, N: int, d_e: int, generator: torch.Generator) -> torch.Tensor:
    """Fresh unit vectors for every sample: [B, N, d_e]."""
    return unit_rows(torch.randn(batch_size, N, d_e, generator=generator, device=generator.device))


def directions(d: int, q: int, seed: int) -> torch.Tensor:
    """u_1..u_q, orthonormal in R^d, one set per seed: [q, d] (the QR factor of a Gaussian matrix)."""
    if q > d:
        raise ValueError(f"q = {q} orthonormal directions need d >= q; got d = {d}")
    g = make_generator(derive_seed(seed, "qstr_directions", d, q))
    Q, R = torch.linalg.qr(torch.randn(d, q, generator=g, dtype=torch.float64))
    return (Q * torch.sign(torch.diagonal(R))).T.float().contiguous()


def pointers(batch_size: int, N: int, q: int, mode: str, generator: torch.Generator) -> torch.Tensor:
    """t [B, N, q]: where each position points; ``simple``: one target per sample and k, shared by all positions."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    dev = generator.device
    if mode == "general":
        return torch.randint(0, N, (batch_size, N, q), generator=generator, device=dev)
    return torch.randint(0, N, (batch_size, 1, q), generator=generator, device=dev).expand(batch_size, N, q)


def retrieved(X: torch.Tensor, t: torch.Tensor, U: torch.Tensor) -> torch.Tensor:
    """y_i = sum_k <x_{t_ik}, u_k>: X [B, N, d], t [B, N, q], U [q, d] -> [B, N]."""
    B, N, q = t.shape
    reads = X @ U.T  # [B, N, q]: <x_j, u_k>
    return reads.gather(1, t).sum(dim=-1)


@dataclass
class Batch:
    """One batch of qSTR: ``X`` [B, N, d], ``t`` [B, N, q] pointers, ``target`` [B, N]."""

    X: torch.Tensor
    t: torch.Tensor
    target: torch.Tensor


def sample_batch(batch_size: int, N: int, q: int, d: int, mode: str, U: torch.Tensor,
                 generator: torch.Generator) -> Batch:
    """Draw (X, t, y) on the generator's device."""
    X = torch.randn(batch_size, N, d, generator=generator, device=generator.device)
    t = pointers(batch_size, N, q, mode, generator)
    return Batch(X=X, t=t, target=retrieved(X, t, U.to(X.device)))


def tokens(X: torch.Tensor, t: torch.Tensor, codes: torch.Tensor) -> torch.Tensor:
    """Z [B, N, d + (1 + q) d_e]: each token, its own code and the codes it points to.  ``codes`` is one table
    [N, d_e] or one per sample [B, N, d_e]."""
    B, N, q = t.shape
    E = codes.expand(B, N, codes.shape[-1]) if codes.dim() == 2 else codes
    pointed = [E.gather(1, t[:, :, k:k + 1].expand(B, N, E.shape[-1])) for k in range(q)]
    return torch.cat([X, E, *pointed], dim=-1)
