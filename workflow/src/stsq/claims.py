"""The claims table: each claim of the paper (stsq.cl.CLAIMS), measured from the tidy table
and the oracle table, with a verdict PASS, FAIL or NOT TESTED (the sweep cannot test it, or what the
claim presupposes, such as the model having learned at N, does not hold: the reason is said).

Per (q, N, d): the transformer's loss against the oracle, its loss against d_e, the ground-truth
directions, length generalization (stochastic and fixed, in absolute terms and over training).  Per q,
across (N, d): the width each arch needs (stsq.critical) and how it grows.  Checks (the FCN's exact
width floor) are bounds every correct pipeline obeys; they are listed apart from the paper's claims.
A claim about a bound is judged on the worst seed.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import claim_records as cl
from . import experiment as ex
from .claim_records import CHECK, CLAIM_COLUMNS, CLAIMS, EPSILON, FAIL, NOT_TESTED, PASS
from .critical import ABOVE, BELOW, NONE, critical_widths, crossing, resolved, scale_of, seed_fits, summary
from .experiment import LOSS, LOSS_SE, OK, PROJECTION, fcn_arch, paper_model
from .reach import cell_reach, needs_at_epsilon, reach_table
from .rivals import Q_LOG_N, Q_LOG_N_D_QUARTER, Q_SQRT_N, held_out, tf_law
from .theory import width_floor, width_needed


def _final(table, metric=LOSS):
    return table[(table["split"] == "eval") & (table["metric"] == metric) & (table["status"] == OK)]


def _last_curve(table, metric):
    """Each model's last curve point of ``metric`` (split test, N_eval = N)."""
    t = table[(table["split"] == "test") & (table["metric"] == metric) & (table["N_eval"] == table["N"])]
    return t.loc[t.groupby(ex.model_keys())["step"].idxmax()]


def _spread(values) -> str:
    v = pd.Series(values, dtype=float)
    return f"{v.mean():.3g} [{v.min():.3g}, {v.max():.3g}] (n={len(v)})"


def _row(key, q, N, d, cell, measured, value, verdict):
    c = CLAIMS[key]
    return {"claim": key, "kind": c.kind, "statement": c.statement, "q": q, "N": N, "d": d, "cell": cell,
            "measured": measured, "value": value, "threshold": c.threshold, "verdict": verdict}


def _untested(key, q, N, d, reason, cell=""):
    return _row(key, q, N, d, cell, f"not tested: {reason}", math.nan, NOT_TESTED)


def _verdict(ok: bool) -> str:
    return PASS if ok else FAIL


def oracle_at(oracle: pd.DataFrame, q, N, d_e, N_eval) -> float | None:
    """The oracle's loss at (q, N, d_e, N'), or None where it was not computed."""
    o = oracle[(oracle["q"] == q) & (oracle["N"] == N) & (oracle["width"] == d_e) & (oracle["N_eval"] == N_eval)]
    return None if o.empty else float(o[LOSS].iloc[0])


def oracle_bound(oracle: pd.DataFrame, q, N, d_e, N_eval) -> float | None:
    """ORACLE_FACTOR x the oracle + ORACLE_SLACK at (q, N, d_e, N'), or None where it was not computed."""
    o = oracle_at(oracle, q, N, d_e, N_eval)
    return None if o is None else cl.ORACLE_FACTOR * o + cl.ORACLE_SLACK


def _models(ev, arch, q, N, d):
    """The final evaluations of ``arch`` at (q, N, d), at its largest budget (steps)."""
    a = ev[(ev["arch"] == arch) & (ev["q"] == q) & (ev["N"] == N) & (ev["d"] == d)]
    return a[a["steps"] == a["steps"].max()] if len(a) else a


def _learned(at_N) -> bool:
    return len(at_N) > 0 and at_N.max() <= cl.LEARNED_BELOW


# -- per (q, N, d) ------------------------------------------------------------------------------------
# the paper model's claims at each (q, N, d) it trains at; a sweep without it has one row each (``_claims_of``)
MODEL_CELL_CLAIMS = ("learns", "wider_d_e", "directions", "length_stochastic", "length_reach", "length_training")


def _cell_claims(table, ev, oracle, reach, q, N, d, lengths=True):
    """Every per-cell claim at (q, N, d), each of an arch trained there: a claim of an arch the sweep trains
    elsewhere only is no statement about this cell, and has no row here; nor, where the sweep scores no
    N' > N (``lengths`` false), has a length claim (one row for the sweep, ``_claims_of``)."""
    rows = []
    model = paper_model()
    st = _models(ev, model, q, N, d)
    if not st.empty:
        d_e = int(st["width"].max())
        cell = f"{model} d_e={d_e}"
        at_N = st[(st["width"] == d_e) & (st["N_eval"] == N)]["value"]
        learned = _learned(at_N)
        not_learned = (f"the model did not learn at N (worst seed's loss {at_N.max():.3g} > {cl.LEARNED_BELOW:g})"
                       if len(at_N) else "no evaluation at N")
        bound = oracle_bound(oracle, q, N, d_e, N)
        if bound is None:
            rows.append(_untested("learns", q, N, d, "no oracle at this cell", cell))
        else:
            rows.append(_row("learns", q, N, d, cell, f"loss {_spread(at_N)}; bound {bound:.3g}",
                             float(at_N.max()), _verdict(at_N.max() <= bound)))
        widths = sorted(st["width"].unique())
        if len(widths) < 2:
            rows.append(_untested("wider_d_e", q, N, d, f"one d_e ({d_e})", cell))
        elif not learned:
            rows.append(_untested("wider_d_e", q, N, d, not_learned, cell))
        else:
            mean = st[st["N_eval"] == N].groupby("width")["value"].mean()
            lo, hi = mean[widths[0]], mean[widths[-1]]
            rows.append(_row("wider_d_e", q, N, d, f"d_e {widths[0]} -> {widths[-1]}",
                             f"mean loss {lo:.3g} -> {hi:.3g}", float(hi - lo), _verdict(hi < lo)))
        sel = dict(q=q, N=N, d=d, width=d_e, steps=int(st["steps"].max()))
        rows.append(_directions(table, sel, cell) if learned else _untested("directions", q, N, d, not_learned, cell))
        here = reach[(reach["arch"] == model) & (reach["q"] == q) & (reach["N"] == N) & (reach["d"] == d)
                     & (reach["steps"] == sel["steps"])]
        if lengths:
            rows.append(_length_stochastic(st, _final(table, PROJECTION), oracle, here, sel, cell) if learned
                        else _untested("length_stochastic", q, N, d, not_learned, cell))
            rows.append(_length_reach(here, sel) if learned
                        else _untested("length_reach", q, N, d, not_learned, cell))
            rows.append(_length_training(table, sel, cell) if learned
                        else _untested("length_training", q, N, d, not_learned, cell))
    # one row per arch trained at this (q, N, d); an arch the sweep lacks has one row for the whole sweep
    for arch in ex.with_length(ex.TRAINING_LENGTH) if lengths else ():
        fx = _models(ev, arch, q, N, d)
        if len(fx):
            rows.append(_length_fixed(fx, arch, q, N, d))
    for arch in ex.with_length(ex.POSITION_RANGE) if lengths else ():
        rz = _models(ev, arch, q, N, d)
        if len(rz):
            rows.append(_length_randomized(rz, _models(_not_applicable(table), arch, q, N, d), oracle, arch, q, N, d))
    fcn = ev[(ev["arch"] == fcn_arch()) & (ev["q"] == q) & (ev["N"] == N) & (ev["d"] == d) & (ev["N_eval"] == N)]
    if not fcn.empty:
        rows.append(_floor_check(fcn, _final(table, LOSS_SE), q, N, d))
    return rows


def _select(t, sel, arch=None):
    arch = arch or paper_model()
    return t[np.logical_and.reduce([t["arch"] == arch] + [t[k] == v for k, v in sel.items()])]


def _directions(table, sel, cell):
    q, N, d = sel["q"], sel["N"], sel["d"]
    cos = {m: _select(_last_curve(table, m), sel)["value"] for m in ("cos_V_ground_truth", "cos_W_pp_identity")}
    if any(v.empty for v in cos.values()):
        return _untested("directions", q, N, d, "no training curve with the cosines", cell)
    v, w = cos["cos_V_ground_truth"], cos["cos_W_pp_identity"]
    ok = v.min() >= cl.COS_V_MIN and w.min() >= cl.COS_W_MIN
    return _row("directions", q, N, d, cell, f"cos V {_spread(v)}; cos W_pp {_spread(w)}",
                float(min(v.min(), w.min())), _verdict(ok))


def _factor(x: float) -> str:
    return f"{x:g}N"


def _length_stochastic(st, projection, oracle, reach, sel, cell):
    """The worst seed's reach (stsq.reach) at the end of training, at least REACH_MIN_FACTOR x N; each N'
    with the worst seed's loss, the oracle and the model's projection onto the ground-truth family beside it."""
    q, N, d, d_e = sel["q"], sel["N"], sel["d"], sel["width"]
    off = st[(st["width"] == d_e) & (st["N_eval"] > N)]
    if off.empty:
        return _untested("length_stochastic", q, N, d, "no N' > N", cell)
    worst = off.groupby("N_eval")["value"].max()
    proj = _select(projection, sel).groupby("N_eval")["value"].max()
    parts = []
    for L, loss in worst.items():
        o = oracle_at(oracle, q, N, d_e, L)
        if o is None:
            return _untested("length_stochastic", q, N, d, f"no oracle at N'={int(L)}", cell)
        p = f", projection {proj[L]:.3g}" if L in proj.index else ""
        parts.append(f"{int(L) // N}N: {loss:.3g} (bound {o + cl.GENERALIZES_WITHIN:.3g}{p})")
    fin = cell_reach(reach[reach["final"].astype(bool) & (reach["width"] == d_e)])
    if fin.empty:
        return _untested("length_stochastic", q, N, d, "no reach: a scored N' without its oracle", cell)
    r = fin.iloc[0]
    at = "at least " if r["censored"] else ""
    longest = int(worst.index.max()) // N
    stop = (f" (still within the bound at the longest N' scored, {longest}N: the sweep stopped first)"
            if r["censored"] else "")
    text = (f"reach {at}{_factor(r['reach_factor'])} (seeds {_factor(r['lo'])} to {_factor(r['hi'])}){stop}; "
            f"worst seed at N {st[(st['width'] == d_e) & (st['N_eval'] == N)]['value'].max():.3g}, at N': "
            + "; ".join(parts))
    return _row("length_stochastic", q, N, d, cell, text, float(r["reach_factor"]),
                _verdict(r["reach_factor"] >= cl.REACH_MIN_FACTOR))


def _length_reach(reach, sel):
    """The worst seed's reach at the smallest and largest learned d_e (final models), and at the largest d_e
    at the first learned and the last checkpoint."""
    q, N, d = sel["q"], sel["N"], sel["d"]
    if reach.empty:
        return _untested("length_reach", q, N, d, "no N' > N scored (with its oracle)", f"{paper_model()}")
    cr = cell_reach(reach)
    learned = cr[cr["loss_at_N_max"] <= cl.LEARNED_BELOW]
    fin = learned[learned["final"].astype(bool)].sort_values("width")
    cell = f"{paper_model()} d_e in {[int(w) for w in fin['width']]}"
    if len(fin) < 2:
        return _untested("length_reach", q, N, d, f"{len(fin)} d_e learned at N (worst seed's loss <= "
                         f"{cl.LEARNED_BELOW:g}); the reach against d_e needs two", cell)
    along = learned[~learned["final"].astype(bool) & (learned["width"] == sel["width"])].sort_values("step")
    if len(along) < 2:
        return _untested("length_reach", q, N, d, f"{len(along)} checkpoint(s) of d_e={sel['width']} scored at "
                         "N' > N after it learned at N; the reach along training needs two", cell)

    def grows(a, b):
        return b["reach_factor"] > a["reach_factor"] or (b["censored"] and a["censored"]
                                                         and b["reach_factor"] == a["reach_factor"])

    def said(r):
        return ("at least " if r["censored"] else "") + _factor(r["reach_factor"])

    small, large, first, last = fin.iloc[0], fin.iloc[-1], along.iloc[0], along.iloc[-1]
    def allows(r):  # the reach the width allows, from the cell's own resolved need (stsq.reach.expected_factor)
        return (f"the width allows {r.expected_factor:.3g}N" if math.isfinite(r.expected_factor) else
                "what the width allows is unknown: no resolved d_e_eps at this (q, N)")

    by_width = ", ".join(f"d_e={int(r.width)}: {said(r._asdict())} ({allows(r)})" for r in fin.itertuples())
    text = (f"final reach by d_e: {by_width}; d_e={sel['width']} along training: step {int(first['step'])} "
            f"{said(first)} -> step {int(last['step'])} {said(last)}")
    ok = grows(small, large) and grows(first, last)
    return _row("length_reach", q, N, d, cell, text, float(large["reach_factor"] / small["reach_factor"]),
                _verdict(ok))


def length_curves(table, sel, arch) -> pd.DataFrame:
    """Per seed and checkpoint: the loss at N (column N) and at the longest N' scored along training."""
    t = _select(table[(table["split"] == "test") & (table["metric"] == LOSS)], sel, arch)
    if t.empty or (t["N_eval"] == sel["N"]).all():
        return pd.DataFrame()
    longest = int(t["N_eval"].max())
    wide = t[t["N_eval"].isin([sel["N"], longest])].pivot_table(index=["seed", "step"], columns="N_eval",
                                                                 values="value")
    return wide.dropna().rename(columns={sel["N"]: "at_N", longest: "at_longest"}).assign(longest=longest)


def trend_slopes(curves: pd.DataFrame) -> pd.Series:
    """Per seed: the least-squares slope of log loss at the longest N' against log loss at N."""
    out = {}
    for seed, g in curves.groupby(level="seed"):
        if len(g) >= 3 and g["at_N"].nunique() > 1:
            out[seed] = float(np.polyfit(np.log(g["at_N"]), np.log(g["at_longest"]), 1)[0])
    return pd.Series(out, dtype=float)


def _length_training(table, sel, cell):
    q, N, d = sel["q"], sel["N"], sel["d"]
    curves = length_curves(table, sel, paper_model())
    slopes = trend_slopes(curves) if len(curves) else pd.Series(dtype=float)
    if slopes.empty:
        return _untested("length_training", q, N, d, "fewer than 3 checkpoints scored at N' > N", cell)
    longest = int(curves["longest"].iloc[0])
    first, last = (curves.groupby(level="seed").nth(k).mean(numeric_only=True) for k in (0, -1))
    text = (f"N'={longest}: slope {_spread(slopes)}; mean loss at N {first['at_N']:.3g} -> {last['at_N']:.3g}, "
            f"at N' {first['at_longest']:.3g} -> {last['at_longest']:.3g} (first -> last checkpoint)")
    for arch in ex.with_length(ex.TRAINING_LENGTH):  # beside it: the models expected not to generalize
        fx = _select(table[table["split"] == "test"], {"q": q, "N": N, "d": d}, arch)
        if len(fx):
            fx_sel = {"q": q, "N": N, "d": d, "width": int(fx["width"].max()), "steps": int(fx["steps"].max())}
            fx_curves = length_curves(table, fx_sel, arch)
            fx_slopes = trend_slopes(fx_curves) if len(fx_curves) else pd.Series(dtype=float)
            if len(fx_slopes):
                text += f"; {arch} slope {_spread(fx_slopes)}"
    return _row("length_training", q, N, d, cell, text, float(slopes.min()),
                _verdict(slopes.min() >= cl.TREND_SLOPE_MIN))


def _length_fixed(fx, arch, q, N, d):
    d_e = int(fx["width"].max())
    cell = f"{arch} d_e={d_e}"
    off = fx[(fx["width"] == d_e) & (fx["N_eval"] > N)]
    if off.empty:
        return _untested("length_fixed", q, N, d, "no N' > N", cell)
    fit = fx[(fx["width"] == d_e) & (fx["N_eval"] == N)]["value"]
    if not _learned(fit):
        return _untested("length_fixed", q, N, d, f"the model did not fit at N (worst seed's loss "
                         f"{fit.max():.3g} > {cl.LEARNED_BELOW:g}): its loss at N' says nothing about length", cell)
    best = off.groupby("N_eval")["value"].min()
    return _row("length_fixed", q, N, d, cell + f", N' in {sorted(int(x) for x in best.index)}",
                f"at N: {_spread(fit)}; lowest at N' > N: {best.min():.3g} (N'={int(best.idxmin())})",
                float(best.min()), _verdict(best.min() > cl.FIXED_FAILS_ABOVE))


def _not_applicable(table):
    return table[(table["split"] == "eval") & (table["metric"] == LOSS) & (table["status"] == ex.NOT_APPLICABLE)]


def _length_randomized(rz, outside, oracle, arch, q, N, d):
    """Each seed's loss at every N < N' <= L (the lengths it was scored at) against the oracle at N' plus
    GENERALIZES_WITHIN; the lengths above L (not applicable) said beside it."""
    key = "length_randomized"
    d_e = int(rz["width"].max())
    cell = f"{arch} d_e={d_e}"
    at_N = rz[(rz["width"] == d_e) & (rz["N_eval"] == N)]["value"]
    above = sorted(int(x) for x in outside[outside["width"] == d_e]["N_eval"].unique())
    beyond = f"; N' > L, not applicable: {above}" if above else ""
    if not _learned(at_N):
        return _untested(key, q, N, d, f"the model did not learn at N (worst seed's loss "
                         f"{at_N.max() if len(at_N) else math.nan:.3g} > {cl.LEARNED_BELOW:g}){beyond}", cell)
    worst = rz[(rz["width"] == d_e) & (rz["N_eval"] > N)].groupby("N_eval")["value"].max()
    if worst.empty:
        return _untested(key, q, N, d, f"no N' with N < N' <= L{beyond}", cell)
    parts, excess = [], []
    for L, loss in worst.items():
        o = oracle_at(oracle, q, N, d_e, L)
        if o is None:
            return _untested(key, q, N, d, f"no oracle at N'={int(L)}, d_e={d_e}", cell)
        excess.append(loss - (o + cl.GENERALIZES_WITHIN))
        parts.append(f"N'={int(L)} ({int(L) // N}N): {loss:.3g} (oracle {o:.3g})")
    return _row(key, q, N, d, cell, f"worst seed at N {at_N.max():.3g}; " + "; ".join(parts) + beyond,
                float(max(excess)), _verdict(max(excess) <= 0))


# -- per q, across (N, d): the width needed (stsq.critical) ---------------------------------------------
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
    ok = [set(map(tuple, resolved(c[np.isclose(c["epsilon"], e)])[keys].to_numpy().tolist())) for e in cl.EPSILONS]
    common = set.intersection(*ok) if ok else set()
    dropped = {}
    for e in cl.EPSILONS:
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
    for eps in cl.EPSILONS:
        f = seed_fits(same, arch, eps)
        parts.append(f"{eps:g}: {f['slope'].mean() / law.log_power:.2f}" if len(f) else f"{eps:g}: -")
    text = "slope at eps " + ", ".join(parts) + " (on the (N, d) resolved at every eps"
    if dropped:
        text += "; left out: " + ", ".join(f"(q={q},N={N},d={d}) at eps {'; '.join(sorted(w))}"
                                            for (q, N, d), w in sorted(dropped.items()))
    return text + ")"


def _scaling_claims(crit, ev, q):
    """The FCN's width claims at one q (its grid is placed by N d), the budget and the need-floor check."""
    rows = _width_claims(crit[crit["q"] == q], ev[ev["q"] == q], fcn_arch(), ("fcn_scaling", "fcn_product"), q)
    rows.append(_budget_claim(crit, q))
    rows.append(_need_floor(crit, ev, q))
    return rows


def _width_claims(crit, ev, arch, keys, q, oracle=None):
    """The width claims ``keys`` of ``arch`` over the (q, N, d) of ``crit``; ``q`` is what the rows say;
    ``oracle`` (the ground-truth family's losses), for the transformer's rows to quote its own need."""
    a = crit[crit["arch"] == arch]
    if a.empty:
        return [_untested(k, q, "all", "all", f"the sweep has no {arch}") for k in keys]
    rows = []
    for steps in sorted(a["steps"].unique()) if arch == fcn_arch() else [int(a["steps"].max())]:
        c = a[a["steps"] == steps]
        cell = f"{arch}, {steps} steps"
        need = f"{ex.width_name(arch)}_eps at {EPSILON:g}: {_need_text(c, arch, steps)}"
        fits = seed_fits(c, arch)
        if c["N"].nunique() == 1 and c["d"].nunique() == 1:
            rows += [_untested(k, q, "all", "all", f"one N ({int(c['N'].iloc[0])}) and one d "
                               f"({int(c['d'].iloc[0])}) in the sweep; {need}", cell) for k in keys]
            continue
        grid = ev[(ev["arch"] == arch) & (ev["steps"] == steps) & (ev["N_eval"] == ev["N"])]
        for key in keys:
            if key != "tf_scaling":
                rows.append(_scaling_row(key, q, c, fits, cell, need, _slopes_by_eps(c, arch, steps), grid, oracle))
                continue
            for q_, cq in c.groupby("q"):  # one row per q: the theory's form depends on q (stsq.rivals.tf_law)
                law = tf_law(int(q_))
                rows.append(_scaling_row(key, int(q_), cq, fits[fits["q"] == q_], cell,
                                         f"{ex.width_name(arch)}_eps at {EPSILON:g}: {_need_text(cq, arch, steps)}",
                                         _slopes_by_eps(cq, arch, steps, law), grid, oracle))
    return rows


def _budget_part(ok_pts, q):
    """The FCN's m_eps / m*(eps) at each N d (geometric mean over its (N, d) and seeds) and the slope of that
    ratio against N d (per seed, mean): the growth the sample budget, not the width floor, explains."""
    r = ok_pts.assign(Nd=ok_pts["N"] * ok_pts["d"], ratio=_bracket_above_floor(ok_pts, q)[0])
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


def _fcn_scaling(q, fits, cell, need, by_eps, grid, ok_pts):
    key = "fcn_scaling"
    if fits.empty:
        return _untested(key, q, "all", "all", "fewer than two sizes with a resolved critical width "
                         f"(censored or coarser than x{cl.RESOLUTION:g}); {need}", cell)
    slopes = fits["slope"]
    ceiling = _resolvable_slope(grid)
    by_Nd, budget = _budget_part(ok_pts, q)
    at_ceiling = slopes.max() >= 0.9 * ceiling
    text = (f"slope {_spread(slopes)} (the rival, a need slower than N d, has slope < {cl.FCN_SLOPE_MIN:g}); "
            f"the grid resolves slopes up to {ceiling:.2f}"
            + (" (at its ceiling: the true slope may be larger)" if at_ceiling else "")
            + "; m_eps / m*(eps): " + ", ".join(f"N d={int(Nd)}: {v:.2f}" for Nd, v in by_Nd.items())
            + (f", that ratio's slope {budget:.2f}: " if math.isfinite(budget) else "")
            + ("the samples bind (the part of the slope above the floor's 1 is the budget's; fcn_budget, "
               "`make budget`, measures it at 4x the steps)" if math.isfinite(budget) and budget > 0.25 else
               "the need follows the floor" if math.isfinite(budget) else "")
            + f"; {by_eps}; {need}")
    return _row(key, q, "all", "all", cell, text, float(slopes.min()), _verdict(slopes.min() >= cl.FCN_SLOPE_MIN))


def _tf_rival_row(key, q, fits, cell, need, test, first_ok, first_text):
    """tf_scaling / tf_d_free: the slope (or exponent) check and the held-out test against the rival."""
    if not test.decided and first_ok:  # a slope above the threshold FAILs whether or not the rival can be told
        return _untested(key, q, "all", "all", f"{first_text}; {test.text()}; {need}", cell)
    ok = first_ok and test.rejected
    failed = ([] if first_ok else [("the slope" if key == "tf_scaling" else "the exponent of d") + " is above "
                                   f"{cl.TF_SLOPE_MAX if key == 'tf_scaling' else cl.TF_D_EXPONENT_MAX:g}"]) \
        + ([] if test.rejected or not test.decided else [f"the rival {test.rival.name} is not rejected"])
    why = "" if ok else f" (FAIL: {'; '.join(failed)})"
    return _row(key, q, "all", "all", cell, f"{first_text}; {test.text()}{why}; {need}",
                float(fits["slope"].max() if key == "tf_scaling" else fits["exp_d"].max()), _verdict(ok))


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


def _scaling_row(key, q, c, fits, cell, need, by_eps, grid, oracle=None):
    at = np.isclose(c["epsilon"], EPSILON)
    ok_pts = resolved(c[at])
    if key == "fcn_scaling":
        return _fcn_scaling(q, fits, cell, need, by_eps, grid, ok_pts)
    if key == "tf_scaling":  # at one q, against that q's form (stsq.rivals.tf_law)
        law = tf_law(q)
        fits = fits.assign(slope=fits["slope"] / law.log_power)  # at one q: log(q log^p N) = log q + p log log N
        if (c[at]["censored"] == ABOVE).any():
            return _tf_scaling_with_bounds(q, c[at], fits, cell, need, by_eps, law)
        if fits.empty:
            return _untested(key, q, "all", "all", "fewer than two sizes with a resolved critical width "
                             f"(censored or coarser than x{cl.RESOLUTION:g}); {need}", cell)
        test = held_out(ok_pts, "N", law, Q_SQRT_N, group=("q",))
        own = _oracle_text(oracle, c[at], law)
        form = ("" if law is Q_LOG_N else f" (the form at q >= 3, the cross-terms inside y; against q log N "
                f"{_spread(fits['slope'] * law.log_power)})")
        return _tf_rival_row(key, q, fits, cell, need, test, bool(fits["slope"].max() <= cl.TF_SLOPE_MAX),
                             f"slope against {law.name} {_spread(fits['slope'])}{form}; {by_eps}"
                             + (f"; {own}" if own else ""))
    exps = fits.dropna(subset=["exp_d"])
    joint = (f"exponents N {_spread(exps['exp_N'])}, d {_spread(exps['exp_d'])}" if len(exps) else "")
    if key == "tf_d_free":
        if exps.empty:
            return _untested(key, q, "all", "all", f"needs resolved d_e_eps at two d and two N; {need}", cell)
        per_N = summary(ok_pts).groupby(["q", "N"]).apply(
            lambda g: " ".join(f"d={int(r.d)}:{r.width:.3g}" for r in g.itertuples()), include_groups=False)
        text = f"{joint}; d_e_eps against d: " + "; ".join(f"q={int(q_)} N={int(N)} {t}"
                                                           for (q_, N), t in per_N.items())
        test = held_out(ok_pts, "d", Q_LOG_N, Q_LOG_N_D_QUARTER, group=("q", "N"))
        return _tf_rival_row(key, q, exps, cell, need, test, bool(exps["exp_d"].max() <= cl.TF_D_EXPONENT_MAX),
                             text)
    # fcn_product: the geometric means of the resolved seeds, grouped by N d
    s = summary(ok_pts).assign(Nd=lambda t: t["N"] * t["d"])
    shared = {int(Nd): g for Nd, g in s.groupby("Nd") if len(g) >= 2}
    if not shared:
        return _untested(key, q, "all", "all", f"no value of N d reached by two (N, d) with resolved m_eps; {need}",
                         cell)
    ratios = {Nd: float(g["width"].max() / g["width"].min()) for Nd, g in shared.items()}
    text = "; ".join(f"N d={Nd}: " + ", ".join(f"(N={int(r.N)},d={int(r.d)}) {r.width:.3g}" for r in g.itertuples())
                     + f" (ratio {ratios[Nd]:.2f})" for Nd, g in shared.items())
    ratios_ok = max(ratios.values()) <= cl.PRODUCT_FACTOR
    ok, halves = ratios_ok, [f"ratios {'within' if ratios_ok else 'above'} {cl.PRODUCT_FACTOR:g}"]
    if len(exps):  # where N and d both vary, their fitted exponents must agree too
        gap = (exps["exp_N"] - exps["exp_d"]).abs()
        text += f"; {joint}; |exponent N - exponent d| {_spread(gap)}"
        gap_ok = bool(gap.max() <= cl.PRODUCT_EXPONENT_GAP)
        ok = ok and gap_ok
        halves.append(f"exponent gap {gap.max():.2f} {'within' if gap_ok else 'above'} {cl.PRODUCT_EXPONENT_GAP:g}")
    if not ok:
        by_Nd, budget = _budget_part(ok_pts, q)
        text += (f" (FAIL: {'; '.join(halves)}. m_eps / m*(eps) "
                 + ", ".join(f"{v:.2f} at N d={int(Nd)}" for Nd, v in by_Nd.items())
                 + (": the need is not the width floor's, the sample budget binds and adds to it unevenly in N "
                    "and d; at 4x the steps (`make budget`) the need falls toward the floor"
                    if by_Nd.max() > 1.5 else "") + ")")
    return _row(key, q, "all", "all", cell, text, max(ratios.values()), _verdict(ok))


def _tf_scaling_with_bounds(q, c, fits, cell, need, by_eps, law=Q_LOG_N):
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
        if len(bounds) and slopes.min() > cl.TF_SLOPE_MAX:
            return _row("tf_scaling", q, "all", "all", cell, f"slope against {law.name} at least {_spread(slopes)} "
                        f"(the bounds taken as values); {need}", float(slopes.min()), FAIL)
    extra = f"; slope over the resolved points {_spread(fits['slope'])}" if len(fits) else ""
    return _untested("tf_scaling", q, "all", "all", f"some d_e_eps only bounded below (> the largest d_e){extra}; "
                     f"{by_eps}; {need}", cell)


def _budget_claim(crit, q):
    a = resolved(crit[(crit["arch"] == fcn_arch()) & (crit["q"] == q) & np.isclose(crit["epsilon"], EPSILON)])
    budgets = sorted(crit[(crit["arch"] == fcn_arch()) & (crit["q"] == q)]["steps"].unique())
    if len(budgets) < 2:
        return _untested("fcn_budget", q, "all", "all", f"one training budget ({budgets[0] if budgets else 'no FCN'})")
    s = summary(a)
    parts, ok, worst = [], True, -math.inf
    for (N, d), g in s.groupby(["N", "d"]):
        if g["steps"].nunique() < 2:
            continue
        g = g.sort_values("steps")
        small, large = g.iloc[0], g.iloc[-1]
        floor = width_needed(int(N), int(d), q, EPSILON)
        seeds = a[(a["N"] == N) & (a["d"] == d) & (a["steps"] == large["steps"])]
        top = float(_bracket_above_floor(seeds, q)[1].min())
        ok &= bool(large["width"] <= 1.25 * small["width"] and top >= 1)
        worst = max(worst, float(large["width"] / small["width"]))
        parts.append(f"(N={int(N)},d={int(d)}) {int(small['steps'])} steps {small['width']:.3g} -> "
                     f"{int(large['steps'])} steps {large['width']:.3g} (m* {floor:.3g}; reached eps at "
                     f">= {top:.3g} m*)")
    if not parts:
        return _untested("fcn_budget", q, "all", "all", "no (N, d) with resolved m_eps at two budgets")
    cell = f"{fcn_arch()}, steps {[int(b) for b in budgets]}"
    return _row("fcn_budget", q, "all", "all", cell, "; ".join(parts), worst,
                _verdict(ok))


def _floor_check(fcn, se, q, N, d):
    """fcn_floor: every seed's final loss against the exact floor at its width, at the widths m < N d where the
    floor is positive, allowing SAMPLING_Z standard errors of the evaluation set's estimate (the floor is an
    expectation; the loss a mean over n_eval samples)."""
    widths = sorted(int(w) for w in fcn["width"].unique())
    below = fcn[fcn["width"] < N * d]
    if below.empty:
        return _untested("fcn_floor", q, N, d, f"every FCN width (m in {widths}) is >= N d = {N * d}, where the "
                         "floor is 0: no loss can violate it", f"{fcn_arch()} m in {widths}")
    se = se[[*ex.model_keys(), "N_eval", "value"]].rename(columns={"value": "se"})
    f = below.merge(se, how="left", on=[*ex.model_keys(), "N_eval"])
    f["se"] = f["se"].fillna(0.0)  # a table without standard errors: compared exactly
    floor = f.apply(lambda r: width_floor(int(r["N"]), int(r["d"]), int(r["q"]), int(r["width"])), axis=1)
    gap = f["value"] - floor
    z = (gap / f["se"].where(f["se"] > 0)).min()
    sigmas = f"; lowest (loss - floor) / SE {z:.2g}" if np.isfinite(z) else ""
    at = ", ".join(f"m={int(m)}: floor {width_floor(N, d, q, int(m)):.3g}, loss {g['value'].min():.3g}"
                   for m, g in f.groupby("width"))
    ok = bool((gap + cl.SAMPLING_Z * f["se"]).min() >= 0)
    widths = sorted(int(w) for w in f["width"].unique())
    return _row("fcn_floor", q, N, d, f"{fcn_arch()} m in {widths} (< N d = {N * d})",
                f"loss - floor {_spread(gap)}{sigmas}; {at} (lowest seed)"
                + ("" if ok else " (FAIL: a loss below the exact floor: a bug, e.g. the model sees the target or "
                   "its width is mislabelled)"), float(gap.min()), _verdict(ok))


def _bracket_above_floor(a, q):
    """Per resolved critical width: the smallest grid width at which the model reached eps, over m*(eps).
    Below 1, a measured model beat the exact floor; the interpolated m_eps alone may dip below m*(eps) where
    the loss curve bends between two grid widths (the floor drops to 0 at m = N d)."""
    floor = a.apply(lambda r: width_needed(int(r["N"]), int(r["d"]), q, float(r["epsilon"])), axis=1)
    return a["critical_width"] / floor, a["width_above"] / floor


def _need_floor(crit, ev, q):
    """Every FCN family (N, d, steps, seed) at every eps whose grid has a width below m*(eps): the smallest grid
    width at which it reached eps (a resolved crossing's upper width, or the smallest width where even that
    reached eps) against m*(eps); above m*(eps) everywhere no model can violate it."""
    key = "fcn_need_floor"
    a = crit[(crit["arch"] == fcn_arch()) & (crit["q"] == q) & (crit["censored"] != ABOVE)]
    grid = ev[(ev["arch"] == fcn_arch()) & (ev["q"] == q)].groupby(["N", "d", "steps"])["width"].min()
    if a.empty:
        return _untested(key, q, "all", "all", "no FCN crossing of any eps")
    star = a.apply(lambda r: width_needed(int(r["N"]), int(r["d"]), q, float(r["epsilon"])), axis=1)
    smallest = a.apply(lambda r: grid.get((r["N"], r["d"], r["steps"]), math.inf), axis=1)
    testable = smallest < star
    if not testable.any():
        worst = (smallest / star).min()
        return _untested(key, q, "all", "all", f"every grid width is above m*(eps) (the smallest at {worst:.2f} "
                         "m*(eps)): no model can reach eps below it")
    t = a[testable]
    reached = t["width_above"].where(t["censored"] == "none", t["critical_width"])
    top = reached / star[testable]
    interp = (t["critical_width"] / star[testable])[t["censored"] == "none"]
    worst = t.loc[top.idxmin()]
    ok = bool(top.min() >= 1)
    return _row(key, q, "all", "all", f"{fcn_arch()}, {len(t)} crossings with a grid width below m*(eps)",
                f"the width that reached eps / m*(eps) >= {top.min():.3g} (at N={int(worst['N'])} d={int(worst['d'])} "
                f"eps={worst['epsilon']:g}); interpolated m_eps / m*(eps) {_spread(interp) if len(interp) else '-'}"
                + ("" if ok else " (FAIL: a model reached eps at a width the exact floor forbids: a bug)"),
                float(top.min()), _verdict(ok))


def evaluate_claims(table: pd.DataFrame, oracle: pd.DataFrame) -> pd.DataFrame:
    """Every claim of stsq.cl.CLAIMS for every (q, N, d) (and every q, for the width claims);
    the paper's claims first, then the checks.  Each role is read through its arch in the table
    (stsq.experiment.reading); where the table has an axis beyond the shape (stsq.experiment.extra_axes),
    every claim is judged per value of it, and its rows name that value first in their cell."""
    with ex.reading(table["arch"].unique()):
        extra = [k for k in ex.extra_axes() if k in table.columns]
        if not extra:
            return _claims_of(table, oracle)
        parts = []
        for key, part in table.groupby(extra, sort=True):
            where = " ".join(f"{k}={v}" for k, v in zip(extra, key if isinstance(key, tuple) else (key,)))
            claims = _claims_of(part, oracle)
            parts.append(claims.assign(cell=[f"{where} {c}".strip() for c in claims["cell"]]))
        claims = pd.concat(parts, ignore_index=True)
        return claims.sort_values("kind", key=lambda k: k == CHECK, kind="stable").reset_index(drop=True)


def _claims_of(table: pd.DataFrame, oracle: pd.DataFrame) -> pd.DataFrame:
    ev = _final(table)
    crit = critical_widths(table)
    reach = reach_table(table, oracle, needs_at_epsilon(crit))
    rows = []
    fcn_qs = set(ev[ev["arch"] == fcn_arch()]["q"])  # the FCN's width claims at the q it trains at
    lengths = bool((table["N_eval"] > table["N"]).any())
    for q in sorted(ev["q"].unique()):
        for N in sorted(ev[ev["q"] == q]["N"].unique()):
            for d in sorted(ev[(ev["q"] == q) & (ev["N"] == N)]["d"].unique()):
                rows.extend(_cell_claims(table, ev, oracle, reach, q, N, d, lengths))
        if q in fcn_qs:
            rows.extend(_scaling_claims(crit, ev, q))
    if not fcn_qs:  # no FCN in the sweep: each of its claims once, saying so
        rows.extend(_untested(k, "all", "all", "all", f"the sweep has no {fcn_arch()}")
                    for k in ("fcn_floor", "fcn_scaling", "fcn_product", "fcn_budget", "fcn_need_floor"))
    if paper_model() not in set(ev["arch"]):
        rows.extend(_untested(k, "all", "all", "all", f"the sweep has no {paper_model()}")
                    for k in MODEL_CELL_CLAIMS)
    # the transformer's width claims: tf_d_free once across q, tf_scaling one row per q (its form depends on q)
    rows.extend(_width_claims(crit, ev, paper_model(), ("tf_scaling", "tf_d_free"), "all", oracle))
    no_lengths = "the sweep scores no N' > N (its eval_length_factors are [1])"
    if not lengths and paper_model() in set(ev["arch"]):
        rows.extend(_untested(k, "all", "all", "all", no_lengths, paper_model())
                    for k in ("length_stochastic", "length_reach", "length_training"))
    for key, expected in (("length_fixed", ex.TRAINING_LENGTH), ("length_randomized", ex.POSITION_RANGE)):
        for arch in ex.with_length(expected):  # one row for the sweep, not one per (q, N, d)
            if arch not in set(ev["arch"]):
                rows.append(_untested(key, "all", "all", "all", f"the sweep has no {arch}", arch))
            elif not lengths:
                rows.append(_untested(key, "all", "all", "all", no_lengths, arch))
    claims = pd.DataFrame(rows, columns=CLAIM_COLUMNS)
    return claims.sort_values("kind", key=lambda k: k == CHECK, kind="stable").reset_index(drop=True)
