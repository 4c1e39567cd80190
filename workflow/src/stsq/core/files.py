"""Atomic writes and the error for damaged files (no torch: the analysis side uses it too).

Every file the pipeline produces is written to a temporary name in the same
folder, flushed, and renamed into place, so a killed job never leaves a
partial file under a final name.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import tempfile
from pathlib import Path

from stsq.core.errors import CorruptFileError

__all__ = ["CorruptFileError", "atomic_write_bytes", "atomic_write_text", "sha256_of", "write_data_index", "write_rows"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file and ``os.replace``.  The file gets the mode a plain
    ``open`` would give it (0666 less the umask), not the temporary file's 0600: with umask 002 the
    group can read what the pipeline writes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def sha256_of(path: str | os.PathLike) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_data_index(manifests: list[str], path: str | os.PathLike, *, q: int, N: int) -> None:
    """The index of one (q, N)'s seed manifests: each one's path (relative to the index) and SHA-256."""
    folder = Path(path).parent
    entries = {os.path.relpath(m, folder): sha256_of(m) for m in manifests}
    atomic_write_text(path, json.dumps({"q": q, "N": N, "manifests": entries}, indent=1) + "\n")


def write_rows(path, rows: list[dict], columns: list[str]) -> None:
    """Rows as CSV (floats at full precision, None as empty), written atomically."""
    def cell(v):
        return "" if v is None else repr(v) if isinstance(v, float) else v

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n", extrasaction="raise")
    w.writeheader()
    for r in rows:
        w.writerow({k: cell(r.get(k)) for k in columns})
    atomic_write_text(path, buf.getvalue())
