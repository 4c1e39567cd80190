"""The models compute what docs/paper.md writes, and the solution is in the function class."""

import math

import pytest
import torch
from helpers import record
from stsq.core.experiment import ARCHS, archs_of
from stsq.core.seeds import generator
from stsq.sts.data import make_eval_set
from stsq.sts.models import FCN, LengthError, Transformer, attention_on_subset, build_model
from stsq.sts.scoring import score
from stsq.sts.task import sample_batch


def naive_forward(model: Transformer, X, y, P):
    """The textbook computation on concatenated tokens z_i = [x_i; p_i], query z_0 = [0; p_y]."""
    B, N, d = X.shape
    P = P.expand(B, -1, -1) if P.dim() == 2 else P
    Z = torch.cat([X, P], dim=-1)
    p_sel = torch.stack([P[b, y[b]] for b in range(B)])
    p_y = p_sel.sum(1) if model.query == "sum" else p_sel.mean(1)
    z0 = torch.cat([torch.zeros(B, d), p_y], dim=-1)
    s = torch.einsum("bk,kl,bnl->bn", z0, model.W, Z)
    a = torch.softmax(s, -1)
    f = torch.einsum("bn,dl,bnl->bd", a, model.V, Z)
    return f, a


@pytest.mark.parametrize("encoding", ["stochastic", "fixed"])
@pytest.mark.parametrize("q,query", [(1, "sum"), (3, "sum"), (2, "mean")])
def test_transformer_equals_the_computation_on_concatenated_tokens(seed, encoding, q, query):
    g = generator(seed)
    model = Transformer(6, 10, encoding, table_seed=seed, query=query)
    with torch.no_grad():
        model.W.normal_(generator=g)
        model.V.normal_(generator=g)
    b = sample_batch(7, 9, q, 6, g)
    P = model.positions(7, 9, g)
    f, a = model(b.X, b.y, P)
    f_ref, a_ref = naive_forward(model, b.X, b.y, P)
    assert torch.allclose(f, f_ref, atol=1e-4) and torch.allclose(a, a_ref, atol=1e-5)


def hand_built(d, d_e, c, seed=0, encoding="stochastic"):
    """The ground truth: W's p-p block = c I, V = [I_d, 0]."""
    model = Transformer(d, d_e, encoding, table_seed=seed)
    with torch.no_grad():
        model.W[d:, d:] = c * torch.eye(d_e)
        model.V[:, :d] = torch.eye(d)
    return model


def test_hand_built_transformer_solves_STS_q(seed):
    """The function class contains the solution: q = 2, N = 32, d_e = 64, c = 100."""
    model = hand_built(16, 64, 100.0)
    test = make_eval_set(2048, 32, 2, 16, seed)
    result = score(model, test, positions_seed=seed)
    assert result["normalized_loss"] < 0.01, result
    assert result["attn_mass_y"] > 0.99 and result["attn_evenness_y"] > 0.99
    cos = model.ground_truth_cosines()
    assert cos["cos_W_pp_identity"] == pytest.approx(1.0) and cos["cos_V_ground_truth"] == pytest.approx(1.0)


def test_hand_built_transformer_with_small_c_does_not(seed):
    """The test above can fail: with c = 1 the attention is nearly uniform."""
    result = score(hand_built(16, 64, 1.0), make_eval_set(1024, 32, 2, 16, seed), positions_seed=seed)
    assert result["normalized_loss"] > 0.5


def test_transformer_takes_any_length(seed):
    model = hand_built(16, 64, 100.0)
    for N in (8, 32, 128, 512):
        b = sample_batch(4, N, 2, 16, generator(seed))
        f, a = model(b.X, b.y, model.positions(4, N, generator(seed)))
        assert f.shape == (4, 16) and a.shape == (4, N)


def test_fcn_refuses_other_lengths():
    fcn = FCN(16, 32, 2, 64)
    b = sample_batch(4, 64, 2, 16, generator(0))
    with pytest.raises(LengthError, match="N=32.*N'=64"):
        fcn(b.X, b.y)
    f, _ = fcn(*[getattr(sample_batch(4, 32, 2, 16, generator(0)), k) for k in ("X", "y")])
    assert f.shape == (4, 16)


def test_fcn_input_is_contents_and_the_indicator_of_y():
    fcn = FCN(4, 8, 2, 16, layers=2)
    assert fcn.linears[0].in_features == 8 * 4 + 8 and len(fcn.linears) == 3
    assert FCN(4, 8, 2, 16, y_encoding="indices").linears[0].in_features == 8 * 4 + 2


def test_model_init_is_deterministic_per_seed():
    cell = record("fcn", d=16, N=32, q=2, width=64)
    a, b, c = build_model(cell, 3), build_model(cell, 3), build_model(cell, 4)
    assert all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.linears[0].weight, c.linears[0].weight)


def test_unknown_arch_is_an_error():
    with pytest.raises(ValueError, match="unknown arch 'tf_rotary'"):
        build_model(record("tf_rotary", d=4, N=8, q=2, width=8), 0)


def test_evenness_sees_a_collapse_onto_one_selected_token():
    y = torch.tensor([[0, 1]])
    mass, even = attention_on_subset(torch.tensor([[0.5, 0.5, 0.0]]), y)
    assert float(mass) == pytest.approx(1.0) and float(even) == pytest.approx(1.0)
    mass, even = attention_on_subset(torch.tensor([[0.97, 0.0, 0.03]]), y)
    assert float(mass) == pytest.approx(0.97) and float(even) < 0.01


# -- a model family is one record, its models one interface ------------------------------------------------
@pytest.mark.parametrize("arch", archs_of())  # the retrieval task's: tests/test_retrieval.py
def test_every_arch_builds_through_its_family_a_model_with_the_interface(arch):
    from stsq.core.families import FAMILIES
    from stsq.sts.models import Model, build_model, builder

    a = ARCHS[arch]
    assert a.family in FAMILIES and callable(builder(a.family))
    N, d, q, width = 8, 4, 2, 16
    model = build_model(record(arch, d=d, N=N, q=q, width=width, position_range=4 * N), 0)
    assert isinstance(model, Model)
    g = generator(0)
    batch = sample_batch(5, N, q, d, g)
    f, attention = model(batch.X, batch.y, model.positions(5, N, g))
    assert f.shape == (5, d)
    assert (attention is None) == (not FAMILIES[a.family].attention)
    if attention is not None:
        assert attention.shape == (5, N)
    assert model.accepts_length(N) and model.accepts_length(2 * N) == FAMILIES[a.family].attention
    assert isinstance(model.ground_truth_cosines(), dict)
    if a.projected:  # the evaluation projects it onto the ground-truth family
        c, v = model.family_scale()
        assert math.isfinite(c) and math.isfinite(v) and model.d_e == width and model.query in ("sum", "mean")


def test_a_class_missing_part_of_the_interface_is_not_a_model():
    from stsq.sts.models import FCN, Model

    class NoLengths(torch.nn.Module):
        def forward(self, X, y, P):
            return X.sum(1), None

        def positions(self, batch_size, N, generator):
            return None

        def ground_truth_cosines(self):
            return {}

    fcn = FCN(4, 8, 2, 16)
    assert not isinstance(NoLengths(), Model) and isinstance(fcn, Model)
