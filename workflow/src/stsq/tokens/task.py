"""Two classification tasks on sequences of one-hot tokens (docs/separations.md, "The tasks").

- Index lookup: x_1..x_N are symbols drawn uniformly from an alphabet of d, one-hot in R^d; y is one position,
  uniform in [N]; the label is the symbol at y (d classes).  The model reads the N symbols, then y.
- Bounded Dyck, Dyck-(2, D): words of length N over two bracket pairs, tokens ``( ) [ ]`` one-hot in R^4; the label
  is 1 where the word is well nested with depth at most D, else 0.  Half of each batch is a word of the language,
  drawn step by step (open a bracket of a uniform type, or close the open one, each with probability 1/2 where both
  keep the word completable within N and depth D); the other half is such a word with two of its tokens swapped,
  at two uniform positions, drawn again while the swap leaves the word in the language.  A swap keeps the count of
  every token, so counting brackets does not tell the halves apart (one replaced token would: it always changes a
  count).  The label is recomputed from the tokens: a sample whose tries all stayed in the language keeps label 1.
  y is unused (0).

Each sampler is called as STS_q's (stsq.sts.task.sample_batch): fn(B, N, q, d, generator, task) -> Batch, with the
target the label [B] (int64); each target function recomputes the label from (X, y), so a stored evaluation set is
checked against it (stsq.sts.data).
"""

from __future__ import annotations

import torch

from stsq.sts.task import Batch, random_subsets

DYCK_DEPTH = 2  # D of Dyck-(2, D): the depth of the paper's statement and experiments
OPEN = (0, 2)  # "(" and "[": a token 2 k opens a bracket of type k, 2 k + 1 closes it
DYCK_TOKENS = 4
SWAP_TRIES = 32  # transpositions tried per batch until each sample meant to leave the language has left it


def _one_hot(tokens: torch.Tensor, d: int) -> torch.Tensor:
    return torch.nn.functional.one_hot(tokens, d).to(torch.float32)


def lookup_target(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The symbol at position y: [B, N, d], [B, 1] -> [B] (int64)."""
    return X.argmax(dim=-1).gather(1, y[:, :1]).squeeze(1)


def sample_lookup(batch_size: int, N: int, q: int, d: int, generator: torch.Generator, task: str = "lookup") -> Batch:
    """A batch of index lookup: N uniform symbols of an alphabet of d, one-hot, and one uniform position y."""
    if q != 1:
        raise ValueError(f"index lookup reads one position: q must be 1, got {q}")
    symbols = torch.randint(0, d, (batch_size, N), generator=generator, device=generator.device)
    X = _one_hot(symbols, d)
    y = random_subsets(batch_size, N, 1, generator)
    return Batch(X=X, y=y, target=lookup_target(X, y))


def dyck_target(X: torch.Tensor, y: torch.Tensor | None = None, depth: int = DYCK_DEPTH) -> torch.Tensor:
    """1 where the word X [B, N, 4] (one-hot ``( ) [ ]``) is in Dyck-(2, depth), else 0 ([B], int64).

    The depth after each token is the running count of opens minus closes: it never falls below 0, never exceeds
    ``depth`` and ends at 0.  A close that takes the depth from k to k - 1 closes the last open that took it to k: the
    two have one type.  Per level k, the last such open before each position is a running maximum of its index."""
    tokens = X.argmax(dim=-1)
    B, N = tokens.shape
    kind, opens = tokens // 2, tokens % 2 == 0
    after = torch.cumsum(torch.where(opens, 1, -1), dim=1)
    before = after - torch.where(opens, 1, -1)
    ok = (after >= 0).all(1) & (after <= depth).all(1) & (after[:, -1] == 0)
    index = torch.arange(N, device=X.device).expand(B, N)
    for k in range(1, depth + 1):
        last = torch.where(opens & (after == k), index, -1).cummax(dim=1).values  # the last open to level k, so far
        closes = ~opens & (before == k)
        matched = kind.gather(1, last.clamp_min(0)) == kind
        ok &= ~(closes & ((last < 0) | ~matched)).any(1)
    return ok.to(torch.int64)


def dyck_words(batch_size: int, N: int, generator: torch.Generator, depth: int = DYCK_DEPTH) -> torch.Tensor:
    """``batch_size`` words of Dyck-(2, depth) of length N (even), as tokens [B, N] (the module docstring)."""
    dev = generator.device
    tokens = torch.empty(batch_size, N, dtype=torch.int64, device=dev)
    stack = torch.zeros(batch_size, depth + 1, dtype=torch.int64, device=dev)
    top = torch.zeros(batch_size, dtype=torch.int64, device=dev)
    rows = torch.arange(batch_size, device=dev)
    for t in range(N):
        left = N - t  # tokens still to write, this one included
        can_open = (top < depth) & (top + 1 <= left - 1)
        can_close = top > 0
        coin = torch.rand(batch_size, generator=generator, device=dev) < 0.5
        kind = torch.randint(0, 2, (batch_size,), generator=generator, device=dev)
        opens = can_open & (~can_close | coin)
        closing = stack[rows, (top - 1).clamp_min(0)]
        tokens[:, t] = torch.where(opens, 2 * kind, 2 * closing + 1)
        stack[rows, top] = torch.where(opens, kind, stack[rows, top])
        top = torch.where(opens, top + 1, top - 1)
    return tokens


def sample_dyck(batch_size: int, N: int, q: int, d: int, generator: torch.Generator, task: str = "dyck") -> Batch:
    """A batch of bounded Dyck: half words of the language, half such words with two tokens swapped out of it (the
    module docstring); the label recomputed from the tokens."""
    if d != DYCK_TOKENS:
        raise ValueError(f"bounded Dyck has {DYCK_TOKENS} tokens ( ) [ ]: d must be {DYCK_TOKENS}, got {d}")
    if N % 2:
        raise ValueError(f"a word of Dyck-(2, {DYCK_DEPTH}) has an even length: N = {N}")
    dev = generator.device
    words = dyck_words(batch_size, N, generator)
    todo = torch.rand(batch_size, generator=generator, device=dev) < 0.5  # the samples to take out of the language
    tokens = words.clone()
    rows = torch.arange(batch_size, device=dev)
    for _ in range(SWAP_TRIES):
        if not bool(todo.any()):
            break
        i = torch.randint(0, N, (batch_size,), generator=generator, device=dev)
        j = torch.randint(0, N, (batch_size,), generator=generator, device=dev)
        swapped = words.clone()
        swapped[rows, i], swapped[rows, j] = words[rows, j], words[rows, i]
        out = dyck_target(_one_hot(swapped, DYCK_TOKENS)) == 0
        take = todo & out
        tokens[take] = swapped[take]
        todo &= ~take
    X = _one_hot(tokens, DYCK_TOKENS)
    y = torch.zeros(batch_size, 1, dtype=torch.int64, device=dev)
    return Batch(X=X, y=y, target=dyck_target(X, y))
