"""The claims about the width each model needs (stsq.critical), per q across (N, d): the FCN's grows at least like
N d and depends on the product, more samples lower it toward the exact floor; the transformer's does not grow with d
and grows like q log N or slower, each against the law next to it (stsq.rivals).  Each record beside the function
that measures it."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import experiment as ex
from .claim_records import BUDGET, EPSILON, EPSILONS, FAIL, RESOLUTION, SWEEP, SWEEP_BY_Q, Claim, Q
from .claims_view import spread
from .critical import ABOVE, BELOW, NONE, crossing, resolved, scale_of, seed_fits, summary
from .experiment import LOSS, fcn_arch, paper_model
from .rivals import Q_LOG_N, Q_LOG_N_D_QUARTER, Q_SQRT_N, held_out, tf_law
from .theory import width_needed

FCN_SLOPE_MIN = 0.75  # d log m_eps / d log(N d) of the FCN: the floor says 1
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
        for r in out.drop_duplicates(["q", "N", "d"]).itertuples():
            why = {"above": "no width reached it", "below": "the smallest width already did"}.get(
                r.censored, "bracket too coarse" if r.censored == "none" else "")
            dropped.setdefault((int(r.q), int(r.N), int(r.d)), set()).add(f"{e:g}: {why}" if why else f"{e:g}")
    return common, dropped


def _slopes_by_eps(crit, arch, steps, law=Q_LOG_N) -> str:
    """The slope at every eps, fitted on the same points: the (q, N, d, seed) resolved at every eps; a
    transformer's against ``law`` at one q (stsq.rivals.tf_law)."""
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



def _resolvable_slope(grid):
    """The largest slope of log m_eps against log(N d) the FCN's grid can resolve: from its smallest width at
    the smallest N d to its largest width at the largest N d."""
    g = grid.assign(Nd=grid["N"] * grid["d"])
    lo, hi = g["Nd"].min(), g["Nd"].max()
    if hi <= lo:
        return math.nan
    return math.log(g[g["Nd"] == hi]["width"].max() / g[g["Nd"] == lo]["width"].min()) / math.log(hi / lo)


def _fcn_scaling(claim, s, q, steps):
    f = _fcn_fits(s, q, steps)
    if f.one_size:
        return [claim.untested(q, "all", "all", f.one_size, f.cell)]
    if f.fits.empty:
        return [claim.untested(q, "all", "all", "fewer than two sizes with a resolved critical width "
                               f"(censored or coarser than x{RESOLUTION:g}); {f.need}", f.cell)]
    by_eps = _slopes_by_eps(f.points, f.arch, steps)
    slopes = f.fits["slope"]
    ceiling = _resolvable_slope(f.grid)
    by_Nd, budget = _budget_part(_at_epsilon(f.points), q)
    at_ceiling = slopes.max() >= 0.9 * ceiling
    text = (f"slope {spread(slopes)} (the rival, a need slower than N d, has slope < {FCN_SLOPE_MIN:g}); "
            f"the grid resolves slopes up to {ceiling:.2f}"
            + (" (at its ceiling: the true slope may be larger)" if at_ceiling else "")
            + "; m_eps / m*(eps): " + ", ".join(f"N d={int(Nd)}: {v:.2f}" for Nd, v in by_Nd.items())
            + (f", that ratio's slope {budget:.2f}: " if math.isfinite(budget) else "")
            + ("the samples bind (the part of the slope above the floor's 1 is the budget's; fcn_budget, "
               "`make budget`, measures it at 4x the steps)" if math.isfinite(budget) and budget > 0.25 else
               "the need follows the floor" if math.isfinite(budget) else "")
            + f"; {by_eps}; {f.need}")
    return [claim.judged(q, "all", "all", f.cell, text, float(slopes.min()), slopes.min() >= FCN_SLOPE_MIN)]


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


def _tf_rival_row(claim, q, cell, need, test, first_ok, first_text, what, limit, value):
    """tf_scaling / tf_d_free: the slope (or exponent: ``what``) against its ``limit``, and the held-out test
    against the rival."""
    if not test.decided and first_ok:  # a slope above the threshold FAILs whether or not the rival can be told
        return claim.untested(q, "all", "all", f"{first_text}; {test.text()}; {need}", cell)
    ok = first_ok and test.rejected
    failed = ([] if first_ok else [f"{what} is above {limit:g}"]) \
        + ([] if test.rejected or not test.decided else [f"the rival {test.rival.name} is not rejected"])
    why = "" if ok else f" (FAIL: {'; '.join(failed)})"
    return claim.judged(q, "all", "all", cell, f"{first_text}; {test.text()}{why}; {need}", value, ok)


def oracle_needs(oracle: pd.DataFrame | None, shapes) -> dict:
    """The ground-truth family's own d_e_eps at each (q, N) of ``shapes``: where its loss at N' = N, over
    the d_e it was computed at, crosses EPSILON (stsq.critical.crossing: its ``critical_width`` and
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




def _tf_scaling(claim, s):
    """One row per q: the theory's form depends on q (stsq.rivals.tf_law)."""
    f = _tf_fits(s)
    if f is None:
        return [claim.untested("all", "all", "all", f"the sweep has no {paper_model()}")]
    if f.one_size:
        return [claim.untested("all", "all", "all", f.one_size, f.cell)]
    rows = []
    for q_, cq in f.points.groupby("q"):
        q, law = int(q_), tf_law(int(q_))
        need = f"{ex.width_name(f.arch)}_eps at {EPSILON:g}: {_need_text(cq, f.arch, f.steps)}"
        by_eps = _slopes_by_eps(cq, f.arch, f.steps, law)
        at = np.isclose(cq["epsilon"], EPSILON)
        # at one q: log(q log^p N) = log q + p log log N
        fits = f.fits[f.fits["q"] == q_]
        fits = fits.assign(slope=fits["slope"] / law.log_power)
        if (cq[at]["censored"] == ABOVE).any():
            rows.append(_tf_scaling_with_bounds(claim, q, cq[at], fits, f.cell, need, by_eps, law))
            continue
        if fits.empty:
            rows.append(claim.untested(q, "all", "all", "fewer than two sizes with a resolved critical width "
                                       f"(censored or coarser than x{RESOLUTION:g}); {need}", f.cell))
            continue
        test = held_out(resolved(cq[at]), "N", law, Q_SQRT_N, group=("q",))
        own = _oracle_text(s.oracle, cq[at], law)
        form = ("" if law is Q_LOG_N else f" (the form at q >= 3, the cross-terms inside y; against q log N "
                f"{spread(fits['slope'] * law.log_power)})")
        rows.append(_tf_rival_row(claim, q, f.cell, need, test, bool(fits["slope"].max() <= TF_SLOPE_MAX),
                                  f"slope against {law.name} {spread(fits['slope'])}{form}; {by_eps}"
                                  + (f"; {own}" if own else ""), "the slope", TF_SLOPE_MAX,
                                  float(fits["slope"].max())))
    return rows


def _tf_scaling_with_bounds(claim, q, c, fits, cell, need, by_eps, law=Q_LOG_N):
    """Some d_e_eps only bounded below (no d_e of the grid reached eps).  Where every such bound lies at a
    size above every resolved point, a fit that takes the bounds as values has a slope at most the true
    one: if even that exceeds TF_SLOPE_MAX the claim FAILs; otherwise it cannot be decided."""
    pts = pd.concat([resolved(c), c[c["censored"] == ABOVE]])
    x = pd.Series(scale_of(paper_model(), pts["q"], pts["N"], pts["d"]), index=pts.index)
    above = pts["censored"] == ABOVE
    lowest_bound = x[above].min()
    if len(x[~above]) and lowest_bound > x[~above].max():
        bounds = seed_fits(pts.assign(censored="none", bracket=1.0), paper_model())  # the bounds as values
        slopes = bounds["slope"] / law.log_power
        if len(bounds) and slopes.min() > TF_SLOPE_MAX:
            return claim.row(q, "all", "all", cell, f"slope against {law.name} at least {spread(slopes)} "
                             f"(the bounds taken as values); {need}", float(slopes.min()), FAIL)
    extra = f"; slope over the resolved points {spread(fits['slope'])}" if len(fits) else ""
    return claim.untested(q, "all", "all", f"some d_e_eps only bounded below (> the largest d_e){extra}; "
                          f"{by_eps}; {need}", cell)


def _tf_d_free(claim, s):
    f = _tf_fits(s)
    if f is None:
        return [claim.untested("all", "all", "all", f"the sweep has no {paper_model()}")]
    if f.one_size:
        return [claim.untested("all", "all", "all", f.one_size, f.cell)]
    exps, joint = _joint(f.fits)
    if exps.empty:
        return [claim.untested("all", "all", "all", f"needs resolved d_e_eps at two d and two N; {f.need}", f.cell)]
    ok_pts = _at_epsilon(f.points)
    per_N = summary(ok_pts).groupby(["q", "N"]).apply(
        lambda g: " ".join(f"d={int(r.d)}:{r.width:.3g}" for r in g.itertuples()), include_groups=False)
    text = f"{joint}; d_e_eps against d: " + "; ".join(f"q={int(q_)} N={int(N)} {t}" for (q_, N), t in per_N.items())
    test = held_out(ok_pts, "d", Q_LOG_N, Q_LOG_N_D_QUARTER, group=("q", "N"))
    return [_tf_rival_row(claim, "all", f.cell, f.need, test, bool(exps["exp_d"].max() <= TF_D_EXPONENT_MAX),
                          text, "the exponent of d", TF_D_EXPONENT_MAX, float(exps["exp_d"].max()))]


FCN_SCALING = Claim(
    "fcn_scaling", "the width an FCN needs grows at least like N d",
    f"slope of log m_eps against log(N d), m_eps the critical width at loss {EPSILON:g} (stsq.critical), "
    "fitted per seed over the resolved points; beside it the slopes at every eps on the same points, the "
    "slope the grid can resolve, and m_eps / m*(eps) at each N d with the slope of that ratio (the part of "
    "the growth the sample budget, not the width floor, explains)",
    f"worst seed >= {FCN_SLOPE_MIN:g}",
    "theory: Omega(N d); the exact floor needs m*(eps) ~ (1 - eps) N d, slope 1 at every eps. The rival: a "
    f"need growing slower than N d (slope < {FCN_SLOPE_MIN:g}). A slope above 1 is the samples binding "
    "(m_eps / m*(eps) rising with N d); fcn_budget measures it at 4x the steps",
    "at least two values of N d with a resolved critical width (not censored, bracketed within "
    f"x{RESOLUTION:g})",
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
    "rival d_e,eps ~ q log N d^0.25, fitted with the theory's q log N below the largest d, against the "
    "need measured at the largest d (stsq.rivals)",
    f"worst seed <= {TF_D_EXPONENT_MAX:g}, and the rival d^0.25 rejected: outside the seeds' range at every "
    "held-out (q, N), the theory closer",
    "theory: the positional width is Theta(q log N), whatever d; the FCN's exponent of d is 1. d^0.25 is the "
    "nearest law the statement denies that a sweep over d x4 can resolve (1.41x)",
    "two values of d (x4 apart or more, so that d^0.25 predicts a need 1.25x or more above d^0) and two of N "
    "with resolved critical widths",
    tested_by=("separation",),
    value="the largest seed's exponent of d",
    scope=SWEEP, figures=("scaling",), measure=_tf_d_free, needs=("oracle",))

TF_SCALING = Claim(
    "tf_scaling", "the width a transformer needs grows like q log N or slower, at q >= 3 like q log^2 N: "
    "the summed query's cross-terms, still O~(q log N)",
    f"per q, the slope of log d_e,eps against the log of that q's form, q log N or q log^2 N (loss "
    f"{EPSILON:g}), per seed, over the resolved points; the rival d_e,eps ~ q sqrt(N), and the form, each "
    "fitted below the largest N, against the need measured at the largest N (stsq.rivals)",
    f"worst seed <= {TF_SLOPE_MAX:g}, and the rival q sqrt(N) rejected: outside the seeds' range at every "
    "held-out d, the theory closer",
    "theory: embedding width O~(d + q log N); near-orthogonal encodings need d_e = Theta(q log N), and at "
    "q >= 3 the uneven cross-terms inside y one more log N. sqrt(N) is the smallest power law the statement "
    "denies (over N = 4 .. 16 log N and sqrt(N) both double: a logarithm looks like N^(1/ln N) locally); "
    "any N^a with a >= 0.5 predicts at least its need",
    "at least two values of N with resolved critical widths, none censored above; N wide enough that the "
    "form and q sqrt(N) predict needs 1.25x apart or more at the largest N (q log N from N = 8: N = 128), "
    "the rival above the form (q log^2 N outgrows sqrt(N) up to N ~ 55: at q >= 3 a CPU's N cannot)",
    tested_by=("separation",),
    value="the worst seed's slope against its q's form",
    scope=SWEEP_BY_Q, figures=("scaling",), measure=_tf_scaling, needs=("oracle",))
