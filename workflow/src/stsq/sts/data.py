"""Seed manifests and the fixed evaluation sets of one (q, N, seed).

The manifest names every random stream derived from the seed (training data,
evaluation data per length, evaluation positional encodings, the fixed PE
table, model init) and the SHA-256 of each evaluation set file, so every arch
and width of a cell is trained and scored on the same data.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import torch

from stsq.core.checkpoint import load_tensors, save_tensors
from stsq.core.experiment import MANIFEST, eval_set_name, seed_dir
from stsq.core.files import CorruptFileError, atomic_write_text, sha256_of
from stsq.core.seeds import derive_seed, generator
from stsq.core.tasks import DEFAULT_TASK
from stsq.sts.task import sample_batch, target_of


def seed_streams(q: int, N: int, d: int, seed: int) -> dict[str, int]:
    """The derived seeds of one (q, N, d, seed)."""
    return {
        "train_data": derive_seed(seed, "train", q, N, d),
        "eval_data": derive_seed(seed, "eval", q, N, d),
        "eval_positions": derive_seed(seed, "eval_positions", q, N, d),
        "model": int(seed),
    }


def make_eval_set(n: int, N_eval: int, q: int, d: int, eval_seed: int, task: str = DEFAULT_TASK) -> dict:
    """n samples of ``task`` at length N_eval, from the stream ``eval_seed`` (independent per length)."""
    b = sample_batch(n, N_eval, q, d, generator(derive_seed(eval_seed, "length", N_eval)), task)
    return {"X": b.X, "y": b.y, "target": b.target}


def write_data(manifest_path: str | Path, *, q: int, N: int, d: int, seed: int, eval_lengths, n_eval: int,
               task: str = DEFAULT_TASK) -> dict:
    """Write the evaluation set of ``task`` at every length of ``eval_lengths`` (which includes N) beside
    ``manifest_path``, then the manifest of one (q, N, seed); return the manifest (it names a task other than
    STS_q)."""
    lengths = sorted({int(x) for x in eval_lengths})
    if N not in lengths or any(L % N for L in lengths):
        raise ValueError(f"eval_lengths {lengths} must be multiples of the training length N={N}, N included")
    out_dir = Path(manifest_path).parent
    streams = seed_streams(q, N, d, seed)
    files = {}
    for L in lengths:
        path = out_dir / eval_set_name(L // N)
        save_tensors(make_eval_set(n_eval, L, q, d, streams["eval_data"], task), path)
        files[str(L)] = {"file": path.name, "sha256": sha256_of(path)}
    manifest = {"q": q, "N": N, "d": d, "seed": seed, "n_eval": n_eval, "streams": streams, "eval_sets": files}
    if task != DEFAULT_TASK:
        manifest["task"] = task
    atomic_write_text(manifest_path, json.dumps(manifest, indent=1) + "\n")
    return manifest


def read_manifest(path: str | Path) -> dict:
    path = Path(path)
    try:
        m = json.loads(path.read_text())
        for key in ("q", "N", "d", "seed", "n_eval", "streams", "eval_sets"):
            m[key]
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise CorruptFileError(f"{path}: not a valid seed manifest ({type(e).__name__}: {e}); "
                               "delete it and rerun to regenerate it") from None
    return m


def seed_manifest(index_path: str | Path, seed: int, *, q: int, N: int, d: int) -> tuple[Path, dict]:
    """The folder and manifest of ``seed``, found through a (q, N)'s data index (stsq.core.files.write_data_index),
    checked against the SHA-256 the index holds and to be made for (q, N, d)."""
    index_path = Path(index_path)
    try:
        entries = json.loads(index_path.read_text())["manifests"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as e:
        raise CorruptFileError(f"{index_path}: not a data index ({type(e).__name__}: {e}); "
                               "delete it and rerun to regenerate it") from None
    wanted = (seed_dir(".", seed) / MANIFEST).as_posix()
    if wanted not in entries:
        raise CorruptFileError(f"{index_path}: lists no manifest of seed {seed}; delete it and rerun")
    path = index_path.parent / wanted
    if not path.exists() or sha256_of(path) != entries[wanted]:
        raise CorruptFileError(f"{path}: missing or changed since {index_path} was written; "
                               f"delete {index_path} and rerun")
    manifest = read_manifest(path)
    if (manifest["q"], manifest["N"], manifest["d"], manifest["seed"]) != (q, N, d, seed):
        raise CorruptFileError(f"{path}: made for q={manifest['q']} N={manifest['N']} d={manifest['d']} "
                               f"seed={manifest['seed']}, not q={q} N={N} d={d} seed={seed}")
    return path.parent, manifest


def rebuild_command(path) -> str:
    """The command that regenerates a file of the pipeline (run in the checkout)."""
    parts = Path(path).parts
    sweep = parts[parts.index("results") + 1] if "results" in parts[:-1] else None
    config = f" --config sweep={shlex.quote(sweep)}" if sweep else ""
    return f"rm -f {shlex.quote(str(path))} && snakemake --cores 1 {shlex.quote(str(path))}{config}"


def load_eval_set(data_dir: str | Path, N_eval: int, manifest: dict | None = None) -> dict[str, torch.Tensor]:
    """Load the evaluation set at N_eval and check it against the manifest (hash, shapes, target)."""
    data_dir = Path(data_dir)
    manifest = manifest or read_manifest(data_dir / MANIFEST)
    entry = manifest["eval_sets"].get(str(N_eval))
    if entry is None:
        raise CorruptFileError(f"{data_dir / MANIFEST}: has no evaluation set at N'={N_eval}")
    path = data_dir / entry["file"]
    if sha256_of(path) != entry["sha256"]:
        raise CorruptFileError(f"{path}: content does not match the SHA-256 in {data_dir / MANIFEST} "
                               f"(truncated or edited). Rebuild it with: {rebuild_command(path)}")
    s = load_tensors(path, "evaluation set")
    n, q, d = manifest["n_eval"], manifest["q"], manifest["d"]
    ok = (isinstance(s, dict) and s.get("X") is not None and tuple(s["X"].shape) == (n, N_eval, d)
          and tuple(s["y"].shape) == (n, q)
          and torch.equal(target_of(manifest.get("task", DEFAULT_TASK))(s["X"], s["y"]), s["target"]))
    if not ok:
        raise CorruptFileError(f"{path}: evaluation set fails its shape/target checks")
    return s
