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


LONGEST_FIRST = ("test_claims_cpu.py", "test_slurm.py")  # minutes each: started first, one per xdist worker


def pytest_collection_modifyitems(items):
    """The two longest test files first (stable otherwise), so that with `-n 3 --dist loadfile
    --no-loadscope-reorder` (pyproject.toml) each starts at once on its own worker and the short files fill
    the time around them on the third."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
