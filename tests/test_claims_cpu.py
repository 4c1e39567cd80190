"""The paper's claims at the `cpu` sweep's scale (read from config.yaml, as `make run` trains it),
with real training: each claim of stsq.experiment, with its threshold, for every seed of the sweep.

Measured values are printed (run with -s).
"""

import functools

import pytest
import yaml
from conftest import ROOT
from stsq import experiment as ex
from stsq.data import make_eval_set, seed_streams
from stsq.evaluate import score
from stsq.theory import width_floor
from stsq.train import TrainSpec, train

pytestmark = pytest.mark.slow

CPU = yaml.safe_load((ROOT / "config.yaml").read_text())["sweeps"]["cpu"]
d, q, N = CPU["d"], max(CPU["q"]), max(CPU["N"])
SEEDS = CPU["seeds"]
N_EVAL = 2048  # more than the sweep's n_eval: a stricter check of the same claims


def width(arch):
    return max(CPU["archs"][arch]["widths"])


@functools.cache
def trained(arch, m, seed):
    a = CPU["archs"][arch]
    spec = TrainSpec(arch=arch, q=q, N=N, d=d, width=m, seed=seed, steps=a["steps"], lr=a["lr"],
                     batch_size=CPU["batch_size"], query=CPU.get("query", ex.DEFAULTS["query"]), log_every=a["steps"])
    return train(spec, eval_set(seed, N), log=lambda s: None).model


@functools.cache
def eval_set(seed, length):
    return make_eval_set(N_EVAL, length, q, d, seed_streams(q, N, d, seed)["eval_data"])


def loss(arch, m, seed, length):
    value = score(trained(arch, m, seed), eval_set(seed, length),
                  seed_streams(q, N, d, seed)["eval_positions"])[ex.LOSS]
    print(f"\n[measured] {arch} width={m} seed={seed} N'={length}: normalized loss {value:.4f}")
    return value


def holds(value, op, threshold):
    return value < threshold if op == "<" else value > threshold


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed{s}")
@pytest.mark.parametrize("claim", ex.LOSS_CLAIMS, ids=lambda c: c.statement)
def test_transformer_claim(claim, seed):
    assert holds(loss(claim.arch, width(claim.arch), seed, claim.factor * N), claim.op, claim.threshold)


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed{s}")
def test_fixed_pe_does_fit_its_training_length(seed):
    assert loss(ex.FIXED, width(ex.FIXED), seed, N) < 0.02


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed{s}")
def test_best_fcn_does_not_learn_sts_q_with_the_sweeps_samples(seed):
    c = ex.FCN_FAILS
    best = min(loss(c.arch, m, seed, N) for m in CPU["archs"][c.arch]["widths"])
    assert holds(best, c.op, c.threshold)


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed{s}")
@pytest.mark.parametrize("m", CPU["archs"][ex.FCN_ARCH]["widths"])
def test_fcn_stays_above_the_width_floor(seed, m):
    floor = width_floor(N, d, q, m)
    print(f"\n[measured] width floor m={m}: {floor:.4f}")
    assert loss(ex.FCN_ARCH, m, seed, N) >= floor
