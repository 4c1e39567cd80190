"""The hand-written training step of the transformer is the autograd step, only faster."""

import pytest
import torch
from stsq.experiment import ARCHS
from stsq.models import Transformer, build_model
from stsq.positions import ENCODINGS
from stsq.seeds import generator
from stsq.step import AutogradStep, FlatOptimizer, TransformerStep, make_step
from stsq.task import normalized_loss, sample_batch


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
    model = build_model("tf_stochastic", d=4, N=6, q=2, width=8, seed=0)
    step = make_step(model, "adam", 1e-2)
    assert isinstance(step, TransformerStep)
    g = generator(0)
    b = sample_batch(16, 6, 2, 4, g)
    step(b.X, b.y, model.positions(16, 6, g), b.target)
    step(b.X, b.y, model.positions(16, 6, g), b.target)
    assert model.W.abs().sum() > 0 and model.V.abs().sum() > 0
    assert dict(model.named_parameters()).keys() == {"W", "V"}


@pytest.mark.parametrize("arch", list(ARCHS))
def test_each_arch_takes_the_step_its_record_names(arch):
    model = build_model(arch, d=4, N=6, q=2, width=8, seed=0, position_range=12)
    expected = {"hand": TransformerStep, "autograd": AutogradStep}[ARCHS[arch].step]
    assert type(make_step(model, "adam", 1e-2)) is expected

