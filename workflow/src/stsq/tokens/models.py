"""The two families of index lookup and bounded Dyck (docs/separations.md, "The models"), each through the model
interface of every family (stsq.sts.models.Model): ``forward(X, y, P) -> (logits [B, classes], None)``,
``positions``, ``accepts_length`` and ``ground_truth_cosines``.

- ``TokenTransformer``: one layer, one softmax-attention head, width m.  Token i is z_i = E x_i + p_i, p_i row i of a
  fixed table of random unit vectors in R^m (one per seed: nearly orthogonal rows, the construction's).  The query
  z_0 is p_y where the task points at a position (index lookup: the query token stands for its position), else a
  trained vector.  a = softmax(z_0^T W z_i), W the merged key-query map (from 0, as the STS_q transformer's),
  h = z_0 + W_O sum_i a_i W_V z_i, and a ReLU MLP of hidden width m reads the classes from h.  Its width is m, the
  embedding's.
- ``TokenGRU``: a GRU of hidden width m reading x_1..x_N left to right, then, where the task points at a position,
  one more step with y one-hot (in a channel of its own, N wide); a linear map reads the classes from its last
  state.  It is one-directional: a recurrent net that read y first (a bidirectional one does, from the right) needs
  no memory of the sequence.

W starts at 0; every other weight uniform in +-1/sqrt(fan-in) (torch's default), drawn from the seed's own generator.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from stsq.core.seeds import derive_seed
from stsq.core.seeds import generator as make_generator
from stsq.core.tasks import TASKS
from stsq.sts.positions import fixed_positions


def _init(module: nn.Module, g: torch.Generator, keep: tuple[str, ...] = ()) -> None:
    """Every parameter but ``keep`` uniform in +-1/sqrt(fan-in) (the last axis of a matrix; a vector its own length),
    from ``g``."""
    with torch.no_grad():
        for name, p in sorted(module.named_parameters()):
            if name in keep:
                continue
            fan_in = p.shape[-1] if p.dim() > 1 else p.shape[0]
            p.uniform_(-1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in), generator=g)


class TokenTransformer(nn.Module):
    def __init__(self, d: int, N: int, classes: int, m: int, points: bool, table_seed: int, init_seed: int):
        super().__init__()
        self.d, self.N, self.m, self.points, self.table_seed = d, N, m, points, table_seed
        self.E = nn.Linear(d, m, bias=False)
        self.V, self.O = (nn.Linear(m, m, bias=False) for _ in range(2))
        self.W = nn.Parameter(torch.zeros(m, m))  # the merged key-query map, from 0: attention starts uniform
        self.u = nn.Parameter(torch.zeros(m))  # the query of a task that points nowhere
        self.hidden, self.out = nn.Linear(m, m), nn.Linear(m, classes)
        _init(self, make_generator(init_seed), keep=("W",))
        self._tables: dict[tuple[int, str], torch.Tensor] = {}

    def positions(self, batch_size: int, N: int, generator: torch.Generator) -> torch.Tensor:
        """The seed's table of unit rows [N, m] (cached per length and device)."""
        key = (N, str(generator.device))
        if key not in self._tables:
            self._tables[key] = fixed_positions(self.table_seed, N, self.m).reshape(N, self.m).to(generator.device)
        return self._tables[key]

    def accepts_length(self, N_eval: int) -> bool:
        return N_eval == self.N

    def forward(self, X: torch.Tensor, y: torch.Tensor, P: torch.Tensor):
        z = self.E(X) + P  # [B, N, m]
        z0 = P[y[:, 0]] if self.points else self.u.expand(X.shape[0], -1)
        scores = torch.einsum("bm,bnm->bn", z0 @ self.W, z)
        a = torch.softmax(scores, dim=-1)
        h = z0 + self.O(torch.einsum("bn,bnm->bm", a, self.V(z)))
        return self.out(torch.relu(self.hidden(h))), None

    def ground_truth_cosines(self) -> dict[str, float]:
        return {}


class TokenGRU(nn.Module):
    def __init__(self, d: int, N: int, classes: int, m: int, points: bool, init_seed: int):
        super().__init__()
        self.d, self.N, self.m, self.points = d, N, m, points
        self.gru = nn.GRU(d + (N if points else 0), m, batch_first=True)
        self.out = nn.Linear(m, classes)
        _init(self, make_generator(init_seed))

    def positions(self, batch_size: int, N: int, generator: torch.Generator):
        return None

    def accepts_length(self, N_eval: int) -> bool:
        return N_eval == self.N

    def forward(self, X: torch.Tensor, y: torch.Tensor, P=None):
        B, N, d = X.shape
        seq = X
        if self.points:
            query = torch.zeros(B, 1, d + N, dtype=X.dtype, device=X.device)
            query[torch.arange(B, device=X.device), 0, d + y[:, 0]] = 1.0
            seq = torch.cat([torch.cat([X, X.new_zeros(B, N, N)], dim=2), query], dim=1)
        _, h = self.gru(seq)
        return self.out(h[-1]), None

    def ground_truth_cosines(self) -> dict[str, float]:
        return {}


def _classes(record) -> int:
    return TASKS[record.task].classes(record.d)


def transformer_of(a, record, seed: int) -> TokenTransformer:
    """The one-layer transformer of a cell: width m = the record's width; its query p_y where the task points."""
    return TokenTransformer(record.d, record.N, _classes(record), record.width, TASKS[record.task].points,
                            table_seed=derive_seed(seed, "fixed_pe"), init_seed=derive_seed(seed, "token_init"))


def gru_of(a, record, seed: int) -> TokenGRU:
    """The GRU of a cell: hidden width m = the record's width."""
    return TokenGRU(record.d, record.N, _classes(record), record.width, TASKS[record.task].points,
                    init_seed=derive_seed(seed, "token_init"))
