"""The claims about the width each model needs (stsq.width.critical), per q across (N, d): the FCN's grows at least like
N d and depends on the product, more samples lower it toward the exact floor; the transformer's does not grow with d
and grows like q log N or slower: each a law fitted below the largest size and tested at it, one-sided, with a
margin the seeds' spread sets, the law next to it and the test's power beside it (stsq.claims.rivals).  Each record
beside the function that measures it."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from stsq.claims.rivals import (
    AT_LEAST,
    N_D,
    N_D_OVER_LOG,
    Q_LOG_N,
    Q_LOG_N_D_QUARTER,
    Q_SQRT_N,
    SCAN_TOP,
    first_rejected,
    grower,
    held_out,
    tf_law,
)
from stsq.claims.view import spread
from stsq.core import experiment as ex
from stsq.core.claim_records import BUDGET, EPSILON, EPSILONS, OURS, RESOLUTION, SWEEP, SWEEP_BY_Q, Claim, Q
from stsq.core.experiment import LOSS, fcn_arch, paper_model
from stsq.sts.theory import width_needed
from stsq.width.critical import ABOVE, BELOW, NONE, crossing, resolved, seed_fits, summary

PRODUCT_FACTOR = 2.0  # cells with the same N d need FCN widths within this factor of each other
PRODUCT_EXPONENT_GAP = 0.5  # ... and the fitted exponents of N and d differ by at most this (floor: 1 and 1)
TF_D_EXPONENT_MAX = 0.5  # d log d_e,eps / d log d of the transformer: theory 0, the FCN's 1
TF_SLOPE_MAX = 1.5  # d log d_e,eps / d log(q log N) of the transformer: the theory says 1 (or less)
BUDGET_SPREAD = 1.25  # fcn_budget: the larger budget's need at most this x the smaller's (the seeds' spread)


def _need_text(crit, arch, steps, eps=EPSILON) -> str:
    """The geometric-mean critical width per (N, d), censored ones as bounds (> or <)."""
    s = summary(crit[(crit["arch"] == arch) & (crit["steps"] == steps) & np.isclose(crit["epsilon"], eps)])
    mark = {"above": ">", "below": "<", "mixed": "~", "none": ""}
    q = s["q"].nunique() > 1  # name q where the sweep has several
    return ", ".join(f"({f'q={int(r.q)},' if q else ''}N={int(r.N)},d={int(r.d)}) {mark[r.censored]}{r.width:.3g}"
                     for r in s.itertuples())


def _like_for_like(crit, arch, steps):
    """The (q, N, d, seed) points of ``arch`` resolved at every eps of EPSILONS, and, per eps, the (N, d) left
    out because a seed's need there is censored or too coarse (its reason)."""
    c = crit[(crit["arch"] == arch) & (crit["steps"] == steps)]
    keys = ["q", "N", "d", "seed"]
    ok = [set(map(tuple, resolved(c[np.isclose(c["epsilon"], e)])[keys].to_numpy().tolist())) for e in EPSILONS]
    common = set.intersection(*ok) if ok else set()
    dropped = {}
    for e in EPSILONS:
        at = c[np.isclose(c["epsilon"], e)]
        out = at[~at[keys].apply(tuple, axis=1).isin(common)]
        fine = set(map(tuple, resolved(at)[keys].to_numpy().tolist()))
        for (q, N, d), g in out.groupby(["q", "N", "d"], sort=False):
            bad = [r for r in g.itertuples() if (r.q, r.N, r.d, r.seed) not in fine]
            if not bad:  # resolved at this eps, left out because of another
                why = "resolved (left out at another eps)"
            else:
                why = {"above": "no width reached it", "below": "the smallest width already did"}.get(
                    bad[0].censored, "bracket too coarse" if bad[0].censored == "none" else "")
            dropped.setdefault((int(q), int(N), int(d)), set()).add(f"{e:g}: {why}" if why else f"{e:g}")
    return common, dropped


def _slopes_by_eps(crit, arch, steps, law=Q_LOG_N) -> str:
    """The slope at every eps, fitted on the same points: the (q, N, d, seed) resolved at every eps; a
    transformer's against ``law`` at one q (stsq.claims.rivals.tf_law)."""
    common, dropped = _like_for_like(crit, arch, steps)
    c = crit[(crit["arch"] == arch) & (crit["steps"] == steps)]
    same = c[c[["q", "N", "d", "seed"]].apply(tuple, axis=1).isin(common)]
    parts = []
    for eps in EPSILONS:
        f = seed_fits(same, arch, eps)
        parts.append(f"{eps:g}: {f['slope'].mean() / law.log_power:.2f}" if len(f) else f"{eps:g}: -")
    text = "slope at eps " + ", ".join(parts) + " (on the (N, d) resolved at every eps"
    if dropped:
        text += "; left out: " + ", ".join(f"(q={q},N={N},d={d}) at eps {'; '.join(sorted(w))}"
                                            for (q, N, d), w in sorted(dropped.items()))
    return text + ")"




@dataclass
class Fits:
    """An arch's critical widths at one budget (``points``), its per-seed fits, and what its rows say: the cell,
    the need at EPSILON per (N, d), the grid of final losses at N' = N, and ``one_size``: why no growth can be
    measured (one N and one d), else empty."""

    arch: str
    steps: int
    points: pd.DataFrame
    fits: pd.DataFrame
    cell: str
    need: str
    grid: pd.DataFrame
    one_size: str


def _fits(crit, ev, arch, steps) -> Fits:
    c = crit[(crit["arch"] == arch) & (crit["steps"] == steps)]
    need = f"{ex.width_name(arch)}_eps at {EPSILON:g}: {_need_text(c, arch, steps)}"
    one = (f"one N ({int(c['N'].iloc[0])}) and one d ({int(c['d'].iloc[0])}) in the sweep; {need}"
           if c["N"].nunique() == 1 and c["d"].nunique() == 1 else "")
    grid = ev[(ev["arch"] == arch) & (ev["steps"] == steps) & (ev["N_eval"] == ev["N"])]
    return Fits(arch, steps, c, seed_fits(c, arch), f"{arch}, {steps} steps", need, grid, one)


def _fcn_fits(s, q, steps) -> Fits:
    """The FCN's fits at one q and budget (its grid is placed by N d)."""
    return _fits(s.crit[s.crit["q"] == q], s.ev[s.ev["q"] == q], fcn_arch(), steps)


def _tf_fits(s) -> Fits | None:
    """The paper model's fits over the sweep, at its largest budget; None where it has no critical width."""
    a = s.crit[s.crit["arch"] == paper_model()]
    return None if a.empty else _fits(s.crit, s.ev, paper_model(), int(a["steps"].max()))


def _at_epsilon(points):
    return resolved(points[np.isclose(points["epsilon"], EPSILON)])


def _budget_part(ok_pts, q):
    """The FCN's m_eps / m*(eps) at each N d (geometric mean over its (N, d) and seeds) and the slope of that
    ratio against N d (per seed, mean): the growth the sample budget, not the width floor, explains."""
    r = ok_pts.assign(Nd=ok_pts["N"] * ok_pts["d"], ratio=bracket_above_floor(ok_pts, q)[0])
    by_Nd = r.groupby("Nd")["ratio"].apply(lambda v: float(np.exp(np.log(v).mean())))
    slopes = [float(np.polyfit(np.log(g["Nd"]), np.log(g["ratio"]), 1)[0]) for _, g in r.groupby("seed")
              if g["Nd"].nunique() >= 2]
    return by_Nd, (float(np.mean(slopes)) if slopes else math.nan)


def _resolvable_slope(grid):
    """The largest slope of log m_eps against log(N d) the FCN's grid can resolve: from its smallest width at
    the smallest N d to its largest width at the largest N d."""
    g = grid.assign(Nd=grid["N"] * grid["d"])
    lo, hi = g["Nd"].min(), g["Nd"].max()
    if hi <= lo:
        return math.nan
    return math.log(g[g["Nd"] == hi]["width"].max() / g[g["Nd"] == lo]["width"].min()) / math.log(hi / lo)



def _testable(at):
    """The needs at one eps a held-out test reads: the resolved ones and the bounds (it takes a bound only on
    its safe side, stsq.claims.rivals.held_out)."""
    return pd.concat([resolved(at), at[at["censored"] != NONE]])


def _limits(grid):
    """The grid's smallest and largest width at each (q, N, d): where a grown need becomes a bound."""
    return grid.groupby(["q", "N", "d"])["width"].agg(lo="min", hi="max").reset_index()


def _power(law, x, side="a >= ") -> str:
    """What the power scan found, as a row says it."""
    return f"no {law} with its exponent in [0, {SCAN_TOP:g}] FAILs here" if x is None \
        else f"this sweep rejects {law} for {side}{x:.2f}"


def _fcn_test(pts):
    return held_out(_testable(pts).assign(Nd=lambda t: t["N"] * t["d"]), "Nd", N_D_OVER_LOG, N_D, group=("q",),
                    side=AT_LEAST)


def fcn_power(points, grid):
    """The power scan of fcn_scaling (stsq.claims.rivals.first_rejected): the largest exponent a whose need, each
    seed's grown like (N d)^a down from its own need at the largest N d, FAILs the held-out test (below
    N d / log(N d)); and the smallest a that PASSes it (not below N d)."""
    at = points.assign(Nd=points["N"] * points["d"])
    lim = _limits(grid)

    grow = grower(at, lim, "Nd", ("q", "seed"), anchor="max")

    def test(a):
        return _fcn_test(grow(a).drop(columns="Nd"))
    fails = first_rejected(lambda a: test(a).failed, rising=False)
    passes = first_rejected(lambda a: (lambda t: t.decided and not t.bounded and not t.below("rival").any())(test(a)))
    return fails, passes


def _fcn_scaling(claim, s, q, steps):
    f = _fcn_fits(s, q, steps)
    if f.one_size:
        return [claim.untested(q, "all", "all", f.one_size, f.cell)]
    at = f.points[np.isclose(f.points["epsilon"], EPSILON)]
    test = _fcn_test(at)
    by_eps = _slopes_by_eps(f.points, f.arch, steps)
    slopes = f.fits["slope"]
    ceiling = _resolvable_slope(f.grid)
    ok_pts = _at_epsilon(f.points)
    by_Nd, budget = _budget_part(ok_pts, q) if len(ok_pts) else ({}, math.nan)
    slope = (f"slope {spread(slopes)}; the grid resolves slopes up to {ceiling:.2f}"
             + (" (at its ceiling: the true slope may be larger)" if len(slopes) and slopes.max() >= 0.9 * ceiling
                else "") if len(slopes) else "no slope (fewer than two N d with resolved m_eps)")
    ratio = ("m_eps / m*(eps): " + ", ".join(f"N d={int(Nd)}: {v:.2f}" for Nd, v in by_Nd.items())
             + (f", that ratio's slope {budget:.2f}: " if math.isfinite(budget) else "")
             + ("the samples bind (the part of the slope above the floor's 1 is the budget's; fcn_budget, "
                "`make budget`, measures it at 4x the steps)" if math.isfinite(budget) and budget > 0.25 else
                "the need follows the floor" if math.isfinite(budget) else "")) if len(ok_pts) else ""
    if not test.decided:
        return [claim.untested(q, "all", "all", f"{test.text()}; {slope}; {f.need}", f.cell)]
    fails, passes = fcn_power(at, f.grid)
    power = (f"power: {_power('(N d)^a', fails, 'a <= ')} (below {N_D_OVER_LOG.name}, each seed's "
             f"need grown like (N d)^a down from the largest N d); "
             + ("it PASSes none" if passes is None else f"it PASSes a >= {passes:.2f}"))
    below_nd = test.below("rival")
    parts = [test.text(), f"against {N_D.name}: " + ", ".join(
        f"(N={int(r.N)},d={int(r.d)}) predicts {r.rival:.3g} [{r.rival_lo:.3g}, {r.rival_hi:.3g}]"
        f"{' (below it beyond the margin)' if below_nd.iloc[i] else ''}" for i, r in test.cells.iterrows()),
        power, slope, ratio, by_eps, f.need]
    text = "; ".join(p for p in parts if p)
    value = float(slopes.min()) if len(slopes) else math.nan
    if test.failed:
        return [claim.judged(q, "all", "all", f.cell, f"{text} (FAIL: the need grows slower than even "
                             f"{N_D_OVER_LOG.name})", value, False)]
    if test.bounded:
        return [claim.untested(q, "all", "all", f"some m_eps only bounded; {text}", f.cell)]
    if below_nd.any():
        return [claim.untested(q, "all", "all", f"the need grows slower than {N_D.name} but not, beyond the "
                               f"seeds' spread, slower than {N_D_OVER_LOG.name}: the statement, up to its log "
                               f"factor, allows it, and the sweep cannot tell it from that law; {text}", f.cell)]
    return [claim.judged(q, "all", "all", f.cell, text, value, True)]


def _joint(fits):
    exps = fits.dropna(subset=["exp_d"])
    return exps, (f"exponents N {spread(exps['exp_N'])}, d {spread(exps['exp_d'])}" if len(exps) else "")


def _fcn_product(claim, s, q, steps):
    """The geometric means of the resolved seeds, grouped by N d."""
    f = _fcn_fits(s, q, steps)
    if f.one_size:
        return [claim.untested(q, "all", "all", f.one_size, f.cell)]
    ok_pts = _at_epsilon(f.points)
    exps, joint = _joint(f.fits)
    t = summary(ok_pts).assign(Nd=lambda t: t["N"] * t["d"])
    shared = {int(Nd): g for Nd, g in t.groupby("Nd") if len(g) >= 2}
    if not shared:
        return [claim.untested(q, "all", "all", f"no value of N d reached by two (N, d) with resolved m_eps; "
                               f"{f.need}", f.cell)]
    ratios = {Nd: float(g["width"].max() / g["width"].min()) for Nd, g in shared.items()}
    text = "; ".join(f"N d={Nd}: " + ", ".join(f"(N={int(r.N)},d={int(r.d)}) {r.width:.3g}" for r in g.itertuples())
                     + f" (ratio {ratios[Nd]:.2f})" for Nd, g in shared.items())
    ratios_ok = max(ratios.values()) <= PRODUCT_FACTOR
    ok, halves = ratios_ok, [f"ratios {'within' if ratios_ok else 'above'} {PRODUCT_FACTOR:g}"]
    if len(exps):  # where N and d both vary, their fitted exponents must agree too
        gap = (exps["exp_N"] - exps["exp_d"]).abs()
        text += f"; {joint}; |exponent N - exponent d| {spread(gap)}"
        gap_ok = bool(gap.max() <= PRODUCT_EXPONENT_GAP)
        ok = ok and gap_ok
        halves.append(f"exponent gap {gap.max():.2f} {'within' if gap_ok else 'above'} {PRODUCT_EXPONENT_GAP:g}")
    if not ok:
        by_Nd, budget = _budget_part(ok_pts, q)
        text += (f" (FAIL: {'; '.join(halves)}. m_eps / m*(eps) "
                 + ", ".join(f"{v:.2f} at N d={int(Nd)}" for Nd, v in by_Nd.items())
                 + (": the need is not the width floor's, the sample budget binds and adds to it unevenly in N "
                    "and d; at 4x the steps (`make budget`) the need falls toward the floor"
                    if by_Nd.max() > 1.5 else "") + ")")
    return [claim.judged(q, "all", "all", f.cell, text, max(ratios.values()), ok)]


def _fcn_budget(claim, s, q):
    crit = s.crit
    a = resolved(crit[(crit["arch"] == fcn_arch()) & (crit["q"] == q) & np.isclose(crit["epsilon"], EPSILON)])
    budgets = sorted(crit[(crit["arch"] == fcn_arch()) & (crit["q"] == q)]["steps"].unique())
    if len(budgets) < 2:
        return [claim.untested(q, "all", "all", f"one training budget ({budgets[0] if budgets else 'no FCN'})")]
    parts, ok, worst = [], True, -math.inf
    for (N, d), g in summary(a).groupby(["N", "d"]):
        if g["steps"].nunique() < 2:
            continue
        g = g.sort_values("steps")
        small, large = g.iloc[0], g.iloc[-1]
        floor = width_needed(int(N), int(d), q, EPSILON)
        seeds = a[(a["N"] == N) & (a["d"] == d) & (a["steps"] == large["steps"])]
        top = float(bracket_above_floor(seeds, q)[1].min())
        ok &= bool(large["width"] <= BUDGET_SPREAD * small["width"] and top >= 1)
        worst = max(worst, float(large["width"] / small["width"]))
        parts.append(f"(N={int(N)},d={int(d)}) {int(small['steps'])} steps {small['width']:.3g} -> "
                     f"{int(large['steps'])} steps {large['width']:.3g} (m* {floor:.3g}; reached eps at "
                     f">= {top:.3g} m*)")
    if not parts:
        return [claim.untested(q, "all", "all", "no (N, d) with resolved m_eps at two budgets")]
    return [claim.judged(q, "all", "all", f"{fcn_arch()}, steps {[int(b) for b in budgets]}", "; ".join(parts),
                         worst, ok)]


def bracket_above_floor(a, q):
    """Per resolved critical width: the smallest grid width at which the model reached eps, over m*(eps).
    Below 1, a measured model beat the exact floor; the interpolated m_eps alone may dip below m*(eps) where
    the loss curve bends between two grid widths (the floor drops to 0 at m = N d)."""
    floor = a.apply(lambda r: width_needed(int(r["N"]), int(r["d"]), q, float(r["epsilon"])), axis=1)
    return a["critical_width"] / floor, a["width_above"] / floor


def _tf_row(claim, q, cell, need, test, slope_fail, first_text, what, value, power):
    """tf_scaling / tf_d_free: FAIL where ``what`` (the slope, the exponent) is above its limit
    (``slope_fail``, its text) or the theory does not fit at the held-out size; else NOT TESTED where a need
    is only a bound or the sweep cannot tell the rival from the theory (the margin); else PASS."""
    body = "; ".join(p for p in (first_text, test.text(), test.rival_text(), power) if p)
    failed = ([slope_fail] if slope_fail else []) + (
        [f"the need at the held-out {test.axis} lies above what {test.theory.name} predicts, beyond the margin"]
        if test.failed else [])
    if failed:
        return claim.judged(q, "all", "all", cell, f"{body} (FAIL: {'; '.join(failed)}); {need}", value, False)
    if not test.conclusive:
        why = "some need only bounded below (> the largest width); " if test.bounded else ""
        return claim.untested(q, "all", "all", f"{why}{body}; {need}", cell)
    return claim.judged(q, "all", "all", cell, f"{body}; {need}", value, True)


def oracle_needs(oracle: pd.DataFrame | None, shapes) -> dict:
    """The ground-truth family's own d_e_eps at each (q, N) of ``shapes``: where its loss at N' = N, over
    the d_e it was computed at, crosses EPSILON (stsq.width.critical.crossing: its ``critical_width`` and
    ``censored``, a bound where it stays above eps or the smallest d_e already reaches it)."""
    out = {}
    if oracle is None:
        return out
    for q, N in sorted(set(shapes)):
        o = oracle[(oracle["q"] == q) & (oracle["N"] == N) & (oracle["N_eval"] == N)]
        if len(o) >= 2:
            out[q, N] = crossing(o["width"], o[LOSS], EPSILON)
    return out


def _oracle_text(oracle, pts, law=Q_LOG_N) -> str:
    """The ground-truth family's own d_e_eps at the (q, N) of ``pts`` and its slope against ``law``: how much
    of the transformer's growth the construction itself has (at q >= 3 the cross-terms inside y)."""
    needs = oracle_needs(oracle, zip(pts["q"].astype(int), pts["N"].astype(int)))
    if not needs:
        return ""
    mark = {ABOVE: "> ", BELOW: "<= ", NONE: ""}
    text = "the ground-truth family's own d_e_eps: " + ", ".join(
        f"q={q} N={N} {mark[x['censored']]}{x['critical_width']:.3g}" for (q, N), x in needs.items())
    slopes = []
    for q in sorted({q for q, _ in needs}):  # per q, over N (resolved only), as the transformer's slopes are
        got = {N: x["critical_width"] for (q_, N), x in needs.items() if q_ == q and x["censored"] == NONE}
        if len(got) >= 2:
            x = law.log_size(q, list(got), 1)
            slopes.append(f"q={q} {np.polyfit(x, np.log(list(got.values())), 1)[0]:.2f}")
    return text + (f" (its slope against {law.name}: {', '.join(slopes)})" if slopes else "")




class FamilyNeed:
    """The ground-truth family's own d_e_eps at each (q, N), as a law of stsq.claims.rivals (its ``name`` and
    ``log_size``): the trained need that tracks it is a constant factor of it."""

    name = "the family's own need"

    def __init__(self, needs: dict):
        self.needs = needs  # (q, N) -> the family's resolved d_e_eps

    def log_size(self, q, N, d):
        if np.ndim(q) == 0:
            return np.float64(math.log(self.needs[int(q), int(N)]))
        return np.log([self.needs[int(a), int(b)] for a, b in zip(q, N)])


def _family_need(claim, s):
    """One row per q: the paper model's need (its largest budget, at EPSILON) against the family's own need at
    the same (q, N), held out at the largest N whose both are resolved, two-sided."""
    f, untested = _tf_fits_or_why(claim, s)
    if untested:
        return untested
    at = resolved(f.points[np.isclose(f.points["epsilon"], EPSILON)])
    own = oracle_needs(s.oracle, zip(at["q"].astype(int), at["N"].astype(int)))
    rows = []
    for q_ in sorted(f.points["q"].unique()):  # every q the model trains at: a q without a resolved need says so
        q, cq = int(q_), at[at["q"] == q_]
        needs = {k: x["critical_width"] for k, x in own.items() if k[0] == q and x["censored"] == NONE}
        bounds = ", ".join(f"N={N} {'<=' if x['censored'] == BELOW else '>'} {x['critical_width']:.3g}"
                           for (q2, N), x in own.items() if q2 == q and x["censored"] != NONE)
        if cq.empty:
            rows.append(claim.untested(q, "all", "all", f"no resolved need of the transformer (censored or coarser "
                                       f"than x{RESOLUTION:g}); {f.need}", f.cell))
            continue
        pts = cq[[(q, int(N)) in needs for N in cq["N"]]]
        ok = pts[pts["censored"] == NONE]
        ratios = "; ".join(f"N={int(N)} d={int(d)} {spread(g['critical_width'] / needs[q, int(N)])}"
                           for (N, d), g in ok.groupby(["N", "d"]))
        said = "; ".join(x for x in (
            f"trained / the family's own d_e_eps at {EPSILON:g}: {ratios}" if ratios else "",
            f"the family's own need only bounded at {bounds} (its loss crosses eps outside the d_e it was computed "
            "at)" if bounds else "") if x)
        if ok["N"].nunique() < 2:
            rows.append(claim.untested(q, "all", "all", f"both needs resolved at {ok['N'].nunique()} N; tracking "
                                       f"over N needs two; {said}".rstrip("; "), f.cell))
            continue
        law = FamilyNeed(needs)
        test = held_out(pts, "N", law, law, group=("q", "d"))
        if not test.decided:
            rows.append(claim.untested(q, "all", "all", f"{test.reason}; {said}", f.cell))
            continue
        off = test.above() | test.below()
        worst = float(np.exp(test.excess().abs().max()))
        held = test.text().replace(" fits held out", " fits held out (two-sided)")
        if test.bounded and not off.any():
            rows.append(claim.untested(q, "all", "all", f"a need only bounded (it can FAIL, not PASS); {held}; "
                                       f"{said}", f.cell))
            continue
        rows.append(claim.judged(q, "all", "all", f.cell, f"{held}; {said}", worst, not off.any()))
    return rows


def tf_power(points, grid, law, axis="N"):
    """The power scan of tf_scaling (``axis`` N, against ``law``) or tf_d_free (``axis`` d): the smallest
    exponent a whose need, each seed's grown like axis^a from its own need at the smallest value of the axis
    (at each other key), FAILs the held-out test (stsq.claims.rivals.first_rejected)."""
    lim = _limits(grid)
    family, group, rival = (("q", "d", "seed"), ("q", "d"), Q_SQRT_N) if axis == "N" else \
        (("q", "N", "seed"), ("q", "N"), Q_LOG_N_D_QUARTER)
    grow = grower(points, lim, axis, family)
    return first_rejected(lambda a: held_out(_testable(grow(a)), axis, law, rival, group=group).failed)


def _seed_slopes(at, law):
    """Per seed, the slope of log d_e_eps against log of ``law`` over its resolved needs at one q, and where a
    seed's needs bounded below (no width reached eps) all lie at an N above its resolved ones, the slope with
    the bounds as values: at most the true one (``bound``)."""
    pts = _testable(at)
    pts = pts[pts["censored"].isin([NONE, ABOVE])]
    rows = []
    for seed, g in pts.groupby("seed"):
        above = g["censored"] == ABOVE
        if above.any() and (g[~above].empty or g[above]["N"].min() <= g[~above]["N"].max()):
            continue
        x = law.log_size(g["q"], g["N"], g["d"])
        if len(np.unique(np.round(x, 9))) < 2:
            continue
        slope = float(np.polyfit(x, np.log(g["critical_width"].to_numpy(dtype=float)), 1)[0])
        rows.append({"seed": seed, "slope": slope, "bound": bool(above.any())})
    return pd.DataFrame(rows, columns=["seed", "slope", "bound"])


def _tf_fits_or_why(claim, s):
    """The paper model's fits, or the one NOT TESTED row of a sweep where it has no growth to fit."""
    f = _tf_fits(s)
    if f is None:
        return None, [claim.untested("all", "all", "all", f"the sweep has no {paper_model()}")]
    if f.one_size:
        return f, [claim.untested("all", "all", "all", f.one_size, f.cell)]
    return f, []


def _tf_scaling(claim, s):
    """One row per q: the theory's form depends on q (stsq.claims.rivals.tf_law)."""
    f, untested = _tf_fits_or_why(claim, s)
    if untested:
        return untested
    rows = []
    for q_, cq in f.points.groupby("q"):
        q, law = int(q_), tf_law(int(q_))
        need = f"{ex.width_name(f.arch)}_eps at {EPSILON:g}: {_need_text(cq, f.arch, f.steps)}"
        by_eps = _slopes_by_eps(cq, f.arch, f.steps, law)
        at = cq[np.isclose(cq["epsilon"], EPSILON)]
        # at one q: log(q log^p N) = log q + p log log N
        fits = f.fits[f.fits["q"] == q_]
        fits = fits.assign(slope=fits["slope"] / law.log_power)
        per_seed = _seed_slopes(at, law)
        if fits.empty and not per_seed["bound"].any():
            rows.append(claim.untested(q, "all", "all", "fewer than two sizes with a resolved critical width "
                                       f"(censored or coarser than x{RESOLUTION:g}); {need}", f.cell))
            continue
        test = held_out(_testable(at), "N", law, Q_SQRT_N, group=("q", "d"))
        own = _oracle_text(s.oracle, resolved(at), law)
        form = ("" if law is Q_LOG_N or fits.empty else f" (the form at q >= 3, the cross-terms inside y; against "
                f"q log N {spread(fits['slope'] * law.log_power)})")
        bounds = per_seed[per_seed["bound"]]
        slope_text = (f"slope against {law.name} {spread(fits['slope'])}{form}" if len(fits) else "") + (
            f"{'; ' if len(fits) else ''}with the bounds as values (at most the true slope), seed(s) "
            + ", ".join(f"{int(r.seed)}: {r.slope:.3g}" for r in bounds.itertuples()) if len(bounds) else "")
        worst = float(max([*fits["slope"], *bounds["slope"]]))
        slope_fail = f"the slope is above {TF_SLOPE_MAX:g}" if worst > TF_SLOPE_MAX else ""
        power = (f"power: {_power('N^a', tf_power(at, f.grid[f.grid['q'] == q_], law))} (each seed's "
                 f"need at N = {int(at['N'].min())} grown like N^a FAILs the held-out test)")
        rows.append(_tf_row(claim, q, f.cell, need, test, slope_fail,
                            f"{slope_text}; {by_eps}" + (f"; {own}" if own else ""), "the slope", worst, power))
    return rows


def _tf_d_free(claim, s):
    f, untested = _tf_fits_or_why(claim, s)
    if untested:
        return untested
    exps, joint = _joint(f.fits)
    if exps.empty:
        return [claim.untested("all", "all", "all", f"needs resolved d_e_eps at two d and two N; {f.need}", f.cell)]
    ok_pts = _at_epsilon(f.points)
    at = f.points[np.isclose(f.points["epsilon"], EPSILON)]
    per_N = summary(ok_pts).groupby(["q", "N"]).apply(
        lambda g: " ".join(f"d={int(r.d)}:{r.width:.3g}" for r in g.itertuples()), include_groups=False)
    text = f"{joint}; d_e_eps against d: " + "; ".join(f"q={int(q_)} N={int(N)} {t}" for (q_, N), t in per_N.items())
    test = held_out(_testable(at), "d", Q_LOG_N, Q_LOG_N_D_QUARTER, group=("q", "N"))
    power = (f"power: {_power('d^b', tf_power(at, f.grid, Q_LOG_N, 'd'), 'b >= ')} (each seed's "
             f"need at d = {int(at['d'].min())} grown like d^b FAILs the held-out test)")
    value = float(exps["exp_d"].max())
    fail = f"the exponent of d is above {TF_D_EXPONENT_MAX:g}" if value > TF_D_EXPONENT_MAX else ""
    return [_tf_row(claim, "all", f.cell, f.need, test, fail, text, "the exponent of d", value, power)]


FCN_SCALING = Claim(
    "fcn_scaling", "the width an FCN needs grows at least like N d",
    f"m_eps, the critical width at loss {EPSILON:g} (stsq.width.critical), held out at the largest N d with a "
    "measured need: N d / log(N d) and N d each fitted per seed below it predict it (stsq.claims.rivals); the power "
    "scan (the exponents of N d the test rejects); beside it the slope of log m_eps against log(N d) per "
    "seed, at every eps on the same points, the slope the grid can resolve, and m_eps / m*(eps) at each N d "
    "with the slope of that ratio (the part of the growth the sample budget, not the width floor, explains)",
    "FAIL where the need lies below N d / log(N d)'s prediction by more than the margin (the seeds' range "
    "plus the per-seed predictions' range); PASS where it is not below N d's by more; between them NOT TESTED",
    "theory: Omega~(N d), up to log factors: N d / log(N d) is the most generous law the statement allows, "
    "N d the statement at face value (the exact floor m*(eps) ~ (1 - eps) N d). A need between them is "
    "allowed by the log factor and cannot be told from it. A slope above 1 is the samples binding "
    "(m_eps / m*(eps) rising with N d); fcn_budget measures it at 4x the steps",
    "two values of N d with a resolved critical width (not censored, bracketed within "
    f"x{RESOLUTION:g}), two seeds at the held-out one; no need only bounded (a bound can FAIL, not PASS)",
    value="the worst seed's slope",
    scope=BUDGET, reads=ex.FCN_ROLE, figures=("scaling",), measure=_fcn_scaling, needs=("floor",))

FCN_PRODUCT = Claim(
    "fcn_product", "what the FCN needs depends on the product N d",
    "geometric-mean critical width of each (N, d) sharing one value of N d; the exponents of N and d "
    "fitted jointly beside it",
    f"largest / smallest <= {PRODUCT_FACTOR:g} at every shared N d, and (where both vary) the exponents of "
    f"N and d within {PRODUCT_EXPONENT_GAP:g} of each other (worst seed)",
    f"theory: the floor depends on N and d almost only through N d (m*(eps) ~ (1 - eps) N d); a factor "
    f"{PRODUCT_FACTOR:g} is the grid's resolution near the transition; a need that depends on N or d "
    "alone has exponents 1 apart",
    "a value of N d reached by two (N, d) with resolved critical widths",
    value="the largest ratio of two (N, d)'s widths at one N d",
    scope=BUDGET, reads=ex.FCN_ROLE, figures=("scaling",), measure=_fcn_product, needs=("floor",))

FCN_BUDGET = Claim(
    "fcn_budget", "the FCN's need is a width need: more samples lower it toward the exact floor, never "
    "below it (ours, from the floor)",
    f"geometric-mean m_eps at loss {EPSILON:g} at each (N, d) for each training budget (steps)",
    "the larger budget's m_eps <= the smaller's x 1.25, and the width at which it reached eps >= m*(eps)",
    "the floor holds whatever the training; the sample budget only adds to it (1.25: the seeds' spread)",
    "two budgets with resolved critical widths at one (N, d)",
    tested_by=("budget",),
    value="the largest ratio of the larger budget's m_eps to the smaller's",
    scope=Q, reads=ex.FCN_ROLE, figures=("scaling",), measure=_fcn_budget, needs=("floor",))

TF_D_FREE = Claim(
    "tf_d_free", "the width a transformer needs does not grow with d",
    f"exponent of d in a joint fit of log d_e,eps against log(q log N) and log d (loss {EPSILON:g}); the "
    "d-free need (q log N, a constant per (q, N)) fitted per seed below the largest d against the need "
    "measured there, beside the rival q log N d^0.25 (stsq.claims.rivals); the power scan (the exponents of d the "
    "test rejects)",
    f"worst seed <= {TF_D_EXPONENT_MAX:g}, and the need at the largest d not above the d-free prediction by "
    "more than the margin (the seeds' range plus the per-seed predictions' range) at any held-out (q, N); "
    "NOT TESTED where d^0.25 predicts within the margin of it",
    "theory: the positional width is Theta(q log N), whatever d; the FCN's exponent of d is 1. d^0.25 is the "
    "law next to it the row reports; the test rejects every d^b from the exponent the row states",
    "two values of d and two of N with resolved critical widths, two seeds at each held-out cell, d^0.25 "
    "predicting beyond the margin; no need only bounded (a bound can FAIL, not PASS)",
    tested_by=("separation",),
    value="the largest seed's exponent of d",
    scope=SWEEP, figures=("scaling",), measure=_tf_d_free, needs=("oracle",))

TF_FAMILY_NEED = Claim(
    "tf_family_need", "the transformer's need tracks the ground-truth family's own need: gradient descent does at "
    "finite N what the theory's construction does",
    f"per q, each seed's d_e,eps (loss {EPSILON:g}, the paper model's largest budget) over the family's own d_e,eps "
    "at the same (q, N) (the oracle's crossing of eps at N' = N over d_e), fitted per seed and d below the largest "
    "N where both are resolved and held out there (stsq.claims.rivals)",
    "the need at the held-out N within the margin (the seeds' range plus the per-seed predictions' range) of "
    "the family's need times the factor fitted below it, on either side",
    "theory: gradient descent converges to the ground-truth family (W_pp ~ I, V ~ [I, 0]); the trained need is "
    "then a fixed factor of the family's at every N, the factor what finite training leaves. A model that falls "
    "short of the family as N grows lies above it; one that finds more than the family, below",
    "the family's own need resolved (its loss at N crossing eps inside the d_e it was computed at) and the "
    "trained need resolved at two N or more, two seeds at the held-out N; none only bounded",
    kind=OURS, tested_by=("separation", "cpu"),
    value="the largest factor between the need at the held-out N and the family's prediction",
    scope=SWEEP_BY_Q, figures=("scaling",), measure=_family_need, needs=("oracle",))

TF_SCALING = Claim(
    "tf_scaling", "the width a transformer needs grows like q log N or slower, at q >= 3 like q log^2 N: "
    "the summed query's cross-terms, still O~(q log N)",
    f"per q, the slope of log d_e,eps against the log of that q's form, q log N or q log^2 N (loss "
    f"{EPSILON:g}), per seed, over the resolved points; the form fitted per seed and d below the largest N "
    "against the need measured there, beside the rival q sqrt(N) (stsq.claims.rivals); the power scan (the "
    "exponents of N the test rejects)",
    f"worst seed <= {TF_SLOPE_MAX:g} (a bound taken as a value counts), and the need at the largest N not "
    "above the form's prediction by more than the margin (the seeds' range plus the per-seed predictions' "
    "range) at any held-out d; NOT TESTED where q sqrt(N) predicts within the margin of the form",
    "theory: embedding width O~(d + q log N); near-orthogonal encodings need d_e = Theta(q log N), and at "
    "q >= 3 the uneven cross-terms inside y one more log N. The statement denies every N^a, a > 0; q sqrt(N) "
    "is the power law the row reports beside it, and the row states from which exponent the test rejects N^a "
    "(a logarithm looks like N^(1/ln N) locally: over N = 4 .. 16 log N and sqrt(N) both double)",
    "at least two values of N with resolved critical widths, two seeds at the held-out N; none only bounded "
    "(a bound can FAIL, not PASS); q sqrt(N) predicting above the form beyond the margin (q log^2 N outgrows "
    "sqrt(N) up to N ~ 55: at q >= 3 a CPU's N cannot)",
    tested_by=("separation",),
    value="the worst seed's slope against its q's form",
    scope=SWEEP_BY_Q, figures=("scaling",), measure=_tf_scaling, needs=("oracle",))
