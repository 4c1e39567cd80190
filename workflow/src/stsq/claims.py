"""The claims table: each claim of the paper (stsq.experiment.CLAIMS), measured from the tidy table
and the oracle table, with a verdict PASS, FAIL or NOT TESTED (the sweep cannot test it).

Per (q, N): the transformer's loss against the oracle, its loss against d_e, the ground-truth
directions, length generalization (stochastic and fixed), the FCN's width floor.  Per q, across N:
the width each arch needs to reach loss EPSILON, and how it grows (a log-log slope per seed).
A claim about a bound is judged on the worst seed.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd

from .experiment import (
    CLAIM_COLUMNS,
    CLAIMS,
    COS_V_MIN,
    COS_W_MIN,
    EPSILON,
    FAIL,
    FCN_ARCH,
    FCN_SLOPE_MIN,
    FIXED,
    FIXED_FAILS_ABOVE,
    LOSS,
    NOT_TESTED,
    OK,
    ORACLE_FACTOR,
    ORACLE_SLACK,
    PASS,
    PROJECTION,
    STOCHASTIC,
    TF_SLOPE_MAX,
)
from .files import atomic_write_text
from .theory import width_floor


def _final(table, metric=LOSS):
    return table[(table["split"] == "eval") & (table["metric"] == metric) & (table["status"] == OK)]


def _last_curve(table, metric):
    """Each model's last curve point of ``metric`` (split test)."""
    t = table[(table["split"] == "test") & (table["metric"] == metric)]
    return t.loc[t.groupby(["arch", "q", "N", "width", "seed"])["step"].idxmax()]


def _spread(values) -> str:
    v = pd.Series(values, dtype=float)
    return f"{v.mean():.3g} [{v.min():.3g}, {v.max():.3g}] (n={len(v)})"


def _row(key, q, N, cell, measured, value, verdict):
    c = CLAIMS[key]
    return {"claim": key, "statement": c.statement, "q": q, "N": N, "cell": cell, "measured": measured,
            "value": value, "threshold": c.threshold, "verdict": verdict}


def _untested(key, q, N, reason):
    return _row(key, q, N, "", f"not tested by this sweep: {reason}", math.nan, NOT_TESTED)


def _verdict(ok: bool) -> str:
    return PASS if ok else FAIL


def oracle_bound(oracle: pd.DataFrame, q, N, d_e, N_eval) -> float | None:
    """ORACLE_FACTOR x the oracle + ORACLE_SLACK at (q, N, d_e, N'), or None where it was not computed."""
    o = oracle[(oracle["q"] == q) & (oracle["N"] == N) & (oracle["width"] == d_e) & (oracle["N_eval"] == N_eval)]
    return None if o.empty else ORACLE_FACTOR * float(o[LOSS].iloc[0]) + ORACLE_SLACK


# -- per (q, N) ---------------------------------------------------------------------------------------
def _group_claims(table, ev, oracle, q, N):
    rows = []
    st = ev[(ev["arch"] == STOCHASTIC) & (ev["q"] == q) & (ev["N"] == N)]
    if st.empty:
        for key in ("learns", "wider_d_e", "directions", "length_stochastic"):
            rows.append(_untested(key, q, N, "no tf_stochastic cell"))
    else:
        d_e = int(st["width"].max())
        at_N = st[(st["width"] == d_e) & (st["N_eval"] == N)]["value"]
        bound = oracle_bound(oracle, q, N, d_e, N)
        if bound is None:
            rows.append(_untested("learns", q, N, "no oracle at this cell"))
        else:
            rows.append(_row("learns", q, N, f"tf_stochastic d_e={d_e}", f"loss {_spread(at_N)}; bound {bound:.3g}",
                             float(at_N.max()), _verdict(at_N.max() <= bound)))
        widths = sorted(st["width"].unique())
        if len(widths) < 2:
            rows.append(_untested("wider_d_e", q, N, f"one d_e ({d_e})"))
        else:
            mean = st[st["N_eval"] == N].groupby("width")["value"].mean()
            lo, hi = mean[widths[0]], mean[widths[-1]]
            rows.append(_row("wider_d_e", q, N, f"d_e {widths[0]} -> {widths[-1]}",
                             f"mean loss {lo:.3g} -> {hi:.3g}", float(hi - lo), _verdict(hi < lo)))
        rows.append(_directions(table, q, N, d_e))
        rows.append(_length_stochastic(st, _final(table, PROJECTION), q, N, d_e))
    fx = ev[(ev["arch"] == FIXED) & (ev["q"] == q) & (ev["N"] == N)]
    if fx.empty:
        rows.append(_untested("length_fixed", q, N, "no tf_fixed cell"))
    else:
        d_e = int(fx["width"].max())
        off = fx[(fx["width"] == d_e) & (fx["N_eval"] > N)]
        if off.empty:
            rows.append(_untested("length_fixed", q, N, "no N' > N"))
        else:
            fit = fx[(fx["width"] == d_e) & (fx["N_eval"] == N)]["value"]
            best = off.groupby("N_eval")["value"].min()
            rows.append(_row("length_fixed", q, N, f"tf_fixed d_e={d_e}, N' in {sorted(int(x) for x in best.index)}",
                             f"at N: {_spread(fit)}; lowest at N' > N: {best.min():.3g} (N'={int(best.idxmin())})",
                             float(best.min()), _verdict(best.min() > FIXED_FAILS_ABOVE)))
    fcn = ev[(ev["arch"] == FCN_ARCH) & (ev["q"] == q) & (ev["N"] == N) & (ev["N_eval"] == N)]
    if fcn.empty:
        rows.append(_untested("fcn_floor", q, N, "no FCN cell"))
    else:
        floor = fcn.apply(lambda r: width_floor(int(r["N"]), int(r["d"]), int(r["q"]), int(r["width"])), axis=1)
        gap = fcn["value"] - floor
        rows.append(_row("fcn_floor", q, N, f"fcn m in {sorted(int(w) for w in fcn['width'].unique())}",
                         f"loss - floor {_spread(gap)}", float(gap.min()), _verdict(gap.min() >= 0)))
    return rows


def _directions(table, q, N, d_e):
    cells = dict(arch=STOCHASTIC, q=q, N=N, width=d_e)
    cos = {}
    for metric in ("cos_V_ground_truth", "cos_W_pp_identity"):
        t = _last_curve(table, metric)
        cos[metric] = t[np.logical_and.reduce([t[k] == v for k, v in cells.items()])]["value"]
    if any(v.empty for v in cos.values()):
        return _untested("directions", q, N, "no training curve with the cosines")
    v, w = cos["cos_V_ground_truth"], cos["cos_W_pp_identity"]
    ok = v.min() >= COS_V_MIN and w.min() >= COS_W_MIN
    return _row("directions", q, N, f"tf_stochastic d_e={d_e}", f"cos V {_spread(v)}; cos W_pp {_spread(w)}",
                float(min(v.min(), w.min())), _verdict(ok))


def _length_stochastic(st, projection, q, N, d_e):
    """Each seed's loss at every N' > N against its own projection onto the ground-truth family there."""
    keys = ["seed", "N_eval"]
    off = st[(st["width"] == d_e) & (st["N_eval"] > N)].set_index(keys)["value"]
    proj = projection[(projection["arch"] == STOCHASTIC) & (projection["q"] == q) & (projection["N"] == N)
                      & (projection["width"] == d_e)].set_index(keys)["value"]
    if off.empty:
        return _untested("length_stochastic", q, N, "no N' > N")
    if not off.index.isin(proj.index).all():
        return _untested("length_stochastic", q, N, "no projection onto the family in the table")
    excess = off - (ORACLE_FACTOR * proj.reindex(off.index) + ORACLE_SLACK)  # <= 0 where the claim holds
    parts = [f"N'={int(L)}: {off.xs(L, level='N_eval').max():.3g} (projection "
             f"{proj.reindex(off.index).xs(L, level='N_eval').max():.3g})" for L in sorted(off.index.unique('N_eval'))]
    return _row("length_stochastic", q, N, f"tf_stochastic d_e={d_e}", "worst seed " + "; ".join(parts),
                float(excess.max()), _verdict(excess.max() <= 0))


# -- per q, across N: the width needed to reach EPSILON --------------------------------------------
def needed_widths(ev: pd.DataFrame, arch: str, eps: float = EPSILON) -> pd.DataFrame:
    """Per (q, N, seed): the smallest width of ``arch`` whose final loss at N' = N is <= eps, with
    ``censored`` True (and the largest width as a lower bound) where no width of the sweep reached it."""
    a = ev[(ev["arch"] == arch) & (ev["N_eval"] == ev["N"])]
    rows = []
    for (q, N, d, seed), g in a.groupby(["q", "N", "d", "seed"]):
        hit = g[g["value"] <= eps]["width"]
        rows.append({"arch": arch, "q": q, "N": N, "d": d, "seed": seed, "width": int(hit.min() if len(hit) else
                     g["width"].max()), "censored": hit.empty})
    return pd.DataFrame(rows, columns=["arch", "q", "N", "d", "seed", "width", "censored"])


def scale_of(arch: str, q, N, d):
    """The x of the scaling fit: N d for the FCN, q log N for a transformer."""
    return N * d if arch == FCN_ARCH else q * np.log(N)


def growth_slopes(need: pd.DataFrame) -> pd.DataFrame:
    """Per (arch, q, seed): the least-squares slope of log width against log scale_of over N."""
    rows = []
    for (arch, q, seed), g in need.groupby(["arch", "q", "seed"]):
        g = g.sort_values("N")
        x = np.log(scale_of(arch, q, g["N"].to_numpy(), g["d"].to_numpy()).astype(float))
        y = np.log(g["width"].to_numpy(dtype=float))
        slope = float(np.polyfit(x, y, 1)[0]) if len(g) >= 2 else math.nan
        rows.append({"arch": arch, "q": q, "seed": seed, "slope": slope, "n_N": len(g),
                     "censored": bool(g["censored"].any()), "censored_last": bool(g["censored"].iloc[-1])})
    return pd.DataFrame(rows, columns=["arch", "q", "seed", "slope", "n_N", "censored", "censored_last"])


def _scaling_claims(ev, q):
    rows = []
    for key, arch, x in (("fcn_scaling", FCN_ARCH, "N d"), ("tf_scaling", STOCHASTIC, "q log N")):
        need = needed_widths(ev[ev["q"] == q], arch)
        Ns = sorted(need["N"].unique())
        if len(Ns) < 2:
            rows.append(_untested(key, q, "all", f"one N ({Ns[0] if Ns else 'none'})" if Ns else f"no {arch} cell"))
            continue
        per_N = need.groupby("N").apply(
            lambda g: f"{'>' if g['censored'].all() else ''}{int(g['width'].median())}", include_groups=False)
        where = ", ".join(f"N={int(N)}: {w}" for N, w in per_N.items())
        if need[need["N"] == Ns[0]]["censored"].all():
            rows.append(_untested(key, q, "all", f"{arch} never reached loss {EPSILON:g} ({where})"))
            continue
        slopes = growth_slopes(need)["slope"]
        if arch == FCN_ARCH:  # a censored point is a lower bound: the slope is one too, conservative
            verdict = _verdict(slopes.min() >= FCN_SLOPE_MIN)
            value = float(slopes.min())
        else:  # a censored transformer point would make its slope a lower bound, not the upper one wanted
            value = float(slopes.max())
            if need["censored"].any():
                verdict = FAIL if value > TF_SLOPE_MAX else NOT_TESTED
            else:
                verdict = _verdict(value <= TF_SLOPE_MAX)
        rows.append(_row(key, q, "all", f"{arch}, width needed per N: {where}",
                         f"slope vs log({x}) {_spread(slopes)}", value, verdict))
    return rows


def evaluate_claims(table: pd.DataFrame, oracle: pd.DataFrame) -> pd.DataFrame:
    """Every claim of stsq.experiment.CLAIMS for every (q, N) (and every q, for the scaling claims)."""
    ev = _final(table)
    rows = []
    for q in sorted(ev["q"].unique()):
        for N in sorted(ev[ev["q"] == q]["N"].unique()):
            rows.extend(_group_claims(table, ev, oracle, q, N))
        rows.extend(_scaling_claims(ev, q))
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


def write_claims(claims: pd.DataFrame, csv_path, html_path) -> None:
    atomic_write_text(csv_path, claims.to_csv(index=False, lineterminator="\n"))
    atomic_write_text(html_path, claims_html(claims))


def claims_html(claims: pd.DataFrame) -> str:
    counts = claims["verdict"].value_counts()
    colour = {PASS: "#d9f2d9", FAIL: "#f8d0d0", NOT_TESTED: "#eeeeee"}
    head = "".join(f"<th>{h}</th>" for h in ("claim (the paper's statement)", "q", "N", "cell", "measured",
                                               "threshold", "verdict"))
    body = "".join(
        f"<tr style='background:{colour[r.verdict]}'><td><b>{html.escape(r.claim)}</b>: {html.escape(r.statement)}"
        f"</td><td>{r.q}</td><td>{r.N}</td><td>{html.escape(str(r.cell))}</td><td>{html.escape(r.measured)}</td>"
        f"<td>{html.escape(r.threshold)}</td><td><b>{r.verdict}</b></td></tr>"
        for r in claims.itertuples())
    why = "".join(f"<li><b>{html.escape(k)}</b>: {html.escape(c.measured)}; {html.escape(c.why)}</li>"
                  for k, c in CLAIMS.items())
    summary = ", ".join(f"{counts.get(v, 0)} {v}" for v in (PASS, FAIL, NOT_TESTED))
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>Claims</title>"
            "<style>body{font-family:sans-serif;max-width:1300px}td,th{padding:4px 8px;vertical-align:top}"
            "table{border-collapse:collapse}tr{border-bottom:1px solid #ccc}</style></head><body>"
            f"<h1>Claims of the paper, measured: {summary}</h1>"
            "<p><b>Columns.</b> <i>claim</i>: the paper's statement; <i>q, N</i>: the subset size and training "
            "length the row is about (<i>all</i>: a fit across N); <i>cell</i>: the models it reads; "
            "<i>measured</i>: mean [min, max] over seeds, three significant digits; <i>threshold</i>: what "
            "PASS means (judged on the worst seed); <i>verdict</i>: PASS, FAIL, or NOT TESTED where this sweep "
            "cannot test the claim. The oracle is the best loss of the ground-truth family "
            "W_pp = c I, V = v [I, 0] (stsq/oracle.py).</p>"
            f"<table><tr>{head}</tr>{body}</table><h2>What each claim measures, and why its threshold</h2>"
            f"<ul>{why}</ul></body></html>\n")
