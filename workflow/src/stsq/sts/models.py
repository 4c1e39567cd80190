"""The models of the paper: the one-layer transformer and the fully-connected net.

Symbols (docs/paper.md: the transformer, the FCN): d content width, d_e positional width,
D = d + d_e, tokens z_i = [x_i; p_i], query z_0 = [0_d; p_y] with
p_y = sum_{j in y} p_j, merged key-query matrix W in R^{D x D}, value matrix
V in R^{d x D}, hidden width m for the FCN.
"""

from __future__ import annotations

import importlib
import math
from typing import Protocol, runtime_checkable

import torch
from torch import nn

from stsq.core.errors import LengthError
from stsq.core.experiment import ARCHS, DEFAULTS, QUERIES, Y_ENCODINGS
from stsq.core.families import FAMILIES
from stsq.core.seeds import derive_seed
from stsq.core.seeds import generator as make_generator
from stsq.sts.positions import ENCODINGS, pooled_query

__all__ = ["FCN", "LengthError", "Model", "Transformer", "attention_on_subset", "build_model", "fcn_of",
           "transformer_forward", "transformer_of"]


class Transformer(nn.Module):
    """One layer, one head, softmax attention over the N data tokens (the query is not a key).

    s_i = z_0^T W z_i,  a = softmax(s),  f = sum_i a_i V z_i.

    Because z_0 = [0; p_y], only W's p-rows meet the query, and the score splits
    as s_i = p_y^T W_px x_i + p_y^T W_pp p_i; likewise the output splits as
    f = V_x (sum_i a_i x_i) + V_p (sum_i a_i p_i).  The forward pass computes
    exactly these sums, so the concatenated tokens are never materialized.
    W and V start at 0.  Any length N' works: nothing depends on N.

    ``encoding``: a key of stsq.sts.positions.ENCODINGS ("stochastic": fresh p_i per sample; "fixed": one
    table per seed; "learned": that table, trainable; "sinusoidal"; "randomized": per sample a sorted
    subset of the table's first ``position_range`` rows).  A trainable table is the parameter ``P`` of
    the training length's rows; longer lengths append the initial table's rows beyond N.
    ``positional_only``: the reduced model of the theory's dynamics, W acting on
    p only (W_pp in R^{d_e x d_e}) and V fixed to [I_d, 0].
    ``query``: p_y as the "sum" (default) or the "mean" of the selected p_j.
    """

    def __init__(self, d: int, d_e: int, encoding: str = "stochastic", *, table_seed: int = 0,
                 positional_only: bool = False, query: str = DEFAULTS["query"], N: int = 0,
                 position_range: int = 0):
        super().__init__()
        if encoding not in ENCODINGS:
            raise ValueError(f"encoding must be one of {', '.join(ENCODINGS)}, got {encoding!r}")
        if query not in QUERIES:
            raise ValueError(f"query must be one of {QUERIES}, got {query!r}")
        self.d, self.d_e, self.encoding, self.query = d, d_e, encoding, query
        self.enc = ENCODINGS[encoding]
        if self.enc.bounded and position_range < 1:
            raise ValueError(f"the {encoding} encoding needs a position range L >= 1, got {position_range}")
        if self.enc.trainable and N < 1:
            raise ValueError(f"the {encoding} encoding is a trainable table of N rows: give the training length N")
        self.positional_only = positional_only
        self.table_seed, self.N, self.position_range = table_seed, N, position_range
        D = d + d_e
        if positional_only:
            self.W = nn.Parameter(torch.zeros(d_e, d_e))  # W_pp
        else:
            self.W = nn.Parameter(torch.zeros(D, D))
            self.V = nn.Parameter(torch.zeros(d, D))
        if self.enc.trainable:
            self.P = nn.Parameter(self._draw(1, N, None))
        self._tables: dict[tuple[int, str], torch.Tensor] = {}

    # -- positional encodings -------------------------------------------------
    def _draw(self, batch_size: int, N: int, generator):
        return self.enc.draw(batch_size=batch_size, N=N, d_e=self.d_e, table_seed=self.table_seed,
                             generator=generator, position_range=self.position_range)

    def accepts_length(self, N_eval: int) -> bool:
        """Whether the model has positions for length N_eval (a bounded encoding: up to its range L)."""
        return not self.enc.bounded or N_eval <= self.position_range

    def positions(self, batch_size: int, N: int, generator: torch.Generator) -> torch.Tensor:
        """p_1..p_N: [B, N, d_e] drawn from ``generator``, or the encoding's [N, d_e] table (cached per
        length; a trainable one is its parameter, extended by the initial table beyond the training N)."""
        if self.enc.trainable:
            if N <= self.N:
                return self.P[:N]
            return torch.cat([self.P, self._shared(N)[self.N:]])
        if not self.enc.shared:
            return self._draw(batch_size, N, generator)
        return self._shared(N)

    def _shared(self, N: int) -> torch.Tensor:
        key = (N, str(self.W.device))
        if key not in self._tables:
            self._tables[key] = self._draw(1, N, None).to(self.W.device)
        return self._tables[key]

    # -- the forward pass -----------------------------------------------------
    def forward(self, X: torch.Tensor, y: torch.Tensor, P: torch.Tensor):
        """f [B, d] and the attention a [B, N] for contents X [B, N, d], subsets y [B, q],
        positions P ([B, N, d_e], or [N, d_e] shared by the batch)."""
        if self.positional_only:
            p_y = query_position(P, y, self.query)
            a = torch.softmax(rows_dot(P, p_y @ self.W), dim=-1)  # s_i = p_y^T W_pp p_i
            return weighted_sum(a, X), a  # V = [I_d, 0]
        f, a, _, _ = transformer_forward(X, y, P, self.W, self.V, self.d, self.query)
        return f, a

    # -- the ground-truth directions -----------------------------------------
    @torch.no_grad()
    def family_scale(self) -> tuple[float, float]:
        """(c, v): the model's projection onto the ground-truth family W_pp = c I, V = v [I_d, 0],
        c = tr(W_pp) / d_e and v = tr(V_x) / d (v = 1 for the positions-only model)."""
        d = self.d
        W_pp = self.W if self.positional_only else self.W[d:, d:]
        v = 1.0 if self.positional_only else float(torch.diagonal(self.V[:, :d]).mean())
        return float(torch.diagonal(W_pp).mean()), v

    def ground_truth_cosines(self) -> dict[str, float]:
        """Cosine of W's p-p block with I_{d_e}, and of V with [I_d, 0] (Frobenius)."""
        d = self.d
        with torch.no_grad():
            return self._cosines(d)

    def _cosines(self, d: int) -> dict[str, float]:
        W_pp = self.W if self.positional_only else self.W[d:, d:]
        out = {"cos_W_pp_identity": _cosine(W_pp, torch.eye(self.d_e, device=W_pp.device))}
        if not self.positional_only:
            V_star = torch.zeros_like(self.V)
            V_star[:, :d] = torch.eye(d, device=V_star.device)
            out["cos_V_ground_truth"] = _cosine(self.V, V_star)
        return out


class FCN(nn.Module):
    """ReLU MLP on concat(vec(X), 1_y): hidden width m, 1 or 2 hidden layers, output in R^d.

    ``y_encoding``: "indicator" (1_y in {0,1}^N, default) or "indices" (y as q numbers in (0, 1]).
    The input size is tied to N: any other length raises ``LengthError``.
    """

    def __init__(self, d: int, N: int, q: int, m: int, layers: int = DEFAULTS["layers"], *, init_seed: int = 0,
                 y_encoding: str = DEFAULTS["y_encoding"]):
        super().__init__()
        if layers not in (1, 2):
            raise ValueError(f"layers must be 1 or 2, got {layers}")
        if y_encoding not in Y_ENCODINGS:
            raise ValueError(f"y_encoding must be one of {Y_ENCODINGS}, got {y_encoding!r}")
        self.d, self.N, self.q, self.m, self.y_encoding = d, N, q, m, y_encoding
        n_in = N * d + (N if y_encoding == "indicator" else q)
        widths = [n_in] + [m] * layers + [d]
        self.linears = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:]))
        g = make_generator(init_seed)
        with torch.no_grad():  # PyTorch's default init, drawn from our own generator
            for lin in self.linears:
                bound = 1.0 / math.sqrt(lin.in_features)
                lin.weight.uniform_(-bound, bound, generator=g)
                lin.bias.uniform_(-bound, bound, generator=g)

    def positions(self, batch_size: int, N: int, generator: torch.Generator):
        return None  # the FCN has no positional encoding

    def accepts_length(self, N_eval: int) -> bool:
        """The FCN's input size is tied to its training length N."""
        return N_eval == self.N

    def inputs(self, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The first layer's input [B, n_in]: vec(X) and the code of y (the training step reads it too)."""
        B, N, _ = X.shape
        if N != self.N:
            raise LengthError(f"the FCN was trained at N={self.N} and cannot take length N'={N}")
        if self.y_encoding == "indicator":
            code = torch.zeros(B, N, device=X.device, dtype=X.dtype).scatter_(1, y, 1.0)
        else:
            code = (y.sort(dim=1).values.to(X.dtype) + 1) / N
        return torch.cat([X.reshape(B, -1), code], dim=1)

    def forward(self, X: torch.Tensor, y: torch.Tensor, P=None):
        h = self.inputs(X, y)
        for lin in self.linears[:-1]:
            h = torch.relu(lin(h))
        return self.linears[-1](h), None

    def ground_truth_cosines(self) -> dict[str, float]:
        return {}


def query_position(P: torch.Tensor, y: torch.Tensor, query: str) -> torch.Tensor:
    """p_y [B, d_e]: the sum (or the mean) of the selected positions p_j, j in y."""
    return pooled_query(select_rows(P, y).sum(1), query, y.shape[1])


def transformer_forward(X, y, P, W, V, d: int, query: str):
    """The transformer's forward pass, written once (the module's forward and the training step use it).

        z_0 = [0; p_y],  s_i = z_0^T W z_i = (p_y^T W[p-rows, :]) . z_i,  a = softmax(s),
        zbar = sum_i a_i z_i,  f = V zbar.

    Returns f [B, d], a [B, N], and what the hand-written backward needs: p_y [B, d_e], zbar [B, D].
    The tokens z_i = [x_i; p_i] are never concatenated: each product with z_i is its x-part plus its p-part.
    """
    p_y = query_position(P, y, query)
    u = p_y @ W[d:]  # z_0^T W  [B, D]
    a = torch.softmax(token_dots(X, P, u, d), dim=-1)
    zbar = torch.cat([weighted_sum(a, X), weighted_sum(a, P)], dim=1)
    return zbar @ V.T, a, p_y, zbar


# The batched products of the transformer, shared by its forward pass and the hand-written
# training step (stsq.sts.step).  Positions P are fresh per sample [B, N, d_e] or a fixed table
# [N, d_e] shared by the batch.  A product with a per-sample vector is laid out as a row times
# a transposed block: on the CPU about 7x faster than a batched matrix-vector product.
def select_rows(P: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """[B, q, d_e]: the rows p_j, j in y, of each sample."""
    if P.dim() == 2:
        return P[y]
    B, N, d_e = P.shape
    rows = (y + N * torch.arange(B, device=y.device).unsqueeze(1)).view(-1)
    return P.reshape(B * N, d_e).index_select(0, rows).view(B, -1, d_e)


def rows_dot(T: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """[B, N]: v_b . t_i for T [B, N, k] (or [N, k]) and v [B, k]."""
    if T.dim() == 2:
        return v @ T.T
    return torch.bmm(v.unsqueeze(1), T.mT).squeeze(1)


def token_dots(X: torch.Tensor, P: torch.Tensor, v: torch.Tensor, d: int) -> torch.Tensor:
    """[B, N]: v_b . z_i = v_x . x_i + v_p . p_i for v = [v_x; v_p] [B, D], without concatenating z_i."""
    s = torch.bmm(v[:, None, :d], X.mT)
    if P.dim() == 2:
        return s.squeeze(1).addmm_(v[:, d:], P.T)
    return s.baddbmm_(v[:, None, d:], P.mT).squeeze(1)


def weighted_sum(c: torch.Tensor, T: torch.Tensor) -> torch.Tensor:
    """[B, k]: sum_i c_i t_i per sample, for c [B, N] and T [B, N, k] (or [N, k])."""
    if T.dim() == 2:
        return c @ T
    return torch.bmm(c.unsqueeze(1), T).squeeze(1)


@torch.no_grad()
def _cosine(A: torch.Tensor, B: torch.Tensor) -> float:
    na, nb = A.norm(), B.norm()  # one host read (0 where either is 0)
    return float(torch.where((na == 0) | (nb == 0), 0.0, (A * B).sum() / (na * nb)))


@runtime_checkable
class Model(Protocol):
    """What every model class provides (a family's builder returns one: stsq.core.families; tests/test_models.py
    checks each family's models against it), and who reads it:

    - ``forward(X, y, P) -> (f, a)``: the prediction f [B, d] of a batch (X [B, N, d], y [B, q] indices, P the
      positions from ``positions`` or None) and the attention a [B, N] (None for a model without one: the
      attention diagnostics are then not reported); the training step and the scoring call it;
    - ``positions(batch_size, N, generator)``: the batch's positions [B, N, d_e] or [N, d_e] (None for a
      model without any), drawn from ``generator`` where they are random;
    - ``accepts_length(N_eval)``: whether it can take sequences of length N_eval (the evaluation asks, and
      marks a length it cannot take ``not_applicable``);
    - ``ground_truth_cosines()``: its cosines with the ground-truth direction, for the training curve (an
      empty dict where there is none).

    An arch that is ``projected`` (stsq.core.experiment.Arch) also provides ``family_scale() -> (c, v)``, its
    weights' scale along the ground-truth family, and ``d_e`` and ``query`` (stsq.width.evaluate).
    """

    def forward(self, X: torch.Tensor, y: torch.Tensor, P: torch.Tensor | None): ...

    def positions(self, batch_size: int, N: int, generator: torch.Generator) -> torch.Tensor | None: ...

    def accepts_length(self, N_eval: int) -> bool: ...

    def ground_truth_cosines(self) -> dict[str, float]: ...


def transformer_of(a, record, seed: int) -> Transformer:
    """The transformer family's builder: d_e = the record's width, the arch's encoding and reduction."""
    return Transformer(record.d, record.width, a.encoding, table_seed=derive_seed(seed, "fixed_pe"),
                       positional_only=a.positional_only, query=record.query, N=record.N,
                       position_range=record.position_range)


def fcn_of(a, record, seed: int) -> FCN:
    """The FCN family's builder: m = the record's width hidden units in its ``layers`` layers."""
    return FCN(record.d, record.N, record.q, record.width, record.layers, init_seed=derive_seed(seed, "fcn_init"),
               y_encoding=record.y_encoding)


def builder(family: str):
    """The function that builds a model of ``family`` (its ``Family.builder``, "module:function")."""
    module, name = FAMILIES[family].builder.split(":")
    return getattr(importlib.import_module(module), name)


def build_model(record, seed: int) -> nn.Module:
    """The model of a grid cell for ``seed``: ``record`` is the cell's record (stsq.core.experiment.CellRecord, or a
    spec that extends it), built by its arch's family's builder (stsq.core.families: the record's width is d_e for a
    transformer, m for the FCN; the arch's encoding and reduction from stsq.core.experiment.ARCHS)."""
    if record.arch not in ARCHS:
        raise ValueError(f"unknown arch {record.arch!r}; expected one of {', '.join(ARCHS)}")
    a = ARCHS[record.arch]
    return builder(a.family)(a, record, seed)


def attention_on_subset(a: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per sample: the attention mass on y, and how evenly it splits inside y.

    Evenness is the entropy of a restricted to y (renormalized) over log q:
    1 = split evenly over the q selected tokens, 0 = all on one of them
    (q = 1: always 1).
    """
    a_y = a.gather(1, y)
    mass = a_y.sum(1)
    q = y.shape[1]
    if q == 1:
        return mass, torch.ones_like(mass)
    w = a_y / mass.clamp_min(1e-30).unsqueeze(1)
    entropy = -(w * w.clamp_min(1e-30).log()).sum(1)
    return mass, entropy / math.log(q)
