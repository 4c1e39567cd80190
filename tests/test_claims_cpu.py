"""The paper's claims at CPU scale (d = 16, N = 32, q = 2, d_e = 64, batch 256), with real training.

Each claim is checked for seeds 0, 1 and 2; the FCNs see as many samples as the
transformers (3000 steps x 256).  Measured values are printed (run with -s).
"""

import functools

import pytest
from stsq.data import make_eval_set, seed_streams
from stsq.evaluate import score
from stsq.theory import width_floor
from stsq.train import DEFAULT_LR, TrainSpec, train

pytestmark = pytest.mark.slow

d, N, q, D_E, STEPS = 16, 32, 2, 64, 3000
FCN_WIDTHS = (64, 256, 1024)


@functools.cache
def trained(arch, width, seed):
    spec = TrainSpec(arch=arch, q=q, N=N, d=d, width=width, seed=seed, steps=STEPS, lr=DEFAULT_LR[arch],
                     log_every=STEPS)
    return train(spec, eval_set(seed, N), log=lambda s: None).model


@functools.cache
def eval_set(seed, length):
    return make_eval_set(2048, length, q, d, seed_streams(q, N, d, seed)["eval_data"])


def loss(arch, width, seed, length):
    model = trained(arch, width, seed)
    value = score(model, eval_set(seed, length), seed_streams(q, N, d, seed)["eval_positions"])["normalized_loss"]
    print(f"\n[measured] {arch} width={width} seed={seed} N'={length}: normalized loss {value:.4f}")
    return value


def test_transformer_with_stochastic_pe_learns_sts_q(seed):
    assert loss("tf_stochastic", D_E, seed, N) < 0.02


def test_stochastic_pe_generalizes_to_4x_the_training_length(seed):
    assert loss("tf_stochastic", D_E, seed, 4 * N) < 0.1


def test_fixed_pe_fails_at_2x_the_training_length(seed):
    assert loss("tf_fixed", D_E, seed, N) < 0.02  # it does fit the training length
    assert loss("tf_fixed", D_E, seed, 2 * N) > 0.3


def test_best_fcn_does_not_learn_sts_q_with_the_transformers_samples(seed):
    assert min(loss("fcn", m, seed, N) for m in FCN_WIDTHS) > 0.5


@pytest.mark.parametrize("m", [64, 256])
def test_fcn_stays_above_the_width_floor(seed, m):
    floor = width_floor(N, d, q, m)
    print(f"\n[measured] width floor m={m}: {floor:.4f}")
    assert loss("fcn", m, seed, N) >= floor
