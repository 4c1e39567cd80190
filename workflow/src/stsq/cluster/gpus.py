"""One GPU per concurrent job: a job that runs on a GPU claims a slot (a GPU, or a share of one) for its life.

Snakemake run locally hands out no GPU ids (snakemake/snakemake#281): ``--resources gpu=K`` only caps how
many jobs asking for ``gpu=1`` run at once, and every one of them would otherwise take ``cuda:0``.  So a job
whose device is ``auto`` picks its own (``pick_device``): one lock file per slot, ``gpu<i>-<k>.lock`` in
``lock_dir()`` for GPU i and share k < ``jobs_per_gpu()``, tried in the order that spreads the jobs over
the GPUs first (gpu0-0, gpu1-0, ..., then gpu0-1, ...).  The first file the job locks (``fcntl.flock``,
exclusive, not blocking) is its slot, held on an open file descriptor until the process ends: the kernel
releases it when the job ends, fails or is killed (SIGKILL included), so no stale lock is left behind.
With every slot taken, a job waits for one (a run given more GPU jobs than slots, or no ``--resources gpu``).

Settings (environment variables: they are the machine's, not the experiment's):

- ``STSQ_JOBS_PER_GPU``: jobs sharing one GPU (default 1); tiny cells can share, with
  ``--resources gpu=K*J`` on K GPUs.
- ``STSQ_FAKE_GPUS``: claim slots as if this many GPUs were present, and run on the CPU (the tests).
- ``STSQ_GPU_LOCK_DIR``: where the lock files live (default ``<tmp>/stsq-gpu-slots-<uid>``: one per
  machine and user).

Under Slurm (``SLURM_JOB_ID`` set) the scheduler gives each job its own GPUs in ``CUDA_VISIBLE_DEVICES``:
the slots stand aside and the job takes the first device it sees.  Outside Slurm, a ``CUDA_VISIBLE_DEVICES``
set by hand is honoured: its entries name the lock files, so two runs given the same GPU share its slots.

On a CUDA device ``pick_device`` also makes reruns bit-identical to each other (``deterministic``).
Only ``pick_device`` and ``deterministic`` import torch.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

FAKE_ENV = "STSQ_FAKE_GPUS"
JOBS_PER_GPU_ENV = "STSQ_JOBS_PER_GPU"
LOCK_DIR_ENV = "STSQ_GPU_LOCK_DIR"
POLL_S = 0.5  # how often a job waiting for a slot tries again
CUBLAS_WORKSPACE = ":4096:8"  # cuBLAS's deterministic workspace (8 buffers of 4 MiB per stream)

_HELD: list = []  # this process's slot files, open until it ends (the kernel then releases the locks)


@dataclass(frozen=True)
class Slot:
    gpu: int  # the device index the job uses (cuda:<gpu>)
    name: str  # the GPU's name in the lock file: its index, or its CUDA_VISIBLE_DEVICES entry
    share: int  # k < jobs_per_gpu
    path: Path

    def __str__(self):
        return f"gpu{self.name}-{self.share}"


def jobs_per_gpu() -> int:
    value = os.environ.get(JOBS_PER_GPU_ENV, "1")
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{JOBS_PER_GPU_ENV}={value!r}: expected a whole number of jobs per GPU, at least 1")
    return int(value)


def lock_dir() -> Path:
    return Path(os.environ.get(LOCK_DIR_ENV) or Path(tempfile.gettempdir()) / f"stsq-gpu-slots-{os.getuid()}")


def fake_gpus() -> int | None:
    """The fake device count of ``STSQ_FAKE_GPUS``, or None."""
    value = os.environ.get(FAKE_ENV)
    if not value:
        return None
    if not value.isdigit():
        raise ValueError(f"{FAKE_ENV}={value!r}: expected a number of GPUs")
    return int(value)


def under_slurm() -> bool:
    return bool(os.environ.get("SLURM_JOB_ID"))


def gpu_names(count: int) -> list[str]:
    """The names of ``count`` visible GPUs: their CUDA_VISIBLE_DEVICES entries where it is set, else 0..count-1."""
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    return visible[:count] if len(visible) >= count else [str(i) for i in range(count)]


def slot_order(names: list[str], per_gpu: int, folder: Path) -> list[Slot]:
    """Every slot, in the order tried: one job on each GPU before a second on any."""
    return [Slot(i, name, k, folder / f"gpu{name}-{k}.lock") for k in range(per_gpu) for i, name in enumerate(names)]


def claim(names: list[str], per_gpu: int | None = None, folder: Path | None = None, log=print,
          wait_s: float | None = None) -> Slot | None:
    """Lock the first free slot of ``names`` (held until this process ends); wait while none is free (at most
    ``wait_s`` seconds, then None; no limit by default)."""
    per_gpu = per_gpu or jobs_per_gpu()
    folder = folder or lock_dir()
    folder.mkdir(parents=True, exist_ok=True)
    slots = slot_order(names, per_gpu, folder)
    start, said = time.monotonic(), False
    while True:
        for slot in slots:
            fd = os.open(slot.path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            os.ftruncate(fd, 0)  # who holds it, for a person looking (the lock, not the text, is the claim)
            os.write(fd, f"pid {os.getpid()} since {time.time():.3f}\n".encode())
            _HELD.append(fd)
            return slot
        if not said:
            log(f"every GPU slot is taken ({len(slots)}: {len(names)} GPUs x {per_gpu} jobs, {folder}); "
                "waiting for one")
            said = True
        if wait_s is not None and time.monotonic() - start > wait_s:
            return None
        time.sleep(POLL_S)


def deterministic(device) -> None:
    """On a CUDA device, what makes a rerun bit-identical to itself: cuBLAS's fixed workspace and torch's
    deterministic algorithms (warning, not failing, where an operation has none).  Nothing on the CPU,
    whose numbers are already reproducible."""
    import torch
    if torch.device(device).type != "cuda":
        return
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)  # read when cuBLAS first starts
    torch.use_deterministic_algorithms(True, warn_only=True)


def pick_device(requested: str = "auto", log=print):
    """The job's torch device: ``requested`` as given, or for ``auto`` a GPU slot of its own (module
    docstring), or the CPU where there is no GPU.  Says in ``log`` which device and slot it took."""
    import torch
    if requested != "auto":
        device = torch.device(requested)
        log(f"device {device} (as asked)")
    elif under_slurm():
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        log(f"device {device}: under Slurm (job {os.environ['SLURM_JOB_ID']}, CUDA_VISIBLE_DEVICES="
            f"{os.environ.get('CUDA_VISIBLE_DEVICES', '')!r}), no GPU slot claimed")
    else:
        fake = fake_gpus()
        count = fake if fake is not None else torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            device = torch.device("cpu")
            log("device cpu: no GPU")
        else:
            slot = claim(gpu_names(count), log=log)
            device = torch.device("cpu") if fake is not None else torch.device("cuda", slot.gpu)
            log(f"GPU slot {slot} claimed at {time.time():.3f} ({slot.path}; {count} GPUs x {jobs_per_gpu()} "
                f"jobs): device {device}" + (f" (fake GPUs, {FAKE_ENV}={fake}: running on the CPU)" if fake else ""))
    deterministic(device)
    return device
