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
