"""The hand-written training step of the transformer is the autograd step, only faster."""

import pytest
import torch
from stsq.models import FCN, Transformer
from stsq.seeds import generator
from stsq.step import AutogradStep, FlatOptimizer, TransformerStep, make_step
from stsq.task import normalized_loss, sample_batch


def random_transformer(seed, encoding, query, d=6, d_e=12):
    model = Transformer(d, d_e, encoding, table_seed=seed, query=query).double()
    g = generator(seed)
    with torch.no_grad():  # away from W = V = 0, where most gradient terms vanish
        model.W.copy_(torch.randn(model.W.shape, generator=g, dtype=torch.float64))
        model.V.copy_(torch.randn(model.V.shape, generator=g, dtype=torch.float64))
    return model


def batch64(model, seed, B=48, N=10, q=3):
    g = generator(seed + 100)
    b = sample_batch(B, N, q, model.d, g)
    return b.X.double(), b.y, model.positions(B, N, g).double(), b.target.double()


@pytest.mark.parametrize("encoding", ["stochastic", "fixed"])
@pytest.mark.parametrize("q,query", [(1, "sum"), (3, "sum"), (2, "mean")])
def test_hand_written_gradient_equals_autograd(seed, encoding, q, query):
    model = random_transformer(seed, encoding, query)
    X, y, P, t = batch64(model, seed, q=q)
    f, _ = model(X, y, P)
    loss = normalized_loss(f, t, q)
    loss.backward()
    gW, gV = model.W.grad.clone(), model.V.grad.clone()

    step = TransformerStep(model, "sgd", lr=0.0)
    cache, hand_loss = step.forward(X, y, P, t)
    step.backward(cache)
    assert hand_loss.item() == pytest.approx(loss.item(), rel=1e-12)
    assert torch.allclose(step.gW, gW, rtol=1e-10, atol=1e-12)
    assert torch.allclose(step.gV, gV, rtol=1e-10, atol=1e-12)
    assert step.gW.abs().max() > 1e-3 and step.gV.abs().max() > 1e-3  # the comparison is not 0 == 0


def test_a_wrong_gradient_would_be_caught():
    """The comparison above can fail: dropping the softmax's centring term breaks it."""
    model = random_transformer(0, "stochastic", "sum")
    X, y, P, t = batch64(model, 0)
    f, _ = model(X, y, P)
    normalized_loss(f, t, 3).backward()
    step = TransformerStep(model, "sgd", lr=0.0)
    cache = list(step.forward(X, y, P, t)[0])
    cache[3] = torch.zeros_like(cache[3])  # zbar = 0: the backward then misses sum_i a_i da_i
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


@pytest.mark.parametrize("encoding", ["stochastic", "fixed"])
def test_hand_written_training_follows_autograd_training(encoding):
    """200 steps of Adam in float32, same data: the two losses agree to 1e-5 at every step."""
    runs = []
    for make in (TransformerStep, AutogradStep):
        model = Transformer(16, 32, encoding, table_seed=5)
        step = make(model, "adam", 1e-2)
        g = generator(11)
        losses = []
        for _ in range(200):
            b = sample_batch(128, 16, 2, 16, g)
            losses.append(step(b.X, b.y, model.positions(128, 16, g), b.target))
        runs.append((torch.stack(losses), model.state_dict()))
    (l_hand, w_hand), (l_auto, w_auto) = runs
    assert l_hand[-1] < 0.5 * l_hand[0]  # it trained
    assert torch.allclose(l_hand, l_auto, atol=1e-5, rtol=0)
    assert all(torch.allclose(w_hand[k], w_auto[k], atol=1e-4) for k in w_hand)


def test_the_step_updates_the_modules_own_parameters():
    model = Transformer(4, 8, "stochastic")
    step = make_step(model, "adam", 1e-2)
    assert isinstance(step, TransformerStep)
    g = generator(0)
    b = sample_batch(16, 6, 2, 4, g)
    step(b.X, b.y, model.positions(16, 6, g), b.target)
    step(b.X, b.y, model.positions(16, 6, g), b.target)
    assert model.W.abs().sum() > 0 and model.V.abs().sum() > 0
    assert dict(model.named_parameters()).keys() == {"W", "V"}


def test_other_models_take_the_autograd_step():
    assert isinstance(make_step(FCN(4, 6, 2, 8), "adam", 1e-3), AutogradStep)
    assert isinstance(make_step(Transformer(4, 8, positional_only=True), "adam", 1e-2), AutogradStep)
