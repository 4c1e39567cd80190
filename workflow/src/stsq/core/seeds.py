"""Derived seeds: every random stream of a run comes from one base seed and a name.

``derive_seed(0, "train", "q=2", "N=32")`` is stable across processes, Python
versions and platforms (it hashes the text, it does not use ``hash()``).
"""

from __future__ import annotations

import hashlib

import torch


def derive_seed(base_seed: int, *names: object) -> int:
    """A 63-bit seed for the stream named ``names`` under ``base_seed``."""
    text = "/".join([str(int(base_seed)), *map(str, names)])
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


GENERATOR = torch.Generator  # the class generator() makes (tests/fakecuda.py swaps in a stand-in device's)


def generator(seed: int, device: str | torch.device = "cpu") -> torch.Generator:
    """A ``torch.Generator`` on ``device`` seeded with ``seed``."""
    g = GENERATOR(device=device)
    g.manual_seed(int(seed))
    return g
