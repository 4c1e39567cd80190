"""Positional encodings p_i in R^{d_e} (docs/paper.md, "The transformer").

- Stochastic: p_i i.i.d. uniform on the unit sphere S^{d_e-1}, drawn afresh for
  every sample of every batch.
- Fixed: one table of unit vectors per seed, the same for every sample.  Row i
  depends only on (seed, i), so the table extends to any length N' and its
  first N rows never change; rows beyond the training length N are never seen
  in training.
"""

from __future__ import annotations

import torch

from .seeds import derive_seed, generator

FIXED_TABLE_BLOCK = 64  # rows drawn per generator, so any prefix of the table is stable


def unit_rows(t: torch.Tensor) -> torch.Tensor:
    """Normalize the last axis to unit length (Gaussian / norm = uniform on the sphere)."""
    return t / t.norm(dim=-1, keepdim=True)


def stochastic_positions(batch_size: int, N: int, d_e: int, generator: torch.Generator) -> torch.Tensor:
    """Fresh p_i ~ Unif(S^{d_e-1}) for every sample: [B, N, d_e]."""
    g = torch.randn(batch_size, N, d_e, generator=generator, device=generator.device)
    return unit_rows(g)


def fixed_positions(table_seed: int, N: int, d_e: int, device: str | torch.device = "cpu") -> torch.Tensor:
    """Rows 0..N-1 of the fixed table for ``table_seed``: [N, d_e], unit rows.

    Drawn on the CPU in blocks of ``FIXED_TABLE_BLOCK`` rows, each block from its
    own derived seed, so the table is the same on every device and for every N.
    """
    blocks = []
    for b in range((N + FIXED_TABLE_BLOCK - 1) // FIXED_TABLE_BLOCK):
        g = generator(derive_seed(table_seed, "fixed_pe_block", b, d_e))
        blocks.append(torch.randn(FIXED_TABLE_BLOCK, d_e, generator=g))
    return unit_rows(torch.cat(blocks)[:N]).to(device)
