"""Each scaling claim against the law next to it: the rival it denies, fitted to the same points.

A scaling claim says a need grows like one law (the theory's); a sweep supports it only where it also
rejects the nearest law the statement denies (the rival).  Both laws are one-parameter forms,

    log w_eps = c + log size(q, N, d),

with the constant c fitted (the mean log residual) to the resolved critical widths at every value of
one axis but its largest, one constant per value of the other keys a law leaves free (``group``: per
q for the growth in N, so that the test reads the growth in N alone; per (q, N) for the growth in d);
each law then predicts the need at the held-out largest value.  The rival is
rejected when, at every held-out (q, N, d), its prediction lies outside the seeds' range [min, max] of
the measured need and the theory's prediction lies closer (in log) to their geometric mean.  Where the
two laws predict needs less than RIVAL_APART apart at the held-out value, the sweep cannot tell them
apart: NOT TESTED, with the factor; so too where the rival predicts less than the theory (over the
sweep's range it grows slower, and a need below the theory's is what the statement allows).

The laws (docs/claims.md, "The rivals"):
- the transformer's need against N: q log N (theory) against q sqrt(N), the smallest power law the
  claim "like q log N or slower" denies (a logarithm looks like N^(1/ln N) locally: 0.72 at N = 4);
- against d: q log N (theory: d-free) against q log N d^0.25.

At q >= 3 the theory's own form is q log^2 N (``tf_law``): the summed query's cross-terms p_j^T p_i inside
y score the selected tokens unevenly, by about c sqrt((q - 1) / d_e) at an attention scale c, and c must
grow like log N to take the mass off the N - q others, so the loss stays at eps only where d_e grows like
q c^2 ~ q log^2 N (docs/claims.md, "The q >= 3 form").  At q <= 2 every selected token shares the same
cross-term and the need is q log N.  Both are O~(q log N), the paper's bound (up to log factors).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

RIVAL_APART = 1.25  # the laws must predict needs at least this far apart at the held-out value


@dataclass(frozen=True)
class Law:
    name: str  # as the claims table says it
    exponent_N: float | None  # None: (log N)^log_power; else N^exponent
    exponent_d: float = 0.0
    log_power: float = 1.0

    def log_size(self, q, N, d) -> np.ndarray:
        q, N, d = (np.asarray(v, dtype=float) for v in (q, N, d))
        growth = self.log_power * np.log(np.log(N)) if self.exponent_N is None else self.exponent_N * np.log(N)
        return np.log(q) + growth + self.exponent_d * np.log(d)


Q_LOG_N = Law("q log N", None)
Q_LOG2_N = Law("q log^2 N", None, log_power=2.0)
Q_SQRT_N = Law("q sqrt(N)", 0.5)
Q_LOG_N_D_QUARTER = Law("q log N d^0.25", None, 0.25)
CROSS_TERM_Q = 3  # from this q on the selected tokens' cross-terms differ: the need is q log^2 N


def tf_law(q: int) -> Law:
    """The theory's form of the transformer's need against N at one q (the module docstring)."""
    return Q_LOG2_N if q >= CROSS_TERM_Q else Q_LOG_N


@dataclass
class HeldOut:
    """What ``held_out`` found: ``reason`` (why it cannot decide) or the cells' predictions."""

    axis: str
    theory: Law
    rival: Law
    reason: str = ""
    cells: pd.DataFrame | None = None  # per held-out (q, N, d): measured, lo, hi, theory, rival, apart

    @property
    def decided(self) -> bool:
        return not self.reason

    @property
    def rejected(self) -> bool:
        """The rival lies outside the seeds' range at every held-out cell, the theory closer."""
        c = self.cells
        outside = (c["rival"] < c["lo"]) | (c["rival"] > c["hi"])
        closer = (np.log(c["theory"] / c["measured"]).abs() < np.log(c["rival"] / c["measured"]).abs())
        return bool(self.decided and (outside & closer).all())

    def text(self) -> str:
        if not self.decided:
            return f"rival {self.rival.name}: {self.reason}"
        top = int(self.cells[self.axis].iloc[0])
        parts = [f"(q={int(r.q)},N={int(r.N)},d={int(r.d)}) measured {r.measured:.3g} [{r.lo:.3g}, {r.hi:.3g}], "
                 f"{self.theory.name} predicts {r.theory:.3g}, {self.rival.name} {r.rival:.3g}"
                 for r in self.cells.itertuples()]
        verdict = "rejected" if self.rejected else "not rejected"
        return (f"rival {self.rival.name} {verdict}: fitted with {self.theory.name} on {self.axis} < {top}, "
                f"held out {self.axis} = {top}: " + "; ".join(parts))


def held_out(points: pd.DataFrame, axis: str, theory: Law, rival: Law, group: tuple[str, ...] = ()) -> HeldOut:
    """Fit ``theory`` and ``rival`` on the resolved ``points`` (q, N, d, seed, critical_width) at every
    value of ``axis`` but the largest, one constant per ``group``, and predict each held-out (q, N, d)
    there whose group has points below it (see the module docstring)."""
    out = HeldOut(axis, theory, rival)
    values = sorted(points[axis].unique())
    if len(values) < 2:
        out.reason = f"resolved needs at {len(values)} value(s) of {axis}; the held-out test needs two"
        return out
    top = values[-1]
    rest, held = points[points[axis] < top], points[points[axis] == top]
    const = {}
    for k, g in (rest.groupby(list(group)) if group else [((), rest)]):
        k = k if isinstance(k, tuple) else (k,)
        logw = np.log(g["critical_width"].to_numpy(dtype=float))
        const[k] = {law.name: float(np.mean(logw - law.log_size(g["q"], g["N"], g["d"]))) for law in (theory, rival)}
    rows = []
    for (q, N, d), g in held.groupby(["q", "N", "d"]):
        c = const.get(tuple({"q": q, "N": N, "d": d}[k] for k in group))
        if c is None:
            continue
        w = g["critical_width"].to_numpy(dtype=float)
        pred = {law.name: math.exp(c[law.name] + float(law.log_size(q, N, d))) for law in (theory, rival)}
        rows.append({"q": q, "N": N, "d": d, "measured": float(np.exp(np.log(w).mean())), "lo": float(w.min()),
                     "hi": float(w.max()), "seeds": len(w), "theory": pred[theory.name], "rival": pred[rival.name]})
    if not rows:
        out.reason = f"no {axis} = {int(top)} cell with resolved needs below it in its group ({', '.join(group)})"
        return out
    cells = pd.DataFrame(rows)
    cells["apart"] = np.maximum(cells["rival"] / cells["theory"], cells["theory"] / cells["rival"])
    out.cells = cells
    if (cells["rival"] < cells["theory"]).any():  # the rival grows slower here: it is no law the claim denies
        at_q = ", ".join(str(int(q)) for q in sorted(points["q"].unique()))
        out.reason = (f"at q = {at_q}, over {axis} = {int(values[0])} .. {int(top)} {theory.name} grows faster than "
                      f"{rival.name} (fitted below {axis} = {int(top)}, it predicts "
                      f"{float((cells['theory'] / cells['rival']).max()):.2f}x the rival's need there): a need "
                      "between them grows as the statement allows; cannot tell them apart")
    elif cells["apart"].min() < RIVAL_APART:
        out.reason = (f"{axis} spans x{top / values[0]:g} ({int(values[0])} to {int(top)}): {theory.name} and "
                      f"{rival.name}, fitted below {axis} = {int(top)}, predict needs only "
                      f"{cells['apart'].min():.2f}x apart there (< {RIVAL_APART:g}); cannot tell them apart")
    return out
