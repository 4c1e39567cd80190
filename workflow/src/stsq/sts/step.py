"""One training step: forward, backward and the optimizer update.

The transformer's step is written by hand (``TransformerStep``): its gradient
has a short closed form, and on the CPU autograd's bookkeeping and the
optimizer's Python loop cost more than the arithmetic.  Any other model (the
FCN, the positional-only transformer) takes the autograd path (``AutogradStep``).
Both return the batch's normalized loss, detached and not synced.

The hand-written backward (symbols as in models.py; c = q / (d B) so that the
loss is L = c sum_b ||f_b - t_b||^2):

    u = p_y W[p-rows, :],  s_i = u . z_i,  a = softmax(s),  zbar = sum_i a_i z_i,  f = V zbar
    g  = 2 c (f - t)                          dL/df
    dV = sum_b g zbar^T
    w  = V^T g,  da_i = w . z_i               dL/da_i
    ds_i = a_i (da_i - w . zbar)              through the softmax (sum_i a_i da_i = w . zbar)
    du = sum_i ds_i z_i,  dW[p-rows, :] = sum_b p_y du^T,  dW[x-rows, :] = 0

A trainable position table P (the learned encoding, shared by the batch) gets, with w = [w_x; w_p] and
du = [du_x; du_p] split like z_i, and p_y the sum (or mean) of the rows y:

    dP = a^T w_p + ds^T u_p + scatter over y of (du W[p-rows, :]^T) (/ q for the mean)

(through the values, the keys and the query).  tests/test_step.py checks it against autograd in float64.
The tokens z_i are never concatenated: every product with z_i is its x-part plus its p-part.
"""

from __future__ import annotations

import math

import torch

from stsq.core.experiment import ARCHS
from stsq.core.experiment import STEPS as STEPS_NAMED
from stsq.core.tasks import DEFAULT_TASK
from stsq.sts.models import Transformer, token_dots, transformer_forward, weighted_sum
from stsq.sts.positions import pooled_query
from stsq.sts.task import normalized_loss, power

CHECKPOINT_FORMAT = 3  # optimizer state of every step: FlatOptimizer's flat moments (2: the FCN's was torch.optim's)


# Adam's elements per pass on the CPU (FlatOptimizer.step): 2^18 float32, 1 MiB a tensor, so that the
# chunk's gradient, moments, parameters and denominator (5 MiB) stay in the cache between the passes; a
# multiple of every vector width, so each element takes the same kernel path as in one pass over the whole
# vector.  Measured at the paper's largest FCN (18 M parameters, one core): 87 -> 31 ms an update.
ADAM_CHUNK = 1 << 18


class FlatOptimizer:
    """Adam or plain SGD on one flat parameter vector (no per-tensor Python loop).

    Adam is torch.optim.Adam's update with its defaults (betas 0.9, 0.999, eps 1e-8).
    """

    def __init__(self, name: str, flat: torch.Tensor, lr: float, betas=(0.9, 0.999), eps: float = 1e-8):
        betas = tuple(betas)
        if name not in ("adam", "sgd"):
            raise ValueError(f"unknown optimizer {name!r}; expected 'adam' or 'sgd'")
        self.name, self.flat, self.lr, self.betas, self.eps = name, flat, lr, betas, eps
        self.t = 0
        self.exp_avg = torch.zeros_like(flat) if name == "adam" else None
        self.exp_avg_sq = torch.zeros_like(flat) if name == "adam" else None
        self._denom = None  # the denominator's buffer, one chunk long (``step``)

    def step(self, grad: torch.Tensor) -> None:
        if self.name == "sgd":
            self.flat.add_(grad, alpha=-self.lr)
            return
        self.t += 1
        b1, b2 = self.betas
        bias2, step_size = math.sqrt(1 - b2 ** self.t), -self.lr / (1 - b1 ** self.t)
        n = self.flat.numel()
        # On the CPU, chunk by chunk: Adam's five elementwise passes over one chunk while its four tensors'
        # slices stay in the cache, rather than five passes over vectors of a paper-scale FCN's 72 MB each
        # (and the square root into one buffer, not a fresh vector a step).  The same operations on every
        # element, in the same order: the same bits (tests/test_step.py), on any chunking.
        chunk = n if self.flat.device.type != "cpu" else ADAM_CHUNK
        if self._denom is None:
            self._denom = torch.empty(min(n, chunk), dtype=self.flat.dtype, device=self.flat.device)
        for i in range(0, n, chunk):
            j = min(n, i + chunk)
            g, m, v = grad[i:j], self.exp_avg[i:j], self.exp_avg_sq[i:j]
            m.lerp_(g, 1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = torch.sqrt(v, out=self._denom[:j - i]).div_(bias2).add_(self.eps)
            self.flat[i:j].addcdiv_(m, denom, value=step_size)

    def state_dict(self) -> dict:
        state = {"format": CHECKPOINT_FORMAT, "name": self.name, "t": self.t}
        if self.name == "adam":
            state.update(exp_avg=self.exp_avg.clone(), exp_avg_sq=self.exp_avg_sq.clone())
        return state

    def load_state_dict(self, state: dict) -> None:
        if state.get("format") != CHECKPOINT_FORMAT or state.get("name") != self.name:
            raise ValueError("optimizer state of another format")
        self.t = int(state["t"])
        if self.name == "adam":
            self.exp_avg.copy_(state["exp_avg"])
            self.exp_avg_sq.copy_(state["exp_avg_sq"])


ADAM_BETAS = (0.9, 0.999)


class Step:
    """forward (the loss and what backward needs), backward (the gradient), update (the optimizer).

    The plumbing every step shares, once: its parameters re-pointed into one flat vector (the module still
    owns them: state_dict, evaluation and saving are unchanged), a flat gradient of the same layout, and a
    ``FlatOptimizer`` on them.  A subclass gives ``forward`` and ``backward`` (filling ``self.grad``)."""

    def __init__(self, model: torch.nn.Module, params: list, optimizer: str, lr: float, betas=ADAM_BETAS,
                 task: str = DEFAULT_TASK):
        self.model, self.task = model, task
        self.flat = torch.cat([p.detach().reshape(-1) for p in params])
        self.grad = torch.zeros_like(self.flat)
        self.grads, offset = [], 0  # each parameter's view of the flat gradient
        for p in params:
            p.data = self.flat[offset:offset + p.numel()].view_as(p)
            self.grads.append(self.grad[offset:offset + p.numel()].view_as(p))
            offset += p.numel()
        self.opt = FlatOptimizer(optimizer, self.flat, lr, betas)

    def update(self) -> None:
        self.opt.step(self.grad)

    def set_lr(self, lr: float) -> None:
        """The learning rate of the next updates (a schedule calls this before each step)."""
        self.opt.lr = lr

    def state_dict(self) -> dict:
        return self.opt.state_dict()

    def load_state_dict(self, state: dict) -> None:
        self.opt.load_state_dict(state)

    def __call__(self, X: torch.Tensor, y: torch.Tensor, P: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """One training step on a batch; returns its normalized loss (detached, not synced)."""
        cache, loss = self.forward(X, y, P, target)
        self.backward(cache)
        self.update()
        return loss


class TransformerStep(Step):
    """Hand-written forward and backward of a ``Transformer`` (not the positional-only one): W, V (and a
    trainable table P) in one flat vector, so that the optimizer is a handful of vector operations."""

    def __init__(self, model: Transformer, optimizer: str, lr: float, betas=ADAM_BETAS, task: str = DEFAULT_TASK):
        if not isinstance(model, Transformer) or model.positional_only:
            raise TypeError("TransformerStep takes a full Transformer")
        super().__init__(model, [model.W, model.V] + ([model.P] if model.enc.trainable else []), optimizer, lr,
                         betas, task)
        self.gW, self.gV = self.grads[:2]  # gW's x-rows stay 0: the query has no x-part
        self.gP = self.grads[2] if model.enc.trainable else None

    @torch.no_grad()
    def forward(self, X, y, P, target):
        """The loss, and what the backward pass needs."""
        m = self.model
        f, a, p_y, zbar = transformer_forward(X, y, P, m.W, m.V, m.d, m.query)
        r = f - target
        c = 1 / (power(self.task, m.d, y.shape[1]) * X.shape[0])  # the task's loss: mean of |f - t|^2 / E|t|^2
        loss = torch.dot(r.view(-1), r.view(-1)).mul_(c)
        return (X, y, P, p_y, a, zbar, r, c), loss

    @torch.no_grad()
    def backward(self, cache) -> None:
        """The gradient of the loss into ``self.grad`` (the closed form in the module docstring)."""
        X, y, P, p_y, a, zbar, r, c = cache
        d = self.model.d
        g = r.mul_(2 * c)
        torch.mm(g.T, zbar, out=self.gV)
        w = g @ self.model.V  # [B, D]
        ds = token_dots(X, P, w, d).sub_((w * zbar).sum(1, keepdim=True)).mul_(a)
        du = torch.cat([weighted_sum(ds, X), weighted_sum(ds, P)], dim=1)
        torch.mm(p_y.T, du, out=self.gW[d:])
        if self.gP is not None:  # a trainable table P [N, d_e], shared by the batch
            W_p = self.model.W[d:]
            u_p = p_y @ W_p[:, d:]
            torch.mm(a.T, w[:, d:], out=self.gP).addmm_(ds.T, u_p)
            dp_y = pooled_query(du @ W_p.T, self.model.query, y.shape[1])  # the rule's chain rule is the rule
            self.gP.index_add_(0, y.reshape(-1), dp_y.repeat_interleave(y.shape[1], dim=0))


class AutogradStep(Step):
    """Forward through the module, autograd backward, and ``FlatOptimizer`` on every parameter re-pointed
    into one flat vector, as ``TransformerStep`` does.  (torch.optim's first use imports torch._dynamo:
    about 3 s of every training job on a CPU, more than a small cell's training.)"""

    def __init__(self, model: torch.nn.Module, optimizer: str, lr: float, betas=ADAM_BETAS, task: str = DEFAULT_TASK):
        self.params = list(model.parameters())
        super().__init__(model, self.params, optimizer, lr, betas, task)

    def forward(self, X, y, P, target):
        f, _ = self.model(X, y, P)
        loss = normalized_loss(f, target, y.shape[1], self.task)
        return loss, loss.detach()

    def backward(self, loss) -> None:
        for p in self.params:
            p.grad = None
        loss.backward()
        torch.cat([p.grad.reshape(-1) if p.grad is not None else torch.zeros_like(p).reshape(-1)
                   for p in self.params], out=self.grad)


class FCNStep(AutogradStep):
    """The FCN's step: autograd from the first layer's output on, and the first layer's weight gradient,
    the step's largest product (n_in x m, 72 MB at the paper's largest FCN), written by one ``mm`` straight
    into its place in the flat gradient.  Autograd would allocate that gradient afresh each step (the
    kernel maps and zero-fills 72 MB of pages) and the step then copy it into the flat vector.

    The same kernels on the same operands as ``AutogradStep``: the forward's ``addmm`` is ``nn.Linear``'s, the
    weight's gradient is autograd's ``grad^T @ input`` and the bias's its sum over the batch, so the numbers
    are the same bits (tests/test_step.py)."""

    def __init__(self, model: torch.nn.Module, optimizer: str, lr: float, betas=ADAM_BETAS, task: str = DEFAULT_TASK):
        super().__init__(model, optimizer, lr, betas, task)
        self.first = model.linears[0]
        at = {id(p): k for k, p in enumerate(self.params)}
        self.gW1, self.gb1 = self.grads[at[id(self.first.weight)]], self.grads[at[id(self.first.bias)]]
        first = {id(self.first.weight), id(self.first.bias)}
        self.rest = [(p, gp) for p, gp in zip(self.params, self.grads) if id(p) not in first]

    def forward(self, X, y, P, target):
        m = self.model
        h0 = m.inputs(X, y)
        with torch.no_grad():  # nn.Linear's own product; autograd starts at its output
            z1 = torch.addmm(self.first.bias, h0, self.first.weight.t())
        z1.requires_grad_(True)
        h = torch.relu(z1)
        for lin in m.linears[1:-1]:
            h = torch.relu(lin(h))
        loss = normalized_loss(m.linears[-1](h), target, y.shape[1], self.task)
        return (loss, h0, z1), loss.detach()

    def backward(self, cache) -> None:
        loss, h0, z1 = cache
        for p, _ in self.rest:
            p.grad = None
        loss.backward()
        torch.mm(z1.grad.t(), h0, out=self.gW1)
        torch.sum(z1.grad, 0, out=self.gb1)
        for p, gp in self.rest:
            gp.copy_(p.grad)


# stsq.core.experiment.Arch.step -> the step
STEPS = {"hand": TransformerStep, "autograd": AutogradStep, "fcn": FCNStep}
assert set(STEPS) == set(STEPS_NAMED), "every step the vocabulary names has a class"


def make_step(model: torch.nn.Module, record):
    """The training step of ``model``, built for the cell ``record`` (stsq.core.experiment.CellRecord, or a spec that
    extends it): the step its arch names (``Arch.step``: hand-written for a full transformer, autograd
    otherwise), with the record's optimizer and learning rate (Adam's betas: ``ADAM_BETAS``)."""
    return STEPS[ARCHS[record.arch].step](model, record.optimizer, record.lr, task=record.task)
