"""The width each model needs: where its final loss at N' = N crosses a target loss eps, as a number.

For one (arch, q, N, d, steps, seed) the final loss is known at the widths of the grid, w_1 < ... < w_K.
The needed (critical) width is found between the first width whose loss is at most eps, w_k, and the
width before it, w_(k-1), by interpolating log loss linearly in log width:

    log w_eps = log w_(k-1) + (log eps - log L_(k-1)) (log w_k - log w_(k-1)) / (log L_k - log L_(k-1)).

Where no bracket exists the value is a bound, marked and never clipped to a grid point as if measured:
``censored`` is "below" when the smallest width already reaches eps (w_eps <= w_1, an upper bound) and
"above" when no width does (w_eps > w_K, a lower bound).  ``bracket`` is w_k / w_(k-1), the grid's
resolution at the crossing (a fit counts only points resolved within a factor RESOLUTION).

Summaries over seeds are geometric means with the seed range [min, max] as the interval; a fit's slope
is fitted per seed (least squares in log-log) and reported as the mean with the seed range.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from stsq.core.claim_records import EPSILON, EPSILONS, RESOLUTION
from stsq.core.experiment import ARCHS, LOSS, OK, model_keys

FAMILY_KEYS = model_keys("width", "seed")  # a model family over widths: arch, q, N, d, steps (and any new axis)
CRITICAL_COLUMNS = [*FAMILY_KEYS, "epsilon", "seed", "critical_width", "censored", "width_below", "width_above",
                    "bracket"]
BELOW, ABOVE, NONE = "below", "above", "none"


def final_losses(table: pd.DataFrame) -> pd.DataFrame:
    """Each trained model's final loss at N' = N (split eval)."""
    t = table[(table["split"] == "eval") & (table["metric"] == LOSS) & (table["status"] == OK)]
    return t[t["N_eval"] == t["N"]]


def crossing(widths, losses, eps: float) -> dict:
    """The critical width of one model family at one target ``eps`` (see the module docstring)."""
    order = np.argsort(widths)
    w = np.asarray(widths, dtype=float)[order]
    L = np.asarray(losses, dtype=float)[order]
    hit = np.flatnonzero(L <= eps)
    if hit.size == 0:
        return {"critical_width": float(w[-1]), "censored": ABOVE, "width_below": float(w[-1]),
                "width_above": math.nan, "bracket": math.nan}
    k = int(hit[0])
    if k == 0:
        return {"critical_width": float(w[0]), "censored": BELOW, "width_below": math.nan,
                "width_above": float(w[0]), "bracket": math.nan}
    lw0, lw1 = math.log(w[k - 1]), math.log(w[k])
    lL0, lL1 = math.log(L[k - 1]), math.log(max(L[k], 1e-300))
    frac = (math.log(eps) - lL0) / (lL1 - lL0)
    return {"critical_width": float(math.exp(lw0 + frac * (lw1 - lw0))), "censored": NONE,
            "width_below": float(w[k - 1]), "width_above": float(w[k]), "bracket": float(w[k] / w[k - 1])}


def critical_widths(table: pd.DataFrame, epsilons=EPSILONS) -> pd.DataFrame:
    """Per (arch, q, N, d, steps, seed) and target eps: the critical width (stsq.width.critical.CRITICAL_COLUMNS)."""
    ev = final_losses(table)
    rows = []
    keys = model_keys("width")
    for key, g in ev.groupby(keys):
        ids = dict(zip(keys, key))
        for eps in epsilons:
            rows.append({**ids, "epsilon": eps, **crossing(g["width"].to_numpy(), g["value"].to_numpy(), eps)})
    return pd.DataFrame(rows, columns=CRITICAL_COLUMNS)


def resolved(crit: pd.DataFrame) -> pd.DataFrame:
    """The measured points a fit may use: not censored, bracketed by widths at most RESOLUTION apart."""
    return crit[(crit["censored"] == NONE) & (crit["bracket"] <= RESOLUTION * (1 + 1e-9))]


def summary(crit: pd.DataFrame) -> pd.DataFrame:
    """Per (arch, q, N, d, steps, epsilon): the geometric mean over seeds, the seed range, and the
    censoring of the seeds ("none", "below", "above", or "mixed")."""
    rows = []
    keys = [*FAMILY_KEYS, "epsilon"]
    for key, g in crit.groupby(keys):
        kinds = set(g["censored"])
        rows.append(dict(zip(keys, key),
                         width=float(np.exp(np.log(g["critical_width"]).mean())), lo=float(g["critical_width"].min()),
                         hi=float(g["critical_width"].max()), seeds=len(g),
                         censored=kinds.pop() if len(kinds) == 1 else "mixed"))
    return pd.DataFrame(rows, columns=[*keys, "width", "lo", "hi", "seeds", "censored"])


def scale_of(arch: str, q, N, d):
    """The problem size a width is fitted against: N d for the FCN, q log N for a transformer."""
    if not ARCHS[arch].transformer:
        return np.asarray(N) * np.asarray(d)
    return np.asarray(q) * np.log(np.asarray(N, dtype=float))


def fit(points: pd.DataFrame, arch: str) -> dict | None:
    """One seed's least-squares fit of log width: against log scale_of (``slope``) and, where N and d both
    vary, against log N and log d (``exp_N``, ``exp_d``; for a transformer, log(q log N) and log d).
    None with fewer than two distinct sizes."""
    x = np.log(scale_of(arch, points["q"], points["N"], points["d"]).astype(float))
    y = np.log(points["critical_width"].to_numpy(dtype=float))
    if len(np.unique(np.round(x, 9))) < 2:
        return None
    out = {"slope": float(np.polyfit(x, y, 1)[0]), "exp_N": math.nan, "exp_d": math.nan, "points": len(points)}
    n_axis = np.log(points["N"].to_numpy(dtype=float)) if not ARCHS[arch].transformer else x
    d_axis = np.log(points["d"].to_numpy(dtype=float))
    if len(np.unique(n_axis)) >= 2 and len(np.unique(d_axis)) >= 2 and len(points) >= 4:
        A = np.column_stack([np.ones(len(y)), n_axis, d_axis])
        if np.linalg.matrix_rank(A) == 3:
            coef = np.linalg.lstsq(A, y, rcond=None)[0]
            out["exp_N"], out["exp_d"] = float(coef[1]), float(coef[2])
    return out


def seed_fits(crit: pd.DataFrame, arch: str, eps: float = EPSILON) -> pd.DataFrame:
    """Per (q, steps, seed): ``fit`` over the resolved points of ``arch`` at target ``eps``."""
    pts = resolved(crit[(crit["arch"] == arch) & np.isclose(crit["epsilon"], eps)])
    rows = []
    keys = model_keys("arch", "N", "d", "width")  # q, steps (any new axis) and seed: one fit over N and d each
    for key, g in pts.groupby(keys):
        f = fit(g, arch)
        if f is not None:
            rows.append({**dict(zip(keys, key)), **f})
    return pd.DataFrame(rows, columns=[*keys, "slope", "exp_N", "exp_d", "points"])
