"""The hand-written training step of the transformer is the autograd step, only faster."""

import math

import pytest
import torch
from helpers import record
from stsq.core.experiment import ARCHS, archs_of
from stsq.core.seeds import generator
from stsq.sts.models import Transformer, build_model
from stsq.sts.positions import ENCODINGS
from stsq.sts.step import ADAM_CHUNK, AutogradStep, FCNStep, FlatOptimizer, TransformerStep, make_step
from stsq.sts.task import normalized_loss, sample_batch


def random_transformer(seed, encoding, query, d=6, d_e=12, N=10):
    model = Transformer(d, d_e, encoding, table_seed=seed, query=query, N=N, position_range=16).double()
    g = generator(seed)
    with torch.no_grad():  # away from W = V = 0, where most gradient terms vanish
        model.W.copy_(torch.randn(model.W.shape, generator=g, dtype=torch.float64))
        model.V.copy_(torch.randn(model.V.shape, generator=g, dtype=torch.float64))
    return model


def batch64(model, seed, B=48, N=10, q=3):
    g = generator(seed + 100)
    b = sample_batch(B, N, q, model.d, g)
    return b.X.double(), b.y, model.positions(B, N, g).double(), b.target.double()


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("q,query", [(1, "sum"), (3, "sum"), (2, "mean")])
def test_hand_written_gradient_equals_autograd(seed, encoding, q, query):
    """For every encoding: W's and V's gradient, and a trainable table's own (learned positions)."""
    model = random_transformer(seed, encoding, query)
    X, y, P, t = batch64(model, seed, q=q)
    f, _ = model(X, y, P)
    loss = normalized_loss(f, t, q)
    loss.backward()
    gW, gV = model.W.grad.clone(), model.V.grad.clone()
    gP = model.P.grad.clone() if ENCODINGS[encoding].trainable else None

    step = TransformerStep(model, "sgd", lr=0.0)
    cache, hand_loss = step.forward(X, y, P, t)
    step.backward(cache)
    assert hand_loss.item() == pytest.approx(loss.item(), rel=1e-12)
    assert torch.allclose(step.gW, gW, rtol=1e-10, atol=1e-12)
    assert torch.allclose(step.gV, gV, rtol=1e-10, atol=1e-12)
    assert step.gW.abs().max() > 1e-3 and step.gV.abs().max() > 1e-3  # the comparison is not 0 == 0
    if gP is not None:
        assert torch.allclose(step.gP, gP, rtol=1e-10, atol=1e-12)
        assert step.gP.abs().max() > 1e-3


def test_a_wrong_gradient_would_be_caught():
    """The comparison above can fail: dropping the softmax's centring term breaks it."""
    model = random_transformer(0, "stochastic", "sum")
    X, y, P, t = batch64(model, 0)
    f, _ = model(X, y, P)
    normalized_loss(f, t, 3).backward()
    step = TransformerStep(model, "sgd", lr=0.0)
    cache = list(step.forward(X, y, P, t)[0])
    cache[5] = torch.zeros_like(cache[5])  # zbar = 0: the backward then misses sum_i a_i da_i
    step.backward(tuple(cache))
    assert not torch.allclose(step.gW, model.W.grad, rtol=1e-6)


def test_flat_adam_is_torch_adam():
    g = generator(3)
    a = torch.randn(40, generator=g, dtype=torch.float64)
    b = a.clone().requires_grad_(True)
    flat = FlatOptimizer("adam", a, lr=1e-2)
    ref = torch.optim.Adam([b], lr=1e-2)
    for _ in range(50):
        grad = torch.randn(40, generator=g, dtype=torch.float64)
        flat.step(grad)
        b.grad = grad.clone()
        ref.step()
    assert torch.allclose(a, b.detach(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_hand_written_training_follows_autograd_training(encoding):
    """200 steps of Adam in float32, same data: the two losses agree to 1e-5 at every step, and the two
    trained models' outputs on a fresh batch to 1e-4.  (Weights are compared where the positions span
    R^{d_e}: sinusoidal rows span fewer directions, and in the others W gets only rounding noise, which
    Adam scales up to lr-sized steps the loss cannot see.)"""
    runs = []
    for make in (TransformerStep, AutogradStep):
        model = Transformer(16, 32, encoding, table_seed=5, N=16, position_range=40)
        step = make(model, "adam", 1e-2)
        g = generator(11)
        losses = []
        for _ in range(200):
            b = sample_batch(128, 16, 2, 16, g)
            losses.append(step(b.X, b.y, model.positions(128, 16, g), b.target))
        g = generator(12)
        b = sample_batch(256, 16, 2, 16, g)
        with torch.no_grad():
            f, _ = model(b.X, b.y, model.positions(256, 16, g))
        runs.append((torch.stack(losses), model.state_dict(), f))
    (l_hand, w_hand, f_hand), (l_auto, w_auto, f_auto) = runs
    assert l_hand[-1] < 0.75 * l_hand[0]  # it trained (sinusoidal rows are far from orthogonal: the slowest)
    assert torch.allclose(l_hand, l_auto, atol=1e-5, rtol=0)
    assert torch.allclose(f_hand, f_auto, atol=1e-4)
    if encoding != "sinusoidal":
        assert all(torch.allclose(w_hand[k], w_auto[k], atol=1e-4) for k in w_hand)


def test_the_step_updates_the_modules_own_parameters():
    cell = record("tf_stochastic", d=4, N=6, q=2, width=8, optimizer="adam")
    model = build_model(cell, 0)
    step = make_step(model, cell)
    assert isinstance(step, TransformerStep)
    g = generator(0)
    b = sample_batch(16, 6, 2, 4, g)
    step(b.X, b.y, model.positions(16, 6, g), b.target)
    step(b.X, b.y, model.positions(16, 6, g), b.target)
    assert model.W.abs().sum() > 0 and model.V.abs().sum() > 0
    assert dict(model.named_parameters()).keys() == {"W", "V"}


@pytest.mark.parametrize("arch", archs_of())  # the retrieval task's: autograd, tests/test_retrieval.py
def test_each_arch_takes_the_step_its_record_names(arch):
    cell = record(arch, d=4, N=6, q=2, width=8, position_range=12)
    expected = {"hand": TransformerStep, "autograd": AutogradStep, "fcn": FCNStep}[ARCHS[arch].step]
    assert type(make_step(build_model(cell, 0), cell)) is expected



def _one_pass_adam(p, m, v, grad, t, lr, b1=0.9, b2=0.999, eps=1e-8):
    """FlatOptimizer's Adam before it went chunk by chunk: five passes over the whole vectors."""
    m.lerp_(grad, 1 - b1)
    v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
    denom = v.sqrt().div_(math.sqrt(1 - b2 ** t)).add_(eps)
    p.addcdiv_(m, denom, value=-lr / (1 - b1 ** t))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n", [1000, 2 * ADAM_CHUNK + 37])
def test_chunked_adam_is_the_one_pass_update_bit_for_bit(n, threads):
    """Chunk by chunk (several chunks and a ragged end, or one short vector), the same bits as the whole
    vectors at once, at every step; float32 as in training."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        g = generator(7)
        a = torch.randn(n, generator=g)
        ref = [a.clone(), torch.zeros(n), torch.zeros(n)]
        opt = FlatOptimizer("adam", a, lr=3e-3)
        for t in range(1, 6):
            grad = torch.randn(n, generator=g) * 10.0 ** (t - 3)
            opt.step(grad)
            _one_pass_adam(*ref, grad, t, 3e-3)
            assert torch.equal(a, ref[0]) and torch.equal(opt.exp_avg, ref[1]) and torch.equal(opt.exp_avg_sq, ref[2])
        assert not torch.equal(a, torch.randn(n, generator=generator(7)))  # it moved
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("layers,N,d,m", [(1, 16, 8, 512), (1, 8, 4, 48), (2, 8, 4, 40)])
def test_fcn_step_is_the_autograd_step_bit_for_bit(layers, N, d, m):
    """The FCN's step (its first layer's gradient written in place) trains the same bits as autograd's."""
    runs = []
    for make in (AutogradStep, FCNStep):
        model = build_model(record("fcn", d=d, N=N, q=2, width=m, layers=layers), 3)
        step = make(model, "adam", 2e-3)
        g = generator(4)
        losses = []
        for _ in range(25):
            b = sample_batch(64, N, 2, d, g)
            losses.append(step(b.X, b.y, None, b.target))
        runs.append((torch.stack(losses), {k: v.clone() for k, v in model.state_dict().items()}, step.grad.clone()))
    (l_a, w_a, g_a), (l_f, w_f, g_f) = runs
    assert l_f[-5:].mean() < l_f[:5].mean()  # it trained
    assert torch.equal(l_a, l_f) and torch.equal(g_a, g_f)
    assert all(torch.equal(w_a[k], w_f[k]) for k in w_a)
