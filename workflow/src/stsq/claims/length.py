"""The claims about unseen lengths N' > N: stochastic positions generalize (how far: the reach), the reach grows
with d_e and along training, the loss at N' falls with the loss at N, a positional table fails beyond N, and
randomized positions generalize up to their range L.  Each record beside the function that measures it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from stsq.claims.view import factor, final, learned, models, not_applicable, oracle_at, select, spread
from stsq.core import experiment as ex
from stsq.core.claim_records import GENERALIZES_WITHIN, LEARNED, LEARNED_BELOW, Claim
from stsq.core.experiment import LOSS, PROJECTION, paper_model
from stsq.width.reach import cell_reach, family_reaches

REACH_MIN_FACTOR = 2  # length_stochastic: the worst seed's reach (stsq.width.reach) is at least this x N
FIXED_FAILS_ABOVE = 0.3  # fixed PE off its training length: loss above this (predicting 0 scores 1)
TREND_SLOPE_MIN = 0.2  # d log loss(N'max) / d log loss(N) over training, stochastic PE (docs/claims.md)


def _length_stochastic(c, cell, arch):
    """The worst seed's reach (stsq.width.reach) at the end of training, at least REACH_MIN_FACTOR x N; each N'
    with the worst seed's loss, the oracle and the model's projection onto the ground-truth family beside it."""
    st, oracle, reach, sel, label = cell.st, cell.sweep.oracle, cell.reach, cell.sel, cell.label
    q, N, d, d_e = sel["q"], sel["N"], sel["d"], sel["width"]
    off = st[(st["width"] == d_e) & (st["N_eval"] > N)]
    if off.empty:
        return [c.untested(q, N, d, "no N' > N", label)]
    worst = off.groupby("N_eval")["value"].max()
    proj = select(final(cell.sweep.table, PROJECTION), sel).groupby("N_eval")["value"].max()
    parts = []
    for L, loss in worst.items():
        o = oracle_at(oracle, q, N, d_e, L)
        if o is None:
            return [c.untested(q, N, d, f"no oracle at N'={int(L)}", label)]
        p = f", projection {proj[L]:.3g}" if L in proj.index else ""
        parts.append(f"{int(L) // N}N: {loss:.3g} (bound {o + GENERALIZES_WITHIN:.3g}{p})")
    fin = cell_reach(reach[reach["final"].astype(bool) & (reach["width"] == d_e)])
    if fin.empty:
        return [c.untested(q, N, d, "no reach: a scored N' without its oracle", label)]
    r = fin.iloc[0]
    at = "at least " if r["censored"] else ""
    longest = int(worst.index.max()) // N
    stop = (f" (still within the bound at the longest N' scored, {longest}N: the sweep stopped first)"
            if r["censored"] else "")
    text = (f"reach {at}{factor(r['reach_factor'])} (seeds {factor(r['lo'])} to {factor(r['hi'])}){stop}; "
            f"worst seed at N {st[(st['width'] == d_e) & (st['N_eval'] == N)]['value'].max():.3g}, at N': "
            + "; ".join(parts))
    return [c.judged(q, N, d, label, text, float(r["reach_factor"]), r["reach_factor"] >= REACH_MIN_FACTOR)]


def _length_reach(c, cell, arch):
    """The worst seed's reach at the smallest and largest learned d_e (final models), and at the largest d_e
    at the first learned and the last checkpoint."""
    reach, sel = cell.reach, cell.sel
    q, N, d = sel["q"], sel["N"], sel["d"]
    if reach.empty:
        return [c.untested(q, N, d, "no N' > N scored (with its oracle)", f"{paper_model()}")]
    cr = cell_reach(reach)
    learned_ = cr[cr["loss_at_N_max"] <= LEARNED_BELOW]
    fin = learned_[learned_["final"].astype(bool)].sort_values("width")
    label = f"{paper_model()} d_e in {[int(w) for w in fin['width']]}"
    if len(fin) < 2:
        return [c.untested(q, N, d, f"{len(fin)} d_e learned at N (worst seed's loss <= "
                           f"{LEARNED_BELOW:g}); the reach against d_e needs two", label)]
    along = learned_[~learned_["final"].astype(bool) & (learned_["width"] == sel["width"])].sort_values("step")
    if len(along) < 2:
        return [c.untested(q, N, d, f"{len(along)} checkpoint(s) of d_e={sel['width']} scored at "
                           "N' > N after it learned at N; the reach along training needs two", label)]

    def grows(a, b):
        return b["reach_factor"] > a["reach_factor"] or (b["censored"] and a["censored"]
                                                         and b["reach_factor"] == a["reach_factor"])

    def said(r):
        return ("at least " if r["censored"] else "") + factor(r["reach_factor"])

    small, large, first, last = fin.iloc[0], fin.iloc[-1], along.iloc[0], along.iloc[-1]
    def allows(r):  # the reach the width allows, from the cell's own resolved need (stsq.width.reach.expected_factor)
        return (f"the width allows {r.expected_factor:.3g}N" if math.isfinite(r.expected_factor) else
                "what the width allows is unknown: no resolved d_e_eps at this (q, N)")

    def family(r):  # the family's reach at this d_e, at the models' own (c, v) and refitted per N'
        fam = family_reaches(cell.sweep.table, cell.sweep.oracle, paper_model(), q, N, d, sel["steps"], int(r.width))
        said_fam = {k: "unknown" if v is None else said({"reach_factor": v[0], "censored": v[1]})
                    for k, v in fam.items()}
        reaches = {"the trained models": (r.reach_factor, r.censored),
                   **{k: v for k, v in (("the family at their (c, v)", fam["own"]),
                                        ("the family refitted at each N'", fam["refit"])) if v is not None}}
        soonest = min(reaches.values(), key=lambda x: (x[0], x[1]))
        stop = [k for k, x in reaches.items() if x == soonest and not x[1]]
        return (f"; the family at the models' own (c, v) {said_fam['own']}, refitted at each N' "
                f"{said_fam['refit']}; " + (f"{' and '.join(stop)} stop first" if stop else
                                           "none stops within the lengths scored"))

    by_width = ", ".join(f"d_e={int(r.width)}: {said(r._asdict())} ({allows(r)}{family(r)})" for r in fin.itertuples())
    text = (f"final reach by d_e: {by_width}; d_e={sel['width']} along training: step {int(first['step'])} "
            f"{said(first)} -> step {int(last['step'])} {said(last)}")
    return [c.judged(q, N, d, label, text, float(large["reach_factor"] / small["reach_factor"]),
                     grows(small, large) and grows(first, last))]


def length_curves(table, sel, arch) -> pd.DataFrame:
    """Per seed and checkpoint: the loss at N (column N) and at the longest N' scored along training."""
    t = select(table[(table["split"] == "test") & (table["metric"] == LOSS)], sel, arch)
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


def _length_training(c, cell, arch):
    table, sel, label = cell.sweep.table, cell.sel, cell.label
    q, N, d = sel["q"], sel["N"], sel["d"]
    curves = length_curves(table, sel, paper_model())
    slopes = trend_slopes(curves) if len(curves) else pd.Series(dtype=float)
    if slopes.empty:
        return [c.untested(q, N, d, "fewer than 3 checkpoints scored at N' > N", label)]
    longest = int(curves["longest"].iloc[0])
    first, last = (curves.groupby(level="seed").nth(k).mean(numeric_only=True) for k in (0, -1))
    text = (f"N'={longest}: slope {spread(slopes)}; mean loss at N {first['at_N']:.3g} -> {last['at_N']:.3g}, "
            f"at N' {first['at_longest']:.3g} -> {last['at_longest']:.3g} (first -> last checkpoint)")
    for other in ex.with_length(ex.TRAINING_LENGTH):  # beside it: the models expected not to generalize
        fx = select(table[table["split"] == "test"], {"q": q, "N": N, "d": d}, other)
        if len(fx):
            fx_sel = {"q": q, "N": N, "d": d, "width": int(fx["width"].max()), "steps": int(fx["steps"].max())}
            fx_curves = length_curves(table, fx_sel, other)
            fx_slopes = trend_slopes(fx_curves) if len(fx_curves) else pd.Series(dtype=float)
            if len(fx_slopes):
                text += f"; {other} slope {spread(fx_slopes)}"
    return [c.judged(q, N, d, label, text, float(slopes.min()), slopes.min() >= TREND_SLOPE_MIN)]


def _length_fixed(c, cell, arch):
    q, N, d, fx = cell.q, cell.N, cell.d, cell.of(arch)
    d_e = int(fx["width"].max())
    label = f"{arch} d_e={d_e}"
    off = fx[(fx["width"] == d_e) & (fx["N_eval"] > N)]
    if off.empty:
        return [c.untested(q, N, d, "no N' > N", label)]
    fit = fx[(fx["width"] == d_e) & (fx["N_eval"] == N)]["value"]
    if not learned(fit):
        return [c.untested(q, N, d, f"the model did not fit at N (worst seed's loss "
                           f"{fit.max():.3g} > {LEARNED_BELOW:g}): its loss at N' says nothing about length", label)]
    best = off.groupby("N_eval")["value"].min()
    return [c.judged(q, N, d, label + f", N' in {sorted(int(x) for x in best.index)}",
                     f"at N: {spread(fit)}; lowest at N' > N: {best.min():.3g} (N'={int(best.idxmin())})",
                     float(best.min()), best.min() > FIXED_FAILS_ABOVE)]


def _length_randomized(c, cell, arch):
    """Each seed's loss at every N < N' <= L (the lengths it was scored at) against the oracle at N' plus
    GENERALIZES_WITHIN; the lengths above L (not applicable) said beside it."""
    q, N, d, rz, oracle = cell.q, cell.N, cell.d, cell.of(arch), cell.sweep.oracle
    outside = models(not_applicable(cell.sweep.table), arch, q, N, d)  # N' beyond its positions' range
    d_e = int(rz["width"].max())
    label = f"{arch} d_e={d_e}"
    at_N = rz[(rz["width"] == d_e) & (rz["N_eval"] == N)]["value"]
    above = sorted(int(x) for x in outside[outside["width"] == d_e]["N_eval"].unique())
    beyond = f"; N' > L, not applicable: {above}" if above else ""
    if not learned(at_N):
        return [c.untested(q, N, d, f"the model did not learn at N (worst seed's loss "
                           f"{at_N.max() if len(at_N) else math.nan:.3g} > {LEARNED_BELOW:g}){beyond}", label)]
    worst = rz[(rz["width"] == d_e) & (rz["N_eval"] > N)].groupby("N_eval")["value"].max()
    if worst.empty:
        return [c.untested(q, N, d, f"no N' with N < N' <= L{beyond}", label)]
    parts, excess = [], []
    for L, loss in worst.items():
        o = oracle_at(oracle, q, N, d_e, L)
        if o is None:
            return [c.untested(q, N, d, f"no oracle at N'={int(L)}, d_e={d_e}", label)]
        excess.append(loss - (o + GENERALIZES_WITHIN))
        parts.append(f"N'={int(L)} ({int(L) // N}N): {loss:.3g} (oracle {o:.3g})")
    return [c.judged(q, N, d, label, f"worst seed at N {at_N.max():.3g}; " + "; ".join(parts) + beyond,
                     float(max(excess)), max(excess) <= 0)]


LENGTH_STOCHASTIC = Claim(
    "length_stochastic", "stochastic positional encodings generalize to unseen lengths",
    "the reach (stsq.width.reach): the longest N' such that the loss at every scored N'' with N < N'' <= N' is "
    f"within the oracle at N'' + {GENERALIZES_WITHIN:g}; worst seed, largest d_e, with the seeds' range, the "
    "loss and the oracle at each N' (and, as the explanation of what was learned, the model's projection "
    "onto the ground-truth family W_pp = c I, V = v [I, 0])",
    f"worst seed's reach >= {REACH_MIN_FACTOR}N",
    "theory: the ground-truth solution does not depend on N; an absolute bound a non-generalizing model "
    f"fails (fixed PE scores above {FIXED_FAILS_ABOVE:g}, predicting 0 scores 1). How far it reaches is "
    "the number reported: a verdict at every N' the sweep scored would depend on where the sweep stops",
    LEARNED,
    value="the worst seed's reach, N'/N",
    lengths=True, learned=True, figures=("length", "encodings", "reach"), measure=_length_stochastic, needs=("oracle",))

LENGTH_REACH = Claim(
    "length_reach", "the reach of stochastic positional encodings grows with d_e and along training",
    "the worst seed's reach (stsq.width.reach) of the final models at the smallest and the largest d_e that "
    "learned at N; at the largest d_e, at the first checkpoint where it had learned at N and at the last",
    "larger at the largest d_e than at the smallest, and at the last checkpoint than at the first (equal "
    "counts only where both are at the longest N' scored)",
    "theory: N' near-orthogonal unit vectors need d_e ~ q log N', so the width allows a reach exponential "
    "in d_e / q (N^(d_e / d_e,eps), reported beside it); along training the attention's scale c grows and "
    "its leakage (N' - q) e^(-c) at N' falls",
    LEARNED + " at two d_e or more; two checkpoints scored at N' > N after it learned",
    value="the final models' reach at the largest d_e over the reach at the smallest",
    lengths=True, learned=True, figures=("reach",), measure=_length_reach, needs=("oracle",))

LENGTH_TRAINING = Claim(
    "length_training", "as training drives the in-distribution loss down, the loss at unseen lengths "
    "goes down with it (stochastic PE)",
    "worst seed's log-log slope of the loss at the longest N' against the loss at N, over the checkpoints "
    "(the fixed-PE model's slope beside it)",
    f">= {TREND_SLOPE_MIN:g}",
    "theory: with W_pp = c I the off-target attention decays like (N' - q) e^(-c) at every length, so "
    "both losses fall together (slope 1 once that leakage dominates; early on the loss at N also holds "
    "V's error, measured 0.4-0.6); a model that does not generalize keeps its long-N' loss (fixed PE: "
    "|slope| < 0.002)", LEARNED + "; at least 3 checkpoints scored at N'",
    value="the worst seed's slope",
    lengths=True, learned=True, figures=("length",), measure=_length_training)

LENGTH_FIXED = Claim(
    "length_fixed", "a positional table, drawn once or learned, fails at unseen lengths (the paper's "
    "fixed PE; a learned table's rows beyond N are never trained either)",
    "per arch expected to fail beyond N (tf_fixed, tf_learned): best seed's loss at every N' > N, largest d_e",
    f"> {FIXED_FAILS_ABOVE:g} at every N' > N",
    "paper: fixed PE hinders length generalization; rows N+1..N' of its table were never trained",
    f"the model fits at N: worst seed's loss at N' = N <= {LEARNED_BELOW:g} (else its failure at "
    "N' says nothing about length)",
    tested_by=("encodings", "cpu"),  # the encodings sweep first: it trains both tables, the cpu sweep one
    value="the best seed's lowest loss at an N' > N",
    reads=ex.TRAINING_LENGTH, lengths=True, figures=("length", "encodings"), measure=_length_fixed)

LENGTH_RANDOMIZED = Claim(
    "length_randomized", "randomized positions (a sorted random subset of L positions per sample) "
    "generalize to every unseen length up to L (Ruoss et al. 2023)",
    "per arch drawing its positions from L rows (tf_randomized): worst seed's loss at every N with "
    "N < N' <= L, largest d_e, against the oracle at N' (N' > L: not applicable, the model has no position "
    "there)",
    f"<= oracle at N' + {GENERALIZES_WITHIN:g} at every N < N' <= L",
    "Ruoss et al.: every relative arrangement of positions up to L is seen in training; the same absolute "
    "bound as length_stochastic (the ground-truth family works on any near-orthogonal positions)",
    f"the model learned at N: worst seed's loss at N' = N <= {LEARNED_BELOW:g}; an N' with N < N' <= L",
    tested_by=("encodings",),
    value=f"the worst seed's largest loss minus its bound, oracle + {GENERALIZES_WITHIN:g}, over N < N' <= L",
    reads=ex.POSITION_RANGE, lengths=True, figures=("encodings",), measure=_length_randomized, needs=("oracle",))
