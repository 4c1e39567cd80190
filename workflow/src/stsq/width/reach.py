"""How far length generalization reaches: the longest N' at which a transformer stays within the bound.

For one trained model (arch, q, N, d, d_e, steps, seed) and one point of its training (a checkpoint,
split "test", or the final model, split "eval"), the reach is the longest scored length N' > N such
that at every scored N'' with N < N'' <= N' its loss is at most the bound at N'': the oracle at N''
plus GENERALIZES_WITHIN (the bound of the claim length_stochastic), the oracle of the largest d_e
computed at that (q, N) (``bound_d_e``) for every model of it.  One bound per (q, N, N''), whatever
the model's width: the oracle of a narrow d_e itself rises with N'' (its positions stop being
near-orthogonal), and a bound that loosened with it would credit a narrow model with reaching
further.  ``reach_factor`` is N' / N; 1 means no
unseen length is within the bound.  Where the reach is the longest length scored it is a lower bound
(``censored``): the sweep stopped before the model left the bound.  A cell's reach over seeds is the
worst seed's (the reach of the loss of the worst seed at every N'), with the seeds' range beside it.

The theory's expectation (``expected_factor``): N' random unit vectors in d_e dimensions stay
near-orthogonal while d_e grows like q log N' (docs/claims.md, "How far the reach should go").  With
the constant fitted at N by the cell's own need d_e,eps = c q log N, a model of width d_e has the
capacity to separate N' = N^(d_e / d_e,eps) positions: exponential in d_e / q.  It says what the width
allows; what a finite training run reaches is measured.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from stsq.core.claim_records import EPSILON, GENERALIZES_WITHIN
from stsq.core.experiment import ARCHS, LOSS, OK, PROJECTION, model_keys

MODEL = [*model_keys("steps", "seed"), "steps", "seed"]  # one model: arch, q, N, d, width (any new axis), steps, seed
NEED_KEYS = model_keys("width", "seed")  # a model family over widths: arch, q, N, d, steps (any new axis)
REACH_COLUMNS = [*MODEL, "step", "final", "loss_at_N", "reach", "reach_factor", "longest_scored", "censored",
                 "bound_d_e", "expected_factor"]


def _bounds(oracle: pd.DataFrame) -> tuple[dict, dict]:
    """(q, N, N') -> the bound (module docstring), and (q, N) -> the d_e whose oracle it is."""
    widest = oracle.groupby(["q", "N"])["width"].max().to_dict()
    o = oracle[[widest[(q, N)] == w for q, N, w in zip(oracle["q"], oracle["N"], oracle["width"])]]
    bound = {(int(r.q), int(r.N), int(r.N_eval)): float(getattr(r, LOSS)) + GENERALIZES_WITHIN for r in o.itertuples()}
    return bound, {(int(q), int(N)): int(w) for (q, N), w in widest.items()}


def reach_of(losses: dict[int, float], N: int, bound: dict[int, float]) -> tuple[int, bool] | None:
    """The reach of one model at one point of training: (N', censored), from its loss at each scored N'
    (``losses``) and the bound at each (``bound``); None where a scored N' > N has no bound."""
    reach = N
    longer = sorted(L for L in losses if L > N)
    for L in longer:
        if L not in bound:
            return None
        if losses[L] > bound[L]:
            return reach, False
        reach = L
    return reach, bool(longer) and reach == longer[-1]


def expected_factor(N: int, d_e: float, need: float | None) -> float:
    """N^(d_e / need) / N: the reach the width allows (module docstring); NaN without a measured need."""
    if need is None or not math.isfinite(need) or need <= 0:
        return math.nan
    return float(np.exp((d_e / need - 1) * math.log(N)))


def reach_table(table: pd.DataFrame, oracle: pd.DataFrame, needs: dict | None = None) -> pd.DataFrame:
    """The reach of every transformer expected to generalize at every length (stsq.core.experiment.Arch.length)
    and of the other transformers, per seed, at every checkpoint scored at N' > N and at the end.
    ``needs``: (arch, q, N, d, steps) -> the geometric-mean d_e,eps at EPSILON (for ``expected_factor``)."""
    needs = needs or {}
    bound_of, bound_d_e = _bounds(oracle)
    tf = table[table["arch"].map(lambda a: ARCHS[a].transformer).astype(bool) & (table["metric"] == LOSS)
               & (table["status"] == OK) & table["split"].isin(["test", "eval"])]
    rows = []
    keys = [*MODEL, "split", "step"]
    for key, g in tf.groupby(keys):
        ids = dict(zip(keys, key))
        q, N, w, split = ids["q"], ids["N"], ids["width"], ids.pop("split")
        losses = dict(zip(g["N_eval"].astype(int), g["value"].astype(float)))
        if N not in losses or not any(L > N for L in losses):
            continue
        bound = {L: bound_of[(q, N, L)] for L in losses if (q, N, L) in bound_of}
        found = reach_of(losses, N, bound)
        if found is None:
            continue
        reach, censored = found
        rows.append({**ids, "final": split == "eval", "loss_at_N": losses[N], "reach": reach, "reach_factor": reach / N,
                     "longest_scored": max(losses), "censored": censored, "bound_d_e": bound_d_e[(q, N)],
                     "expected_factor": expected_factor(N, w, needs.get(tuple(ids[k] for k in NEED_KEYS)))})
    return pd.DataFrame(rows, columns=REACH_COLUMNS)


def family_reaches(table: pd.DataFrame, oracle: pd.DataFrame, arch: str, q: int, N: int, d: int, steps: int,
                   d_e: int) -> dict:
    """The reach of the ground-truth family at d_e, under the bound the trained models' reach reads, two ways:
    ``own``, at the trained models' own (c, v) (their projection, stsq.sts.oracle.projection_loss: the
    parameters a model has, fixed at every N'; the worst seed's at each N'), and ``refit``, its parameters
    refitted at each N' (the oracle's rows at d_e).  Each (reach factor, censored), or None where a scored N'
    lacks its loss or its bound."""
    bound_of, _ = _bounds(oracle)
    p = table[(table["arch"] == arch) & (table["q"] == q) & (table["N"] == N) & (table["d"] == d)
              & (table["steps"] == steps) & (table["width"] == d_e) & (table["split"] == "eval")
              & (table["metric"] == PROJECTION) & (table["status"] == OK)]
    o = oracle[(oracle["q"] == q) & (oracle["N"] == N) & (oracle["width"] == d_e)]
    out = {}
    for way, losses in (("own", p.groupby("N_eval")["value"].max()), ("refit", o.set_index("N_eval")[LOSS])):
        losses = {int(L): float(v) for L, v in losses.items()}
        bound = {L: bound_of[(q, N, L)] for L in losses if (q, N, L) in bound_of}
        found = reach_of(losses, N, bound) if N in losses and any(L > N for L in losses) else None
        out[way] = None if found is None else (found[0] / N, found[1])
    return out


def needs_at_epsilon(crit: pd.DataFrame) -> dict:
    """(arch, q, N, d, steps) -> the geometric mean over seeds of the resolved d_e,eps at EPSILON."""
    from stsq.width.critical import resolved

    r = resolved(crit[np.isclose(crit["epsilon"], EPSILON)])
    g = r.groupby(NEED_KEYS)["critical_width"]
    return {k: float(np.exp(np.log(v).mean())) for k, v in g}


def cell_reach(reach: pd.DataFrame) -> pd.DataFrame:
    """Per (arch, q, N, d, width, steps, step, final): the worst seed's reach factor (the cell's), the seeds'
    range, whether the worst is censored, the worst seed's loss at N and the expectation."""
    keys = [*MODEL[:-1], "step", "final"]
    rows = []
    for k, g in reach.groupby(keys):
        worst = g.loc[g["reach_factor"].idxmin()]
        rows.append({**dict(zip(keys, k)), "reach_factor": float(worst["reach_factor"]),
                     "lo": float(g["reach_factor"].min()), "hi": float(g["reach_factor"].max()),
                     "censored": bool(worst["censored"]), "loss_at_N_max": float(g["loss_at_N"].max()),
                     "expected_factor": float(g["expected_factor"].iloc[0]), "seeds": len(g)})
    return pd.DataFrame(rows, columns=[*keys, "reach_factor", "lo", "hi", "censored", "loss_at_N_max",
                                       "expected_factor", "seeds"])
