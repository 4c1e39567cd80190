"""The FCN width floor: the closed form equals the brute-force eigenvalue computation."""

import math

import pytest
from stsq.core.sweep import cell_lr
from stsq.sts.theory import width_floor, width_floor_exact, width_needed


@pytest.mark.parametrize("N,d,q", [(4, 2, 1), (5, 3, 2), (6, 2, 3), (6, 3, 2), (7, 2, 4)])
def test_width_floor_formula_equals_the_exact_eigenvalue_computation(N, d, q):
    for m in range(0, N * d + 3):
        assert width_floor(N, d, q, m) == pytest.approx(width_floor_exact(N, d, q, m), abs=1e-10), m


def test_width_floor_is_one_at_zero_width_and_zero_at_N_d():
    assert width_floor(32, 16, 2, 0) == 1.0
    assert width_floor(32, 16, 2, 32 * 16) == pytest.approx(0.0, abs=1e-12)


def test_width_floor_at_the_cpu_sweep():
    # N = 32, d = 16, q = 2: m = 64 and 256 keep most of the loss, as the claims table states.
    assert width_floor(32, 16, 2, 64) == pytest.approx(1 - 2 / 32 - 48 * 30 / (16 * 32 * 31))
    assert 0.8 < width_floor(32, 16, 2, 64) < 0.9
    assert 0.4 < width_floor(32, 16, 2, 256) < 0.5


@pytest.mark.parametrize("N,d,q", [(4, 16, 2), (16, 16, 2), (32, 16, 4), (8, 4, 1)])
@pytest.mark.parametrize("eps", [0.0, 0.1, 0.5])
def test_width_needed_is_the_floor_solved_for_the_width(N, d, q, eps):
    m = width_needed(N, d, q, eps)
    assert width_floor(N, d, q, math.ceil(m - 1e-9)) <= eps + 1e-12
    if m >= 1:
        assert width_floor(N, d, q, math.floor(m - 1e-9)) > eps - 1e-12 or math.floor(m) == m
    assert width_needed(N, d, q, 0.0) == pytest.approx(N * d)


def test_the_learning_rate_shrinks_above_the_reference_width():
    arch = {"lr": 0.02, "lr_width_exponent": 0.75, "lr_reference_width": 64}
    assert cell_lr(arch, 16) == cell_lr(arch, 64) == 0.02
    assert cell_lr(arch, 1024) == pytest.approx(0.0025)
    assert cell_lr({"lr": 0.01}, 1024) == 0.01  # no exponent: the same lr at every width
