"""Tensor files: atomic ``torch.save`` and ``weights_only=True`` loads.

A file carrying a pickled object that would run code is refused by
``weights_only=True``; any unreadable file raises ``CorruptFileError`` naming it.
"""

from __future__ import annotations

import io
import os

import torch

from .files import CorruptFileError, atomic_write_bytes


def save_tensors(obj, path: str | os.PathLike) -> None:
    """``torch.save`` ``obj`` (tensors, numbers, strings, lists, dicts) atomically."""
    buf = io.BytesIO()
    torch.save(obj, buf)
    atomic_write_bytes(path, buf.getvalue())


def load_tensors(path: str | os.PathLike, what: str = "file"):
    """Load with ``weights_only=True``; any failure is a ``CorruptFileError`` naming ``path``."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise
    except Exception as e:  # truncated zip, foreign pickle, wrong format ...
        text = str(e).strip()
        first = text.splitlines()[0] if text else type(e).__name__
        raise CorruptFileError(
            f"{path}: cannot be loaded as a {what} ({type(e).__name__}: {first}). "
            "Delete it and rerun to regenerate it."
        ) from None
