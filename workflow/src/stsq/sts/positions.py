"""Positional encodings p_i in R^{d_e}: one table of encodings, each a function and what it is
(docs/paper.md, "The transformer"; docs/extending.md adds one).

- stochastic: p_i i.i.d. uniform on the unit sphere S^{d_e-1}, drawn afresh for every sample of every
  batch (the paper's).
- fixed: one table of unit vectors per seed, the same for every sample.  Row i depends only on
  (seed, i), so the table extends to any length N' and its first N rows never change; rows beyond the
  training length N are never seen in training.
- learned: a trainable table (GPT-style absolute positions), initialized to the fixed table; at
  N' > N its rows beyond N are the fixed table's, never trained.
- sinusoidal: Vaswani et al.'s, PE(i, 2k) = sin(i / 10000^(2k / d_e)), PE(i, 2k + 1) = cos(...),
  scaled by sqrt(2 / d_e) to unit rows like the others.
- randomized: Ruoss et al. 2023's: the fixed table's first L rows, and each sample's N positions a
  sorted random subset of them (at training and at evaluation); no length above L.

Every function is called with the keywords batch_size, N, d_e, table_seed (the seed's table),
generator (for a draw per sample) and position_range (L), and returns [B, N, d_e] (a draw per sample)
or [N, d_e] (one table shared by the batch).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import torch

from stsq.core.seeds import derive_seed
from stsq.core.seeds import generator as make_generator


def pooled_query(total: torch.Tensor, query: str, q: int) -> torch.Tensor:
    """The query rule, in place: p_y from ``total``, the sum of the q selected positions p_j (j in y), as that
    sum ("sum") or its mean ("mean").  The rule is linear, so the chain rule through it (the gradient of p_y to
    a selected p_j) is the same map; the model's forward pass, its hand-written step and the oracle all use it."""
    return total.div_(q) if query == "mean" else total


FIXED_TABLE_BLOCK = 64  # rows drawn per generator, so any prefix of the table is stable


@dataclass(frozen=True)
class Encoding:
    """``draw``: the encoding's function.  ``shared``: it returns one [N, d_e] table for the whole batch,
    the same at every call (the model caches it per length).  ``trainable``: rows 0..N-1 of that table
    are parameters, initialized by ``draw``.  ``bounded``: only lengths up to the position range L."""

    draw: Callable[..., torch.Tensor]
    shared: bool
    trainable: bool = False
    bounded: bool = False


def unit_rows(t: torch.Tensor) -> torch.Tensor:
    """Normalize the last axis to unit length (Gaussian / norm = uniform on the sphere)."""
    return t / t.norm(dim=-1, keepdim=True)


def stochastic_positions(batch_size: int, N: int, d_e: int, generator: torch.Generator, table_seed: int = 0,
                         position_range: int = 0) -> torch.Tensor:
    """Fresh p_i ~ Unif(S^{d_e-1}) for every sample: [B, N, d_e]."""
    g = torch.randn(batch_size, N, d_e, generator=generator, device=generator.device)
    return unit_rows(g)


def fixed_positions(table_seed: int, N: int, d_e: int, device: str | torch.device = "cpu", batch_size: int = 1,
                    generator=None, position_range: int = 0) -> torch.Tensor:
    """Rows 0..N-1 of the fixed table for ``table_seed``: [N, d_e], unit rows.

    Drawn on the CPU in blocks of ``FIXED_TABLE_BLOCK`` rows, each block from its
    own derived seed, so the table is the same on every device and for every N.
    """
    blocks = []
    for b in range((N + FIXED_TABLE_BLOCK - 1) // FIXED_TABLE_BLOCK):
        g = make_generator(derive_seed(table_seed, "fixed_pe_block", b, d_e))
        blocks.append(torch.randn(FIXED_TABLE_BLOCK, d_e, generator=g))
    return unit_rows(torch.cat(blocks)[:N]).to(device)


def sinusoidal_positions(batch_size: int, N: int, d_e: int, table_seed: int = 0, generator=None,
                         position_range: int = 0) -> torch.Tensor:
    """Vaswani et al.'s sines and cosines at positions 0..N-1, [N, d_e], scaled to unit rows (an odd d_e
    ends with one sine)."""
    i = torch.arange(N, dtype=torch.float64).unsqueeze(1)
    freq = torch.pow(10000.0, -torch.arange(0, d_e, 2, dtype=torch.float64) / d_e)
    table = torch.zeros(N, d_e, dtype=torch.float64)
    table[:, 0::2] = torch.sin(i * freq)
    table[:, 1::2] = torch.cos(i * freq[: d_e // 2])
    return unit_rows(table).float()


def randomized_positions(batch_size: int, N: int, d_e: int, table_seed: int, generator: torch.Generator,
                         position_range: int) -> torch.Tensor:
    """Ruoss et al.'s randomized positions: per sample, N distinct rows of the fixed table's first
    ``position_range`` (L) rows, in increasing order: [B, N, d_e]."""
    L = position_range
    if N > L:
        raise ValueError(f"randomized positions take N' <= L = {L}, got {N}")
    table = _range_table(table_seed, L, d_e, str(generator.device))
    keys = torch.rand(batch_size, L, generator=generator, device=generator.device)
    rows = keys.topk(N, dim=1, sorted=False).indices.sort(dim=1).values
    return table[rows]


@functools.lru_cache(maxsize=8)
def _range_table(table_seed: int, L: int, d_e: int, device: str) -> torch.Tensor:
    return fixed_positions(table_seed, L, d_e, device)


ENCODINGS: dict[str, Encoding] = {
    "stochastic": Encoding(stochastic_positions, shared=False),
    "fixed": Encoding(fixed_positions, shared=True),
    "learned": Encoding(fixed_positions, shared=True, trainable=True),
    "sinusoidal": Encoding(sinusoidal_positions, shared=True),
    "randomized": Encoding(randomized_positions, shared=False, bounded=True),
    # a new encoding: one entry here (docs/extending.md)
}

