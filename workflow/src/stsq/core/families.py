"""The model families: what the pipeline knows of each kind of model, one record each (no torch).

An arch (stsq.core.experiment.ARCHS) names its family in ``Arch.family``; everything that differs between
families is read from its record here: the class that builds its models (imported only when a model is
built: stsq.sts.models.build_model), what its width stands for, whether it has positions and attention (and
so is scored at unseen lengths N' and read by the transformer claims), and the shape arithmetic of its
cost (stsq.cluster.cost multiplies it by each arch's measured rate).  The interface every model class provides is
``stsq.sts.models.Model`` (tests/test_models.py checks each family's models against it).  A new family is
one record here and one class (docs/extending.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Family:
    name: str
    builder: str  # "module:function" building a model of a cell: fn(arch, record, seed) -> Model
    width_symbol: str  # what a cell's width is: "d_e" (the positional width) or "m" (the hidden width)
    attention: bool  # positions and attention: scored at every N' it takes, attention diagnostics
    # the work of one training step (batch B), at the arch's rate (stsq.cluster.cost.STEP_RATES)
    # (None: a family whose sweeps measure samples, not widths, and have no cost estimate)
    step_units: Callable[[int, int, int, int, int], float] | None = None  # (B, N, d, width, layers)
    # the work of scoring n samples at length L of a model trained at N (at the arch's step rate: its draws and
    # products are the step's kernels; measured at the paper sweep's shapes, docs/measurements.md)
    score_units: Callable[[int, int, int, int, int, int], float] | None = None  # (n, L, N, d, width, layers)
    # a training job's float32 tensors at its peak (batch B, n_eval test samples): stsq.cluster.cost.estimated_memory_mb
    memory_floats: Callable[[int, int, int, int, int, int], float] | None = None  # (B, n_eval, N, d, width, layers)
    # its step is one large product, so a big cell's job asks for more than one thread (stsq.cluster.cost.train_threads)
    threads: bool = False
    # the work of a step that does not grow with the tokens (B, N, d, width, layers), at one rate for the family
    # (stsq.cluster.cost.WEIGHT_RATES): a transformer's query and weight-gradient products, B (d + d_e) d_e, with its
    # update of the (d + d_e)^2 weights, which at a large d_e and a small N outweigh its token work (tf_fixed at
    # N = 16, d_e = 1024: 17 ms a step against 3 ms for its B N (d + d_e) units)
    weight_units: Callable[[int, int, int, int, int], float] | None = None

    def like(self, **changes) -> Family:
        """This family with ``changes`` (a new family that shares the rest, its cost shape say)."""
        return replace(self, **changes)


def _transformer_memory(B, n_eval, N, d, width, layers):
    # the step's tensors, about 3 B N (d + d_e) floats (X, the positions, the products of forward and
    # backward); the model with its gradient and Adam's two moments, 4 (d + d_e)^2 + 4 d (d + d_e); the test set
    D = d + width
    return 3 * B * N * D + 4 * D * D + 4 * d * D + n_eval * N * d


def _fcn_params(N, d, width, layers):
    return (N * d + N) * width + width * d + width * width * (layers - 1)


def _fcn_memory(B, n_eval, N, d, width, layers):
    # about 7 floats per parameter (the weights, their gradient, Adam's moments and the fused kernel's
    # buffers), the activations autograd keeps, about 4 B (n_in + m) floats with n_in = N d + N, the test set
    return 7 * _fcn_params(N, d, width, layers) + 4 * B * (N * d + N + width) + n_eval * N * d


FAMILIES: dict[str, Family] = {f.name: f for f in [
    Family("transformer", "stsq.sts.models:transformer_of", "d_e", True,
           step_units=lambda B, N, d, width, layers: B * N * (d + width),
           score_units=lambda n, L, N, d, width, layers: n * L * (d + width),
           memory_floats=_transformer_memory,
           weight_units=lambda B, N, d, width, layers: B * (d + width) * width),
    Family("fcn", "stsq.sts.models:fcn_of", "m", False,
           step_units=lambda B, N, d, width, layers: B * (N * d + N) * width + B * width * width * (layers - 1),
           score_units=lambda n, L, N, d, width, layers: n * (N * d + N) * width,
           memory_floats=_fcn_memory, threads=True),
    # the retrieval task's families (stsq.retrieval.models; docs/retrieval.md): width is the MLP's after attention,
    # the FFN's last hidden width, the GRU's state.  Its sweeps measure samples, not widths: no cost shape
    # (stsq.cluster.cost
    # estimates a width sweep's jobs only)
    Family("retrieval_transformer", "stsq.retrieval.models:transformer_of", "m", True),
    Family("flat_ffn", "stsq.retrieval.models:ffn_of", "m", False),
    Family("bigru", "stsq.retrieval.models:gru_of", "m", False),
    # index lookup's and bounded Dyck's (stsq.tokens.models; docs/separations.md): width m is the transformer's
    # embedding, the GRU's state.  Scored at N only.  A step's work: the transformer's embedding and its four maps at
    # every token, B N m (d + 3 m); the GRU's three gates at every token, 3 B N m (d + N + m) (its input carries y's
    # channel, N wide)
    Family("token_transformer", "stsq.tokens.models:transformer_of", "m", False,
           step_units=lambda B, N, d, width, layers: B * N * width * (d + 3 * width),
           score_units=lambda n, L, N, d, width, layers: n * L * width * (d + 3 * width),
           memory_floats=lambda B, n_eval, N, d, width, layers: (8 * B * N * width + 40 * width * width
                                                                 + n_eval * N * d)),
    Family("token_gru", "stsq.tokens.models:gru_of", "m", False,
           step_units=lambda B, N, d, width, layers: 3 * B * N * width * (d + N + width),
           score_units=lambda n, L, N, d, width, layers: 3 * n * L * width * (d + N + width),
           memory_floats=lambda B, n_eval, N, d, width, layers: (12 * B * N * width + 16 * width * (d + N + width)
                                                                 + n_eval * N * d)),
    # a new model family: one record here and its class (docs/extending.md)
]}
