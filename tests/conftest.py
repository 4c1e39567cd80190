import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "src"))

SEEDS = [0, 1, 2]
# The test Slurm cluster (tests/slurm/cluster.sh): started by tests/test_slurm.py, kept up until the whole session
# ends.  Snakemake loads the Slurm executor plugin at every start, and the plugin asks `scontrol show config`, which
# waits 10 s for a controller that is not there: stopped when test_slurm.py ends, it would cost every later
# Snakemake call of the other workers those 10 s.
SLURM_CLUSTER = ROOT / "tests" / "slurm" / "cluster.sh"
SLURM_STARTED = Path("/tmp/slurm-ci/started-by-tests")


def session_owner() -> str:
    """The process that runs this pytest session: the controlling process under xdist (a worker's parent), else this
    one.  The cluster's marker names it, so that a second session on the machine never stops the first's cluster."""
    return str(os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid())


def pytest_sessionfinish(session):
    """Stop the test cluster this session started, once every worker is done (in the controlling process; without
    xdist, in the one)."""
    if hasattr(session.config, "workerinput") or not SLURM_STARTED.exists():
        return
    if SLURM_STARTED.read_text().strip() != str(os.getpid()):
        return
    subprocess.run(["timeout", "120", str(SLURM_CLUSTER), "stop"], capture_output=True)
    SLURM_STARTED.unlink(missing_ok=True)


def _shared_folder(tmp_path_factory) -> Path:
    """This session's folder that every xdist worker sees (its workers' common parent; without xdist, its own)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(autouse=True, scope="session")
def shared_code_hashes(tmp_path_factory):
    """One code-hash cache for the session (stsq.provenance.codehash.stage_hash, STSQ_CODEHASH_CACHE): the scratch
    copies of the workflow keep their files' times, so each state of the sources is hashed once, not once per
    copy; an edited copy has its own state, hashed anew."""
    os.environ["STSQ_CODEHASH_CACHE"] = str(_shared_folder(tmp_path_factory) / "codehash")
    yield


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    import torch
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def chromium_browser():
    """Headless Chromium, for the tests that open the report as a reader does: installed where it is missing and
    this is root with apt-get (CI), as the Slurm tests install Slurm; else those tests are skipped."""
    from browser import install_chromium
    exe = install_chromium()
    if exe is None:
        pytest.skip("no Chromium on this machine, and no root with apt-get to install it: the report is not opened")
    return exe


@pytest.fixture(params=SEEDS, ids=lambda s: f"seed{s}")
def seed(request):
    return request.param


# The longest test files first, longest first (minutes each, measured on 2 cores): with `-n 3 --dist loadfile
# --no-loadscope-reorder` (pyproject.toml) a worker takes the next file in this order as it frees up, so the short
# files fill the end of the run instead of a long one starting last.  The Slurm tests mostly wait on Slurm: their
# worker is the third, beside two that compute.
LONGEST_FIRST = ("test_claims_cpu.py", "test_slurm.py", "test_workflow.py", "test_robustness.py", "test_float_paths.py",
                 "test_report.py",
                 "test_retrieval.py", "test_extending.py", "test_separations.py", "test_readme.py", "test_codehash.py",
                 "test_claims.py", "test_gpu_check.py", "test_cluster.py", "test_train.py", "test_pilot.py")


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

    shared = _shared_folder(tmp_path_factory)
    work, done = shared / "finished-tiny" / "wf", shared / "finished-tiny" / "done"
    with open(shared / "finished-tiny.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            copy_workflow(work)
            snakemake(work, "--cores", "2", "--configfile", TINY)
            done.touch()
    return work
