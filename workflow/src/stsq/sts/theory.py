"""The FCN width floor (derived in docs/paper.md, "The exact width floor").

A first layer of width m sees m linear projections of vec(X).  For Gaussian X
the best any later layers can do from those projections and y is linear, and
averaging over y the normalized loss is at least

    1 - q/N - (m - d)(N - q) / (d N (N - 1))          for d <= m <= N d,
    1 - m q / (N d)                                    for m < d,
    0                                                  for m >= N d.

E[A_y^T A_y] of the selection map A_y = (1/q) 1_y^T (x) I_d has eigenvalue 1/N
on d directions and (N - q)/(q N (N - 1)) on the other (N - 1) d; the best
m-dimensional subspace keeps the top m.
"""

from __future__ import annotations

import itertools

import numpy as np


def width_floor(N: int, d: int, q: int, m: int) -> float:
    """Lower bound on the normalized loss of any FCN with first-layer width m on STS_q."""
    if not (1 <= q <= N and d >= 1 and m >= 0):
        raise ValueError(f"need 1 <= q <= N, d >= 1, m >= 0; got N={N}, d={d}, q={q}, m={m}")
    if m >= N * d:
        return 0.0
    if m <= d:
        return 1.0 - m * q / (N * d)
    return 1.0 - q / N - (m - d) * (N - q) / (d * N * (N - 1))


def width_needed(N: int, d: int, q: int, eps: float) -> float:
    """m*(eps): the smallest first-layer width whose floor is at most eps (the floor solved for m),

        m*(eps) = d + (1 - q/N - eps) d N (N - 1) / (N - q)     (for eps <= 1 - q/N),

    N d at eps = 0; below d where eps > 1 - q/N.  No FCN narrower than this reaches loss eps."""
    if not (1 <= q <= N and d >= 1 and 0 <= eps <= 1):
        raise ValueError(f"need 1 <= q <= N, d >= 1, 0 <= eps <= 1; got N={N}, d={d}, q={q}, eps={eps}")
    if q == N or eps >= 1 - q / N:  # m <= d: the floor is 1 - m q / (N d)
        return max(0.0, (1 - eps) * N * d / q)
    return d + (1 - q / N - eps) * d * N * (N - 1) / (N - q)


def width_floor_exact(N: int, d: int, q: int, m: int) -> float:
    """The same bound by brute force: build E[A_y^T A_y] over all q-subsets, keep its top m eigenvalues."""
    subsets = list(itertools.combinations(range(N), q))
    M = np.zeros((N, N))
    for y in subsets:
        v = np.zeros(N)
        v[list(y)] = 1.0 / q
        M += np.outer(v, v)
    M /= len(subsets)
    E = np.kron(M, np.eye(d))  # E[A_y^T A_y] on vec(X) = (x_1; ...; x_N)
    eig = np.sort(np.linalg.eigvalsh(E))[::-1]
    kept = eig[: min(m, N * d)].sum()
    return float((eig.sum() - kept) / (d / q))
