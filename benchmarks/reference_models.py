"""The models the benchmark measures ours against (benchmarks/bench.py): the same math, written
the way research code usually is, and S seeds stacked into one model."""

from __future__ import annotations

import torch
from stsq.sts.models import FCN
from torch import nn


class NaiveTransformer(nn.Module):
    """The same model written as attention layers usually are: z_i = [x_i; p_i] concatenated,
    W and V applied to every token (keys W z_i, values V z_i), s_i = z_0^T (W z_i), f = sum_i a_i (V z_i)."""

    def __init__(self, d, d_e):
        super().__init__()
        self.d = d
        self.W = nn.Parameter(torch.zeros(d + d_e, d + d_e))
        self.V = nn.Parameter(torch.zeros(d, d + d_e))

    def tokens(self, X, y, P):
        B = X.shape[0]
        if P.dim() == 2:
            P = P.unsqueeze(0).expand(B, -1, -1)
        Z = torch.cat([X, P], dim=-1)
        p_y = P[torch.arange(B, device=X.device).unsqueeze(1), y].sum(1)
        z0 = torch.cat([torch.zeros(B, self.d, device=X.device), p_y], dim=-1)
        return Z, z0

    def forward(self, X, y, P):
        Z, z0 = self.tokens(X, y, P)
        keys = Z @ self.W.T
        s = torch.bmm(keys, z0.unsqueeze(-1)).squeeze(-1)
        a = torch.softmax(s, dim=-1)
        values = Z @ self.V.T
        return torch.bmm(a.unsqueeze(1), values).squeeze(1)


class EinsumTransformer(NaiveTransformer):
    """A second, tuned reference: the same concatenated tokens, the contractions ordered by einsum
    (z_0^T W first, then the tokens; sum_i a_i z_i first, then V)."""

    def forward(self, X, y, P):
        Z, z0 = self.tokens(X, y, P)
        s = torch.einsum("bi,ij,bnj->bn", z0, self.W, Z)
        a = torch.softmax(s, dim=-1)
        return torch.einsum("bn,bnj,dj->bd", a, Z, self.V)


class NaiveFCN(nn.Module):
    def __init__(self, ours: FCN):
        super().__init__()
        self.N = ours.N
        layers = []
        for lin in ours.linears:
            new = nn.Linear(lin.in_features, lin.out_features)
            new.load_state_dict(lin.state_dict())
            layers += [new, nn.ReLU()]
        self.net = nn.Sequential(*layers[:-1])

    def forward(self, X, y, P=None):
        onehot = nn.functional.one_hot(y, self.N).sum(1).float()
        return self.net(torch.cat([X.flatten(1), onehot], dim=1))



# -- seeds stacked in one model (part c) ----------------------------------------------------------
class StackedTransformer(nn.Module):
    """S transformers as one module (W [S, D, D], V [S, d, D]); each model gets its own data."""

    def __init__(self, S, d, d_e):
        super().__init__()
        self.d = d
        self.W = nn.Parameter(torch.zeros(S, d + d_e, d + d_e))
        self.V = nn.Parameter(torch.zeros(S, d, d + d_e))

    def forward(self, X, y, P):  # X [S, B, N, d], y [S, B, q], P [S, B, N, d_e] or per-seed tables [S, N, d_e]
        S, B, N, d = X.shape
        if P.dim() == 3:
            P = P.unsqueeze(1).expand(S, B, N, P.shape[-1])
        d_e = P.shape[-1]
        p_y = P.gather(2, y.unsqueeze(-1).expand(-1, -1, -1, d_e)).sum(2)  # [S, B, d_e]
        u = torch.bmm(p_y, self.W[:, d:, :])  # [S, B, D]
        s = (X @ u[..., :d].unsqueeze(-1)).squeeze(-1) + (P @ u[..., d:].unsqueeze(-1)).squeeze(-1)
        a = torch.softmax(s, -1)
        x_bar = (a.unsqueeze(-2) @ X).squeeze(-2)
        p_bar = (a.unsqueeze(-2) @ P).squeeze(-2)
        return torch.bmm(x_bar, self.V[:, :, :d].transpose(1, 2)) + torch.bmm(p_bar, self.V[:, :, d:].transpose(1, 2))


class StackedFCN(nn.Module):
    def __init__(self, S, n_in, m, d):
        super().__init__()
        self.W1 = nn.Parameter(torch.randn(S, n_in, m) / n_in**0.5)
        self.b1 = nn.Parameter(torch.zeros(S, 1, m))
        self.W2 = nn.Parameter(torch.randn(S, m, d) / m**0.5)
        self.b2 = nn.Parameter(torch.zeros(S, 1, d))

    def forward(self, X, y, P=None):
        S, B, N, d = X.shape
        code = torch.zeros(S, B, N, device=X.device).scatter_(2, y, 1.0)
        h = torch.relu(torch.baddbmm(self.b1, torch.cat([X.reshape(S, B, -1), code], -1), self.W1))
        return torch.baddbmm(self.b2, h, self.W2)
