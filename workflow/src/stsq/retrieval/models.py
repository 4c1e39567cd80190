"""The model families of the retrieval task (stsq.retrieval.task; docs/retrieval.md, "The models").

Each reads the tokens [x_i; e_i; e_{t_i1}; ..; e_{t_iq}] (stsq.retrieval.task.tokens) and predicts y_i at every
position, and provides the model interface of every family (stsq.sts.models.Model): ``forward(X, t, P) -> (f, a)``
with f [B, N] and a the attention [B, heads, N, N] (None without one), ``positions`` (the codes),
``accepts_length`` and ``ground_truth_cosines``.

- ``RetrievalTransformer``: one layer of H softmax-attention heads, each with its own query, key and value maps of
  the full token width D, then a ReLU MLP of width m applied at every position to the H heads' outputs side by side.
- ``FlatFFN``: a ReLU net on the flattened sequence, hidden widths (N d, m), N outputs.
- ``BiGRU``: a bidirectional GRU of width m, its two states at a position read by one linear map.

Every weight matrix starts Gaussian with variance 1 / fan-in, every bias at 0 (the GRU: torch's own start).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from stsq.core.seeds import derive_seed
from stsq.core.seeds import generator as make_generator
from stsq.retrieval.task import CODES, sign_codes, stochastic_codes, tokens


def _gaussian(fan_in: int, *shape, generator) -> nn.Parameter:
    return nn.Parameter(torch.randn(*shape, generator=generator) / math.sqrt(fan_in))


class _Coded(nn.Module):
    """What the three families share: the position codes of their tokens."""

    def __init__(self, d: int, d_e: int, q: int, N: int, codes: str, table_seed: int):
        super().__init__()
        if codes not in CODES:
            raise ValueError(f"codes must be one of {', '.join(CODES)}, got {codes!r}")
        self.d, self.d_e, self.q, self.N, self.codes, self.table_seed = d, d_e, q, N, codes, table_seed
        self.D = d + (1 + q) * d_e  # the token width
        self._table: dict[tuple[int, str], torch.Tensor] = {}

    def positions(self, batch_size: int, N: int, generator: torch.Generator) -> torch.Tensor:
        """The codes: the seed's sign table [N, d_e], or fresh unit vectors [B, N, d_e]."""
        if self.codes == "stochastic":
            return stochastic_codes(batch_size, N, self.d_e, generator)
        key = (N, str(generator.device))
        if key not in self._table:
            self._table[key] = sign_codes(N, self.d_e, self.table_seed).to(generator.device)
        return self._table[key]

    def accepts_length(self, N_eval: int) -> bool:
        return N_eval == self.N

    def ground_truth_cosines(self) -> dict[str, float]:
        return {}


class RetrievalTransformer(_Coded):
    def __init__(self, d: int, d_e: int, q: int, N: int, heads: int, width: int, codes: str, table_seed: int,
                 init_seed: int):
        super().__init__(d, d_e, q, N, codes, table_seed)
        g = make_generator(init_seed)
        D, H = self.D, heads
        self.heads = heads
        self.Wq = _gaussian(D, H, D, D, generator=g)
        self.Wk = _gaussian(D, H, D, D, generator=g)
        self.Wv = _gaussian(D, H, D, D, generator=g)
        self.hidden = _gaussian(H * D, H * D, width, generator=g)
        self.hidden_bias = nn.Parameter(torch.zeros(width))
        self.out = _gaussian(width, width, generator=g)
        self.out_bias = nn.Parameter(torch.zeros(()))

    def forward(self, X, t, P):
        Z = tokens(X, t, P)  # [B, N, D]
        Qh = torch.einsum("bnd,hde->bhne", Z, self.Wq)
        Kh = torch.einsum("bnd,hde->bhne", Z, self.Wk)
        Vh = torch.einsum("bnd,hde->bhne", Z, self.Wv)
        a = torch.softmax(Qh @ Kh.transpose(-1, -2) / math.sqrt(self.D), dim=-1)  # [B, H, N, N]
        heads = (a @ Vh).permute(0, 2, 1, 3).flatten(2)  # [B, N, H D]
        f = torch.relu(heads @ self.hidden + self.hidden_bias) @ self.out + self.out_bias
        return f, a


class FlatFFN(_Coded):
    def __init__(self, d: int, d_e: int, q: int, N: int, width: int, codes: str, table_seed: int, init_seed: int):
        super().__init__(d, d_e, q, N, codes, table_seed)
        g = make_generator(init_seed)
        sizes = [N * self.D, N * d, width, N]
        self.weights = nn.ParameterList(_gaussian(a, a, b, generator=g) for a, b in zip(sizes, sizes[1:]))
        self.biases = nn.ParameterList(nn.Parameter(torch.zeros(b)) for b in sizes[1:])

    def forward(self, X, t, P):
        h = tokens(X, t, P).flatten(1)
        for i, (W, b) in enumerate(zip(self.weights, self.biases)):
            h = h @ W + b
            if i < len(self.weights) - 1:
                h = torch.relu(h)
        return h, None


class BiGRU(_Coded):
    def __init__(self, d: int, d_e: int, q: int, N: int, width: int, codes: str, table_seed: int, init_seed: int):
        super().__init__(d, d_e, q, N, codes, table_seed)
        with torch.random.fork_rng(devices=[]):  # torch's own start for the GRU, from this seed
            torch.manual_seed(init_seed)
            self.gru = nn.GRU(self.D, width, batch_first=True, bidirectional=True)
        g = make_generator(derive_seed(init_seed, "readout"))
        self.out = _gaussian(2 * width, 2 * width, generator=g)
        self.out_bias = nn.Parameter(torch.zeros(()))

    def forward(self, X, t, P):
        states = self.gru(tokens(X, t, P))[0]  # [B, N, 2 m]
        return states @ self.out + self.out_bias, None


def transformer_of(a, record, seed: int) -> RetrievalTransformer:
    return RetrievalTransformer(record.d, record.d_e, record.q, record.N, record.heads, record.width, record.codes,
                                table_seed=derive_seed(seed, "qstr_table"), init_seed=derive_seed(seed, "qstr_init"))


def ffn_of(a, record, seed: int) -> FlatFFN:
    return FlatFFN(record.d, record.d_e, record.q, record.N, record.width, record.codes,
                   table_seed=derive_seed(seed, "qstr_table"), init_seed=derive_seed(seed, "qstr_init"))


def gru_of(a, record, seed: int) -> BiGRU:
    return BiGRU(record.d, record.d_e, record.q, record.N, record.width, record.codes,
                 table_seed=derive_seed(seed, "qstr_table"), init_seed=derive_seed(seed, "qstr_init"))
