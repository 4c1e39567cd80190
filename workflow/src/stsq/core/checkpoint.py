"""Tensor files: atomic ``torch.save`` and ``weights_only=True`` loads.

A file carrying a pickled object that would run code is refused by
``weights_only=True``; any unreadable file raises ``CorruptFileError`` naming it.
"""

from __future__ import annotations

import io
import os

import torch

from stsq.core.files import CorruptFileError, atomic_write_bytes


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


def resume_point(checkpoint, label: str, *, fingerprint, code: str, device: str, fmt, log, kind: str = "training"):
    """The checkpoint's contents where it was written for this ``fingerprint`` by this ``code``
    (stsq.provenance.codehash) on this kind of ``device`` in this ``fmt``; else None (a fresh start), the reason said
    in the log.  A file that is not a checkpoint raises ``CorruptFileError`` naming it.  Training
    (stsq.width.train) and the samples measure (stsq.samples.run) resume through it."""
    from pathlib import Path

    from stsq.core.errors import CorruptFileError
    if checkpoint is None or not Path(checkpoint).exists():
        return None
    ck = load_tensors(checkpoint, "checkpoint")
    if not isinstance(ck, dict) or "fingerprint" not in ck:
        raise CorruptFileError(f"{checkpoint}: not a {kind} checkpoint; delete it to start over")
    if ck["fingerprint"] != fingerprint:
        log(f"{label} checkpoint {checkpoint} was written for another configuration; starting at step 0")
    elif ck.get("code") != code:
        log(f"{label} checkpoint {checkpoint} was written by other code (code {ck.get('code') or 'unrecorded'}, "
            f"this run's {code}: stsq.provenance.codehash); starting at step 0")
    elif ck.get("device", "cpu") != device:
        log(f"{label} checkpoint {checkpoint} was written on {ck['device']}, this run is on {device}; "
            "starting at step 0")
    elif ck.get("format") != fmt:
        log(f"{label} checkpoint {checkpoint} was written by an earlier version of the {kind} step; "
            "starting at step 0")
    else:
        return ck
    return None
