import fcntl
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "src"))

SEEDS = [0, 1, 2]


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    import torch
    torch.set_num_threads(1)


@pytest.fixture(params=SEEDS, ids=lambda s: f"seed{s}")
def seed(request):
    return request.param


# The longest test files first, longest first (minutes each, measured on 2 cores): with `-n 3 --dist loadfile
# --no-loadscope-reorder` (pyproject.toml) a worker takes the next file in this order as it frees up, so the short
# files fill the end of the run instead of a long one starting last.  The Slurm tests mostly wait on Slurm: their
# worker is the third, beside two that compute.
LONGEST_FIRST = ("test_claims_cpu.py", "test_slurm.py", "test_workflow.py", "test_robustness.py", "test_report.py",
                 "test_retrieval.py", "test_extending.py", "test_readme.py", "test_codehash.py", "test_claims.py",
                 "test_gpu_check.py", "test_cluster.py", "test_train.py", "test_pilot.py")


def pytest_collection_modifyitems(items):
    """The test files in the order of LONGEST_FIRST (stable otherwise, the rest after them)."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture(scope="session")
def finished_tiny(tmp_path_factory):
    """The tiny sweep (tests/configs/tiny.yaml), run once for the whole session and shared by the xdist workers
    (the first to ask runs it, the others wait on its lock): a finished run that tests copy (helpers.copy_finished)
    and never change in place."""
    from helpers import TINY, copy_workflow, snakemake

    shared = tmp_path_factory.getbasetemp()  # this session's (under xdist, this worker's: the workers share its parent)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    work, done = shared / "finished-tiny" / "wf", shared / "finished-tiny" / "done"
    with open(shared / "finished-tiny.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            copy_workflow(work)
            snakemake(work, "--cores", "2", "--configfile", TINY)
            done.touch()
    return work
