"""The claims of index lookup and bounded Dyck (Bhattamishra, Hahn, Blunsom, Kanade, NeurIPS 2024;
docs/separations.md), measured on the width measure: the width each family needs (stsq.width.critical) at the target
``EPSILON`` of the normalized cross-entropy, the cross-entropy over the chance level's (a tenth of chance), against N.

Each is a law held out at the largest N with a measured need, as the width claims are (stsq.claims.rivals): the law's
constant fitted per seed on the smaller N, its prediction at the held-out N, one-sided, with a margin from the seeds'
spread; beside it the rival law the statement denies (whether the sweep tells it apart, else NOT TESTED) and the
power scan.  A seed that no width of the grid brought to the target is a bound (its need is above the widest width):
the theory says a model of the family that solves the task exists there, so such a seed is a finding about training
at the sweep's budget, and the row says at which N.

The laws (docs/separations.md, "The claims"):
- lookup, transformer: log N or slower (the construction: N nearly orthogonal positions in O(log N) dimensions);
  rival N^0.5.
- lookup, GRU: N or faster (a state of N symbols before y arrives); rival N^0.5.
- Dyck, GRU: constant (a state of the open brackets, depth at most 2, whatever N); rival log N.
- Dyck, transformer: N or faster (one layer needs size linear in N); rival log N, the transformer's need for lookup.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from stsq.claims.rivals import ABOVE, AT_LEAST, BELOW, NONE, OR_SLOWER, Law, law_row
from stsq.claims.view import Sweep
from stsq.core.claim_records import EPSILON, SWEEP, Claim
from stsq.core.experiment import at_largest_budget, model_keys

LOG_N = Law("log N", None)
SQRT_N = Law("N^0.5", 0.5)
LIKE_N = Law("N", 1.0)
CONSTANT = Law("constant", 0.0)
_TARGET = f"a normalized cross-entropy of {EPSILON:g} (a tenth of the chance level's)"


def _points(s: Sweep, arch: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The arch's critical widths at EPSILON, each N at its largest budget (a budget may grow with N: a sweep's
    ``steps_by_N``), as the held-out test reads needs; and where a need becomes a bound: the grid's narrowest and
    widest width at each (q, N, d)."""
    crit = at_largest_budget(s.crit[(s.crit["arch"] == arch) & np.isclose(s.crit["epsilon"], EPSILON)])
    points = crit[["q", "N", "d", "seed", "critical_width", "censored"]].reset_index(drop=True)
    budget = [k for k in model_keys("arch", "width", "seed") if k in crit.columns]  # a shape at one budget
    ev = s.ev[s.ev["arch"] == arch].merge(crit[budget].drop_duplicates())
    limits = ev.groupby(["q", "N", "d"])["width"].agg(lo="min", hi="max").reset_index()
    return points, limits


def _needs_text(points: pd.DataFrame) -> str:
    """Per N: the geometric mean of the seeds' needs with their range, and the seeds only bounded."""
    parts = []
    for N, g in points.groupby("N"):
        w = g["critical_width"].to_numpy(dtype=float)
        above, below = int((g["censored"] == ABOVE).sum()), int((g["censored"] == BELOW).sum())
        text = f"N={int(N)}: {math.exp(np.log(w).mean()):.3g} [{w.min():.3g}, {w.max():.3g}]"
        if above:
            text += f" ({above} of {len(g)} seeds above the widest m={w.max():.0f})"
        if below:
            text += f" ({below} of {len(g)} at or below the narrowest m={w.min():.0f})"
        parts.append(text)
    return "the width needed (geometric mean [seed range]): " + "; ".join(parts)


def _training_text(points: pd.DataFrame) -> str:
    """Where no width of the grid reached the target for some seed: a finding about training at the budget."""
    stuck = sorted(int(N) for N in points[points["censored"] == ABOVE]["N"].unique())
    if not stuck:
        return ""
    return (f"; training: at N = {', '.join(map(str, stuck))} some seed reached the target at no width of the grid "
            "within the budget, where the theory says a model of this family that solves the task exists")


def _law(theory: Law, rival: Law, side: str, arch: str):
    def measure(c: Claim, s: Sweep) -> list[dict]:
        points, limits = _points(s, arch)
        if points.empty:
            return [c.untested("all", "all", "all", f"the sweep has no critical width of {arch}")]
        head = _needs_text(points) + _training_text(points)
        return [law_row(c, points, limits, theory, rival, side, head, arch, q=int(points["q"].iloc[0]),
                        what="the width needed at the held-out N lies",
                        bound="a seed no width of the grid brought to the target")]
    return measure


def _claim(key, task, arch, statement, theory, rival, side, why) -> Claim:
    word = "above" if side == OR_SLOWER else "below"
    return Claim(
        key, statement,
        f"the width m {arch} needs to reach {_TARGET} at N' = N, against N: {theory.name} fitted per seed below the "
        f"largest N with a measured need and held out there; {rival.name} beside it; the power scan",
        f"FAIL if the need at the held-out N lies {word} {theory.name}'s prediction by more than the margin (the "
        f"seeds' range there plus the per-seed predictions' range); NOT TESTED where the sweep cannot tell "
        f"{rival.name} apart or a seed's need is only a bound; else PASS", why,
        presupposes="measured needs at two N or more, two seeds at the held-out N", task=task, tested_by=(task,),
        value=f"the need at the held-out N over {theory.name}'s prediction", scope=SWEEP, reads=arch,
        figures=("needs",), measure=_law(theory, rival, side, arch))


lookup_tf_log = _claim(
    "lookup_tf_log", "lookup", "lookup_tf",
    "A one-layer transformer of width O(log N) performs index lookup (the paper)", LOG_N, SQRT_N, OR_SLOWER,
    "the paper's construction: the query carries y's position vector, N nearly orthogonal vectors fit in O(log N) "
    "dimensions; N^0.5 is the nearest power law the statement denies")
lookup_rnn_linear = _claim(
    "lookup_rnn_linear", "lookup", "lookup_gru",
    "A recurrent net that performs index lookup needs a hidden state of size linear in N (the paper)", LIKE_N, SQRT_N,
    AT_LEAST,
    "the paper's lower bound: the state holds the N symbols before y arrives (one-way communication); N^0.5 is the "
    "slower growth it denies")
dyck_rnn_constant = _claim(
    "dyck_rnn_constant", "dyck", "dyck_gru",
    "A recurrent net of constant size recognizes bounded Dyck (the paper: Dyck-(2, 2) here)", CONSTANT, LOG_N,
    OR_SLOWER,
    "the paper's construction: a state of the open brackets' types, at most 2 deep, whatever N; log N is the "
    "slowest growth the statement denies")
dyck_tf_linear = _claim(
    "dyck_tf_linear", "dyck", "dyck_tf",
    "A one-layer transformer that recognizes bounded Dyck needs size linear in N (the paper)", LIKE_N, LOG_N,
    AT_LEAST,
    "the paper's lower bound (communication complexity); log N, the transformer's need for index lookup, is the "
    "slower growth it denies")

__all__ = ["CONSTANT", "LIKE_N", "LOG_N", "NONE", "SQRT_N", "dyck_rnn_constant", "dyck_tf_linear",
           "lookup_rnn_linear", "lookup_tf_log"]
