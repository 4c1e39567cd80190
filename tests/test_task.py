"""The task STS_q and the positional encodings are what docs/paper.md says."""

import itertools
import math

import pytest
import torch
from scipy.stats import chisquare
from stsq.core.seeds import generator
from stsq.sts.positions import fixed_positions, stochastic_positions
from stsq.sts.task import normalized_loss, random_subsets, sample_batch


def test_target_is_the_mean_of_the_selected_tokens(seed):
    b = sample_batch(64, 10, 3, 5, generator(seed))
    for i in range(64):
        expected = b.X[i, b.y[i]].mean(0)
        assert torch.allclose(b.target[i], expected)
        assert len(set(b.y[i].tolist())) == 3  # a subset: no repeated position


def test_q_subsets_are_uniform(seed):
    """Chi-square of the frequencies of all C(6, 2) = 15 subsets over 30000 draws."""
    N, q, n = 6, 2, 30000
    y = random_subsets(n, N, q, generator(seed)).sort(dim=1).values
    index = {s: k for k, s in enumerate(itertools.combinations(range(N), q))}
    counts = torch.zeros(len(index))
    for row in y.tolist():
        counts[index[tuple(row)]] += 1
    p = chisquare(counts.numpy()).pvalue
    assert p > 1e-3, f"subset frequencies are not uniform (p={p:.2g}): {counts.tolist()}"


def test_contents_are_standard_gaussian(seed):
    b = sample_batch(4096, 8, 2, 4, generator(seed))
    assert abs(float(b.X.mean())) < 0.02
    assert abs(float(b.X.var()) - 1) < 0.02


def test_predicting_zero_scores_one(seed):
    b = sample_batch(20000, 16, 2, 8, generator(seed))
    assert abs(float(normalized_loss(torch.zeros_like(b.target), b.target, 2)) - 1) < 0.03


def test_positional_encodings_are_unit_vectors(seed):
    P = stochastic_positions(32, 16, 64, generator(seed))
    assert torch.allclose(P.norm(dim=-1), torch.ones(32, 16), atol=1e-5)
    T = fixed_positions(seed, 300, 64)
    assert torch.allclose(T.norm(dim=-1), torch.ones(300), atol=1e-5)


def test_stochastic_encodings_are_fresh_for_every_sample(seed):
    g = generator(seed)
    P1, P2 = stochastic_positions(2, 8, 16, g), stochastic_positions(2, 8, 16, g)
    assert not torch.equal(P1[0], P1[1]) and not torch.equal(P1, P2)


def test_fixed_table_extends_without_changing_its_prefix(seed):
    """Rows 0..N-1 used in training are the same whatever the longest evaluation length."""
    short, long = fixed_positions(seed, 32, 64), fixed_positions(seed, 1024, 64)
    assert torch.equal(short, long[:32])
    assert not torch.equal(fixed_positions(seed, 32, 64), fixed_positions(seed + 1, 32, 64))


@pytest.mark.parametrize("N,q", [(32, 2), (128, 4)])
def test_sampling_is_deterministic(seed, N, q):
    a, b = sample_batch(8, N, q, 16, generator(seed)), sample_batch(8, N, q, 16, generator(seed))
    assert torch.equal(a.X, b.X) and torch.equal(a.y, b.y)


def test_rejects_q_outside_one_to_N():
    with pytest.raises(ValueError, match="q must be in"):
        random_subsets(4, 3, 4, generator(0))
    with pytest.raises(ValueError, match="q must be in"):
        random_subsets(4, 3, 0, generator(0))


def test_near_orthogonal_encodings_at_large_d_e(seed):
    """|p_i^T p_j| ~ 1/sqrt(d_e): the premise of the construction."""
    P = stochastic_positions(64, 32, 1024, generator(seed))
    G = P @ P.transpose(1, 2) - torch.eye(32)
    assert float(G.abs().max()) < 6 / math.sqrt(1024)
