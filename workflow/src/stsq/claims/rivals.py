"""Each scaling claim as a law fitted below the largest size and tested at it, one-sided, with a margin the
seeds' spread sets; beside it the law next to it (the rival) and the power of the test.

A scaling claim says a need grows like one law F or slower (the transformer's), or at least like one (the
FCN's).  Every law here is a one-parameter form,

    log w_eps = c + log size(q, N, d),

with the constant c fitted per seed (the mean log residual of that seed's resolved critical widths) at every
value of one axis but its largest, one constant per value of the other keys a law leaves free (``group``: per
(q, d) for the growth in N, so that the test reads the growth in N alone; per (q, N) for the growth in d; per q for
the FCN's growth in N d).  Each seed's constant predicts the need at the held-out largest value; the
prediction is their geometric mean and its uncertainty their range.  At each held-out (q, N, d) the margin is

    margin = log(hi / lo) + log(pred_hi / pred_lo),

the seeds' range of the measured need plus the range of the per-seed predictions (both in log).  A need that
is "F or slower" FAILs where the measured geometric mean lies above F's prediction by more than the margin
(``HeldOut.above``); "at least F" FAILs where it lies below by more (``below``).  A seed whose need is only a
bound (no width of the grid reached eps) counts with the bound as its value, where the bound errs on the safe
side: at the held-out value a lower bound for "F or slower" (an upper bound for "at least F"), and, in the fit
below it, an upper bound (a lower bound): a prediction so fitted errs toward no FAIL.  A PASS takes no bound.

The rival is the law next to F that the statement denies.  It decides no verdict on its own: it says whether
the sweep could have told a need growing like it from F (``told``: the rival's prediction beyond F's by more
than the margin at every held-out cell; else the claim is NOT TESTED, with the factor and the margin), and
the row reports whether the measured need rejects it (outside the seeds' range, F closer).  How much the test
can see is the power scan (``first_rejected``): the smallest exponent a of N (of d; for the FCN the largest
of N d) whose law, each seed's need grown from its own need at the anchor size, FAILs the same test.

The laws (docs/claims.md, "The rivals"):
- the transformer's need against N: q log N (theory) against q sqrt(N), the power law this sweep's N
  range can tell from it (the statement denies every N^a, a > 0; a logarithm looks like N^(1/ln N)
  locally: 0.72 at N = 4, 0.21 at N = 128);
- against d: q log N (theory: d-free) against q log N d^0.25;
- the FCN's need against N d: "at least like N d" up to log factors (Omega~(N d)), so the most generous law
  the statement allows, N d / log(N d), is the one a need must not fall below; N d itself the one it meets.

At q >= 3 the theory's own form is q log^2 N (``tf_law``): the summed query's cross-terms p_j^T p_i inside
y score the selected tokens unevenly, by about c sqrt((q - 1) / d_e) at an attention scale c, and c must
grow like log N to take the mass off the N - q others, so the loss stays at eps only where d_e grows like
q c^2 ~ q log^2 N (docs/claims.md, "The q >= 3 form").  At q <= 2 every selected token shares the same
cross-term and the need is q log N.  Both are O~(q log N), the paper's bound (up to log factors).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

ABOVE, BELOW, NONE = "above", "below", "none"  # stsq.width.critical's censoring (a need only bounded, or measured)
OR_SLOWER, AT_LEAST = "or slower", "at least"  # what a claim says of its law: a FAIL lies above it, or below


@dataclass(frozen=True)
class Law:
    name: str  # as the claims table says it
    exponent_N: float | None  # None: (log N)^log_power; else N^exponent
    exponent_d: float = 0.0
    log_power: float = 1.0
    per_log_Nd: float = 0.0  # divided by log(N d) to this power

    def log_size(self, q, N, d) -> np.ndarray:
        q, N, d = (np.asarray(v, dtype=float) for v in (q, N, d))
        growth = self.log_power * np.log(np.log(N)) if self.exponent_N is None else self.exponent_N * np.log(N)
        return np.log(q) + growth + self.exponent_d * np.log(d) - self.per_log_Nd * np.log(np.log(N * d))


Q_LOG_N = Law("q log N", None)
Q_LOG2_N = Law("q log^2 N", None, log_power=2.0)
Q_SQRT_N = Law("q sqrt(N)", 0.5)
Q_LOG_N_D_QUARTER = Law("q log N d^0.25", None, 0.25)
N_D = Law("N d", 1.0, 1.0)
N_D_OVER_LOG = Law("N d / log(N d)", 1.0, 1.0, per_log_Nd=1.0)
CROSS_TERM_Q = 3  # from this q on the selected tokens' cross-terms differ: the need is q log^2 N
SCAN_STEP = 0.01  # the power scan's resolution in the exponent
SCAN_TOP = 2.0  # ... and the largest exponent it tries
PART_TOP = 1e12  # the largest value of an axis at which ``HeldOut.parts_at`` looks for the laws to part


def tf_law(q: int) -> Law:
    """The theory's form of the transformer's need against N at one q (the module docstring)."""
    return Q_LOG2_N if q >= CROSS_TERM_Q else Q_LOG_N


def _round(v: float) -> str:
    """A size to two significant figures, with thousands separators: 3,100, 97, 1.3."""
    if v < 10:
        return f"{v:.2g}"
    k = 10 ** (int(math.floor(math.log10(v))) - 1)
    return f"{round(v / k) * k:,.0f}"


def _x(r, what: str) -> str:
    return f"x{math.exp(r[what]):.3g}"


@dataclass
class HeldOut:
    """What ``held_out`` found: ``reason`` (why it cannot set up the test) or the held-out cells (``cells``:
    per (q, N, d) the measured geometric mean, the seeds' range lo .. hi and how many are bounds; each law's
    prediction with its range over the per-seed fits; the margin of each, in log)."""

    axis: str
    theory: Law
    rival: Law
    side: str = OR_SLOWER
    reason: str = ""
    cells: pd.DataFrame | None = None
    fit_bounds: int = 0  # how many bounds the fit below the held-out value took as values
    fitted_from: float = 0.0  # the smallest value of the axis the fit read

    @property
    def bounded(self) -> bool:
        """Some need it read is only a bound: it can FAIL, not PASS."""
        return bool(self.fit_bounds or (self.decided and self.cells["bounds"].any()))

    @property
    def decided(self) -> bool:
        return not self.reason

    def excess(self, law: str = "theory") -> pd.Series:
        """log(measured / the law's prediction) per held-out cell."""
        return np.log(self.cells["measured"] / self.cells[law])

    def margin(self, law: str = "theory") -> pd.Series:
        c = self.cells
        return np.log(c["hi"] / c["lo"]) + np.log(c[f"{law}_hi"] / c[f"{law}_lo"])

    def above(self, law: str = "theory") -> pd.Series:
        """Per cell: the measured need above the law's prediction by more than the margin."""
        return self.excess(law) > self.margin(law)

    def below(self, law: str = "theory") -> pd.Series:
        return -self.excess(law) > self.margin(law)

    @property
    def failed(self) -> bool:
        """The theory does not fit at some held-out cell, on the side its claim forbids."""
        if not self.decided:
            return False
        return bool((self.above() if self.side == OR_SLOWER else self.below()).any())

    @property
    def apart(self) -> pd.Series:
        """log(rival / theory) per cell, signed so that it is positive where the rival lies on the side a FAIL
        lies."""
        s = np.log(self.cells["rival"] / self.cells["theory"])
        return s if self.side == OR_SLOWER else -s

    @property
    def told(self) -> bool:
        """A need growing like the rival would FAIL: at some held-out cell the laws' predictions lie further
        apart than the margin, the rival on the side a FAIL lies."""
        return bool(self.decided and (self.apart > self.margin()).any())

    @property
    def rejected(self) -> bool:
        """The rival lies outside the seeds' range at every held-out cell, the theory closer."""
        if not self.decided:
            return False
        c = self.cells
        outside = (c["rival"] < c["lo"]) | (c["rival"] > c["hi"])
        closer = self.excess().abs() < self.excess("rival").abs()
        return bool((outside & closer).all())

    def cell_text(self, r) -> str:
        bound = f" ({int(r.bounds)} of them a bound)" if r.bounds else ""
        return (f"(q={int(r.q)},N={int(r.N)},d={int(r.d)}) measured {r.measured:.3g} [{r.lo:.3g}, {r.hi:.3g}]"
                f"{bound}, {self.theory.name} predicts {r.theory:.3g} [{r.theory_lo:.3g}, {r.theory_hi:.3g}]"
                + ("" if self.rival is self.theory else f", {self.rival.name} {r.rival:.3g}"))

    def text(self) -> str:
        """The held-out test as a row says it: each cell, the margin, and whether the theory fits."""
        if not self.decided:
            return f"held out: {self.reason}"
        top = int(self.cells[self.axis].iloc[0])
        held = f"= {top}" if self.cells[self.axis].nunique() == 1 else f">= {top} (beyond {top} bounds only)"
        bad = self.above() if self.side == OR_SLOWER else self.below()
        word = "above" if self.side == OR_SLOWER else "below"
        parts = []
        for (i, r), m, e in zip(self.cells.iterrows(), self.margin(), self.excess()):
            verdict = (f"{word} it by x{math.exp(abs(e)):.3g} > the margin x{math.exp(m):.3g}" if bad[i]
                       else f"margin x{math.exp(m):.3g}")
            parts.append(f"{self.cell_text(r)} ({verdict})")
        fits = "does not fit" if bad.any() else "fits"
        return (f"{self.theory.name} {fits} held out: fitted per seed on {self.axis} < {top}, held out {self.axis} "
                f"{held} (margin: the seeds' range there plus the per-seed predictions' range): "
                + "; ".join(parts))

    @property
    def conclusive(self) -> bool:
        """Set up, no bound in play, the rival told apart: where the theory did not FAIL, the claim PASSes; else a
        claim that did not FAIL is NOT TESTED."""
        return self.decided and not self.bounded and self.told

    def parts_at(self) -> float | None:
        """Where a sweep would tell the two laws apart: the smallest value of the axis at which the rival, anchored
        with the theory at the smallest value the fit read (``fitted_from``), predicts a need beyond the
        theory's, on the side the statement denies, by more than the largest margin of the held-out cells (the
        margin kept as measured here).  None where they do not part by PART_TOP.  Along N d, N grows."""
        if not self.decided or not self.fitted_from:
            return None
        r = self.cells.iloc[0]
        top, margin = float(r[self.axis]), float(self.margin().max())
        sign = 1.0 if self.side == OR_SLOWER else -1.0
        grows = "d" if self.axis == "d" else "N"

        def gap(v: float) -> float:
            def at(f):
                return {"q": r["q"], "N": r["N"], "d": r["d"], grows: r[grows] * f}
            lo, hi = at(self.fitted_from / top), at(v / top)
            return sign * float((self.rival.log_size(**hi) - self.rival.log_size(**lo))
                                - (self.theory.log_size(**hi) - self.theory.log_size(**lo)))

        v = top
        while gap(v) <= margin:
            if v > PART_TOP:
                return None
            v *= 2.0
        lo, hi = v / 2.0, v
        while hi / lo > 1.01:  # to 1 %
            mid = math.sqrt(lo * hi)
            lo, hi = (lo, mid) if gap(mid) > margin else (mid, hi)
        return hi

    def _parts_text(self) -> str:
        top, at = float(self.cells[self.axis].iloc[0]), self.parts_at()
        anchor = f"anchored together at {self.axis} = {self.fitted_from:g}"
        if at is None:
            return (f"; {anchor}, the two forms do not part by the margin x{math.exp(float(self.margin().max())):.3g} "
                    f"up to {self.axis} = {PART_TOP:.0e}")
        far = _round(at / top)
        return (f"; {anchor}, the two forms part by more than the margin x{math.exp(float(self.margin().max())):.3g}"
                f" from {self.axis} = {_round(at)} on, x{far} the largest here: a model's step there costs at least "
                f"x{far} one here (every family's work per step grows with N and d)")

    def rival_text(self) -> str:
        """Whether the sweep tells the rival apart (the margin), and whether the need rejects it."""
        if not self.decided:
            return ""
        apart, margin = self.apart, self.margin()
        top = int(self.cells[self.axis].iloc[0])
        if self.told:
            beyond = apart > margin
            return (f"rival {self.rival.name}: told apart at {int(beyond.sum())} of {len(beyond)} held-out cells (it "
                    f"predicts x{math.exp(float(apart[beyond].min())):.3g} or more "
                    f"{'above' if self.side == OR_SLOWER else 'below'} {self.theory.name} there, beyond the "
                    f"margin), and {'rejected' if self.rejected else 'not rejected'} by the measured need (outside "
                    f"the seeds' range at every held-out cell, {self.theory.name} closer)")
        if (apart <= 0).any():
            return (f"rival {self.rival.name}: up to {self.axis} = {top} {self.theory.name} grows faster than "
                    f"{self.rival.name} (fitted below {self.axis} = {top}, it predicts "
                    f"x{math.exp(float(-apart.min())):.3g} the rival's need there): a need between them grows as "
                    "the statement allows; cannot tell them apart" + self._parts_text())
        best = int(np.argmax(apart - margin))
        lo = self.fitted_from
        span = f"{self.axis} spans x{top / lo:g} ({int(lo)} to {top}): " if lo else ""
        return (f"rival {self.rival.name}: {span}{self.theory.name} and {self.rival.name} predict needs only "
                f"x{math.exp(float(apart.iloc[best])):.3g} apart at the held-out {self.axis} = {top}, within the "
                f"margin x{math.exp(float(margin.iloc[best])):.3g} the seeds' spread sets; cannot tell them apart"
                + self._parts_text())


def held_out(points: pd.DataFrame, axis: str, theory: Law, rival: Law, group: tuple[str, ...] = (),
             side: str = OR_SLOWER) -> HeldOut:
    """Fit ``theory`` and ``rival`` per seed on the resolved ``points`` (q, N, d, seed, critical_width,
    censored; ``axis`` a column) at every value of ``axis`` but the largest, one constant per ``group`` and
    seed, and predict each held-out (q, N, d) there whose group has points below it (the module docstring).
    Points at the held-out value censored on the safe side of ``side`` count as bounds; others are ignored."""
    out = HeldOut(axis, theory, rival, side)
    held_bound, fit_bound = (ABOVE, BELOW) if side == OR_SLOWER else (BELOW, ABOVE)
    points = points[points["censored"].isin([NONE, fit_bound, held_bound])]
    measured = sorted(points[points["censored"] == NONE][axis].unique())
    if len(measured) < 1 or not (points[axis] < measured[-1]).any():
        out.reason = f"measured needs at {len(measured)} value(s) of {axis}; the held-out test needs two"
        return out
    top = measured[-1]  # the largest value with a measured need; bounds beyond it are held out with it
    rest = points[(points[axis] < top) & points["censored"].isin([NONE, fit_bound])]
    held = points[(points[axis] >= top) & points["censored"].isin([NONE, held_bound])]
    out.fit_bounds = int((rest["censored"] != NONE).sum())
    out.fitted_from = float(rest[axis].min()) if len(rest) else 0.0
    const = {}
    for k, g in rest.groupby([*group, "seed"]):
        k = k if isinstance(k, tuple) else (k,)
        logw = np.log(g["critical_width"].to_numpy(dtype=float))
        const[k] = {law.name: float(np.mean(logw - law.log_size(g["q"], g["N"], g["d"]))) for law in (theory, rival)}
    rows = []
    for (q, N, d), g in held.groupby(["q", "N", "d"], sort=False):
        at = {"q": q, "N": N, "d": d}
        seeds = [s for s in g["seed"] if (*(at[k] for k in group), s) in const]
        if not seeds:
            continue
        w = g["critical_width"].to_numpy(dtype=float)
        row = {"q": q, "N": N, "d": d, axis: g[axis].iloc[0], "measured": float(np.exp(np.log(w).mean())),
               "lo": float(w.min()), "hi": float(w.max()), "seeds": len(w),
               "bounds": int((g["censored"] != NONE).sum())}
        for which, law in (("theory", theory), ("rival", rival)):
            p = np.array([const[(*(at[k] for k in group), s)][law.name] for s in seeds]) \
                + float(law.log_size(q, N, d))
            row.update({which: float(np.exp(p.mean())), f"{which}_lo": float(np.exp(p.min())),
                        f"{which}_hi": float(np.exp(p.max()))})
        rows.append(row)
    if not rows:
        out.reason = f"no {axis} = {int(top)} cell with resolved needs below it in its group ({', '.join(group)})"
        return out
    cells = pd.DataFrame(rows).sort_values([axis, "q", "N", "d"], kind="stable").reset_index(drop=True)
    if (cells["seeds"] < 2).any():
        out.reason = (f"one seed at a held-out {axis} >= {int(top)} cell: the margin is the seeds' spread, and one "
                      "seed has none")
        return out
    out.cells = cells
    return out


def grower(points: pd.DataFrame, limits: pd.DataFrame, axis: str, family: tuple[str, ...],
           anchor: str = "min") -> Callable[[float], pd.DataFrame]:
    """The counterfactual needs of a power law, as a function of its exponent: each family's (``family``: the
    keys a need is grown within, seed among them) resolved need at its smallest (``anchor`` "min") or largest
    ``axis`` value, grown like axis^exponent to every (q, N, d) of the family; a need beyond the grid's widths
    there (``limits``: q, N, d, lo, hi) becomes a bound, as stsq.width.critical marks it (what moving each seed's
    loss curve along log width so that its eps-crossing follows the law gives, where the grid brackets it)."""
    ok = points[points["censored"] == NONE]
    pick = ok.groupby(list(family))[axis].idxmin() if anchor == "min" else ok.groupby(list(family))[axis].idxmax()
    base = ok.loc[pick.to_numpy(), [*family, axis, "critical_width"]].rename(
        columns={axis: "at", "critical_width": "w0"})
    frame = points.drop(columns=["critical_width", "censored"]).merge(base, on=list(family))
    frame = frame.merge(limits, on=["q", "N", "d"])
    w0, ratio = np.log(frame["w0"].to_numpy(float)), np.log(frame[axis].to_numpy(float) / frame["at"].to_numpy(float))
    lo, hi = frame["lo"].to_numpy(float), frame["hi"].to_numpy(float)
    frame = frame.drop(columns=["w0", "at", "lo", "hi"])

    def at(exponent: float) -> pd.DataFrame:
        need = np.exp(w0 + exponent * ratio)
        censored = np.where(need > hi, ABOVE, np.where(need <= lo, BELOW, NONE))
        return frame.assign(critical_width=np.clip(need, lo, hi), censored=censored,
                            bracket=np.where(censored == NONE, 1.0, math.nan))
    return at


def grown(points, limits, axis, exponent, family, anchor="min") -> pd.DataFrame:
    """``grower`` at one exponent."""
    return grower(points, limits, axis, family, anchor)(exponent)


def first_rejected(fails: Callable[[float], bool], rising: bool = True) -> float | None:
    """The power scan: the smallest exponent (``rising``; else the largest) on a SCAN_STEP grid in [0, SCAN_TOP]
    at which ``fails`` holds: a coarse pass (steps of 0.1) from 0 up (from SCAN_TOP down) to the first exponent
    that fails, then bisection between it and the one before (the test's excess grows with the exponent, in one
    direction, until the grown needs leave the grid); None where no exponent of the coarse pass fails."""
    fine = np.round(np.arange(0.0, SCAN_TOP + SCAN_STEP / 2, SCAN_STEP), 6)
    stride = int(round(0.1 / SCAN_STEP))
    order = list(range(0, len(fine), stride)) if rising else list(range(len(fine) - 1, -1, -stride))
    prev = None
    for i in order:
        if fails(float(fine[i])):
            break
        prev = i
    else:
        return None
    if prev is None:
        return float(fine[i])
    ok, bad = prev, i  # fails(fine[bad]) holds, fails(fine[ok]) does not
    while abs(bad - ok) > 1:
        mid = (ok + bad) // 2
        ok, bad = (ok, mid) if fails(float(fine[mid])) else (mid, bad)
    return float(fine[bad])


def power(points: pd.DataFrame, limits: pd.DataFrame, theory: Law, rival: Law, side: str) -> float | None:
    """The power scan of one curve of needs against N: each seed's need moved to grow like N^a (from its need at the
    smallest N; for an "at least" law from the largest), a bound beyond ``limits``; the smallest a (the largest, for
    "at least") at which the held-out test of ``theory`` FAILs (``first_rejected``)."""
    grow = grower(points, limits, "N", ("q", "d", "seed"), anchor="min" if side == OR_SLOWER else "max")
    return first_rejected(lambda a: held_out(grow(a), "N", theory, rival, side=side).failed,
                          rising=side == OR_SLOWER)


def power_text(x: float | None, side: str) -> str:
    if x is None:
        return f"power: no N^a with a in [0, {SCAN_TOP:g}] FAILs this test"
    return f"power: this test rejects N^a for a {'>=' if side == OR_SLOWER else '<='} {x:.2f}"


def law_row(c, points: pd.DataFrame, limits: pd.DataFrame, theory: Law, rival: Law, side: str, head: str, cell: str,
            q=1, what: str = "the samples at the held-out N lie", bound: str = "a seed stopped at the cap") -> dict:
    """A row of a scaling claim along N, one curve of needs (``points``: q, N, d, seed, critical_width, censored;
    ``limits``: per (q, N, d) where a need becomes a bound, lo and hi): FAIL where the need at the held-out N lies
    beyond ``theory``'s prediction on the side the claim forbids (more than the margin); NOT TESTED where the test
    cannot be set up, a bound is in play or the sweep cannot tell ``rival`` apart; else PASS.  ``value``: measured
    over predicted at the held-out N (the largest ratio for "or slower", the smallest for "at least").  ``head``
    opens the row's words; ``what`` names the need (with its verb), ``bound`` a seed whose need is only a bound."""
    test = held_out(points, "N", theory, rival, side=side)
    if not test.decided:
        return c.untested(q, "all", "all", f"{head}; {test.text()}", cell)
    ratio = np.exp(test.excess())
    value = float(ratio.max() if side == OR_SLOWER else ratio.min())
    body = "; ".join(p for p in (head, test.text(), test.rival_text(),
                                 power_text(power(points, limits, theory, rival, side), side)) if p)
    if test.failed:
        word = "above" if side == OR_SLOWER else "below"
        return c.judged(q, "all", "all", cell, f"{body} (FAIL: {what} {word} what "
                        f"{theory.name} predicts, beyond the margin)", value, False)
    if not test.conclusive:
        why = f"{bound} is read as a bound; " if test.bounded else ""
        return c.untested(q, "all", "all", f"{why}{body}", cell)
    return c.judged(q, "all", "all", cell, body, value, True)
