"""The checks: bounds every correct pipeline obeys (the FCN's exact width floor, docs/paper.md), listed apart from the
paper's claims.  A model that learned nothing obeys them; a violation is a bug (the model sees the target, a width
is mislabelled).  Each record beside the function that measures it."""

from __future__ import annotations

import math

import numpy as np

from stsq.claims.view import final, spread
from stsq.core import experiment as ex
from stsq.core.claim_records import CHECK, SAMPLING_Z, Claim, Q
from stsq.core.experiment import LOSS_SE, fcn_arch
from stsq.sts.theory import width_floor, width_needed
from stsq.width.critical import ABOVE


def _fcn_floor(claim, cell, arch):
    """fcn_floor: every seed's final loss against the exact floor at its width, at the widths m < N d where the
    floor is positive, allowing SAMPLING_Z standard errors of the evaluation set's estimate (the floor is an
    expectation; the loss a mean over n_eval samples)."""
    q, N, d, ev = cell.q, cell.N, cell.d, cell.sweep.ev
    fcn = ev[(ev["arch"] == arch) & (ev["q"] == q) & (ev["N"] == N) & (ev["d"] == d) & (ev["N_eval"] == N)]
    se = final(cell.sweep.table, LOSS_SE)  # every budget's models, not only the largest's
    widths = sorted(int(w) for w in fcn["width"].unique())
    below = fcn[fcn["width"] < N * d]
    if below.empty:
        return [claim.untested(q, N, d, f"every FCN width (m in {widths}) is >= N d = {N * d}, where the floor "
                               "is 0: no loss can violate it", f"{arch} m in {widths}")]
    se = se[[*ex.model_keys(), "N_eval", "value"]].rename(columns={"value": "se"})
    f = below.merge(se, how="left", on=[*ex.model_keys(), "N_eval"])
    f["se"] = f["se"].fillna(0.0)  # a table without standard errors: compared exactly
    floor = f.apply(lambda r: width_floor(int(r["N"]), int(r["d"]), int(r["q"]), int(r["width"])), axis=1)
    gap = f["value"] - floor
    z = (gap / f["se"].where(f["se"] > 0)).min()
    sigmas = f"; lowest (loss - floor) / SE {z:.2g}" if np.isfinite(z) else ""
    at = ", ".join(f"m={int(m)}: floor {width_floor(N, d, q, int(m)):.3g}, loss {g['value'].min():.3g}"
                   for m, g in f.groupby("width"))
    ok = bool((gap + SAMPLING_Z * f["se"]).min() >= 0)
    widths = sorted(int(w) for w in f["width"].unique())
    return [claim.judged(q, N, d, f"{arch} m in {widths} (< N d = {N * d})",
                         f"loss - floor {spread(gap)}{sigmas}; {at} (lowest seed)"
                         + ("" if ok else " (FAIL: a loss below the exact floor: a bug, e.g. the model sees the target "
                            "or its width is mislabelled)"), float(gap.min()), ok)]




def _fcn_need_floor(claim, s, q):
    """Every FCN family (N, d, steps, seed) at every eps whose grid has a width below m*(eps): the smallest grid
    width at which it reached eps (a resolved crossing's upper width, or the smallest width where even that
    reached eps) against m*(eps); above m*(eps) everywhere no model can violate it."""
    crit, ev = s.crit, s.ev
    a = crit[(crit["arch"] == fcn_arch()) & (crit["q"] == q) & (crit["censored"] != ABOVE)]
    grid = ev[(ev["arch"] == fcn_arch()) & (ev["q"] == q)].groupby(["N", "d", "steps"])["width"].min()
    if a.empty:
        return [claim.untested(q, "all", "all", "no FCN crossing of any eps")]
    star = a.apply(lambda r: width_needed(int(r["N"]), int(r["d"]), q, float(r["epsilon"])), axis=1)
    smallest = a.apply(lambda r: grid.get((r["N"], r["d"], r["steps"]), math.inf), axis=1)
    testable = smallest < star
    if not testable.any():
        worst = (smallest / star).min()
        return [claim.untested(q, "all", "all", f"every grid width is above m*(eps) (the smallest at {worst:.2f} "
                               "m*(eps)): no model can reach eps below it")]
    t = a[testable]
    reached = t["width_above"].where(t["censored"] == "none", t["critical_width"])
    top = reached / star[testable]
    interp = (t["critical_width"] / star[testable])[t["censored"] == "none"]
    worst = t.loc[top.idxmin()]
    ok = bool(top.min() >= 1)
    return [claim.judged(q, "all", "all", f"{fcn_arch()}, {len(t)} crossings with a grid width below m*(eps)",
                         f"the width that reached eps / m*(eps) >= {top.min():.3g} (at N={int(worst['N'])} "
                         f"d={int(worst['d'])} eps={worst['epsilon']:g}); interpolated m_eps / m*(eps) "
                         f"{spread(interp) if len(interp) else '-'}"
                         + ("" if ok else " (FAIL: a model reached eps at a width the exact floor forbids: a bug)"),
                         float(top.min()), ok)]




FCN_FLOOR = Claim(
    "fcn_floor", "no FCN beats the exact width floor",
    "every seed's final loss minus the floor at its width m, at the widths m < N d where the floor is positive",
    f">= -{SAMPLING_Z:g} standard errors of the loss's estimate",
    "exact bound (docs/paper.md): a first layer of width m sees m projections of vec(X); a check of the "
    "pipeline, not a test of the paper: a model that learned nothing obeys it. The floor is an expectation, "
    "the loss a mean over n_eval samples: below it by sampling error is no violation. At m >= N d the floor "
    "is 0 and no loss can violate it",
    "an FCN width below N d", kind=CHECK,
    value="the smallest loss minus the floor, over seeds and widths",
    reads=ex.FCN_ROLE, figures=("separation",), measure=_fcn_floor, needs=("floor",))

FCN_NEED_FLOOR = Claim(
    "fcn_need_floor", "no FCN needs less width than the exact floor allows",
    "every critical width whose grid has a width below the floor's m*(eps): the smallest grid width at which "
    "the model reached eps, against m*(eps) (the interpolated m_eps beside it)", ">= m*(eps)",
    "exact bound: a check of the pipeline. Only a measured width is evidence; the log-log interpolation "
    "between two grid widths may dip below m*(eps) where the loss curve bends. Where every grid width is "
    "above m*(eps), no model can violate it",
    "a grid width below m*(eps)", kind=CHECK,
    value="the smallest ratio of the width that reached eps to m*(eps)",
    scope=Q, reads=ex.FCN_ROLE, figures=("scaling",), measure=_fcn_need_floor, needs=("floor",))
