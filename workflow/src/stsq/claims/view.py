"""What a claim's measure reads: the sweep's tables as one view (``Sweep``: the final evaluations, the critical
widths, the reach, the oracle), one (q, N, d) of it (``Cell``: the paper's model there, whether it learned), and
the helpers the claims share (selections, the seeds' spread, the oracle at a cell)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from stsq.core import experiment as ex
from stsq.core.claim_records import LEARNED_BELOW
from stsq.core.experiment import LOSS, OK, paper_model
from stsq.width.critical import critical_widths
from stsq.width.reach import needs_at_epsilon, reach_table


def final(table, metric=LOSS):
    return table[(table["split"] == "eval") & (table["metric"] == metric) & (table["status"] == OK)]


def not_applicable(table):
    return table[(table["split"] == "eval") & (table["metric"] == LOSS) & (table["status"] == ex.NOT_APPLICABLE)]


def last_curve(table, metric):
    """Each model's last curve point of ``metric`` (split test, N_eval = N)."""
    t = table[(table["split"] == "test") & (table["metric"] == metric) & (table["N_eval"] == table["N"])]
    return t.loc[t.groupby(ex.model_keys())["step"].idxmax()]


def spread(values) -> str:
    v = pd.Series(values, dtype=float)
    return f"{v.mean():.3g} [{v.min():.3g}, {v.max():.3g}] (n={len(v)})"


def factor(x: float) -> str:
    return f"{x:g}N"


def oracle_at(oracle: pd.DataFrame, q, N, d_e, N_eval) -> float | None:
    """The oracle's loss at (q, N, d_e, N'), or None where it was not computed."""
    o = oracle[(oracle["q"] == q) & (oracle["N"] == N) & (oracle["width"] == d_e) & (oracle["N_eval"] == N_eval)]
    return None if o.empty else float(o[LOSS].iloc[0])


def models(ev, arch, q, N, d):
    """The final evaluations of ``arch`` at (q, N, d), at its largest budget (steps)."""
    a = ev[(ev["arch"] == arch) & (ev["q"] == q) & (ev["N"] == N) & (ev["d"] == d)]
    return a[a["steps"] == a["steps"].max()] if len(a) else a


def learned(at_N) -> bool:
    return len(at_N) > 0 and at_N.max() <= LEARNED_BELOW


def select(t, sel, arch=None):
    arch = arch or paper_model()
    return t[np.logical_and.reduce([t["arch"] == arch] + [t[k] == v for k, v in sel.items()])]


class Sweep:
    """A sweep's tables, as the claims read them: the tidy ``table``, the ``oracle``, and what is derived from
    them once (the final evaluations, the critical widths, the reach)."""

    def __init__(self, table: pd.DataFrame, oracle: pd.DataFrame):
        self.table, self.oracle = table, oracle
        self.ev = final(table)
        self.crit = critical_widths(table)
        self.reach = reach_table(table, oracle, needs_at_epsilon(self.crit))
        self.lengths = bool((table["N_eval"] > table["N"]).any())  # whether it scores an N' > N
        self.archs = set(self.ev["arch"])

    def qs(self):
        return sorted(self.ev["q"].unique())

    def shapes(self, q):
        ev = self.ev
        return [(N, d) for N in sorted(ev[ev["q"] == q]["N"].unique())
                for d in sorted(ev[(ev["q"] == q) & (ev["N"] == N)]["d"].unique())]

    def trains_at(self, arch, q) -> bool:
        return bool(((self.ev["arch"] == arch) & (self.ev["q"] == q)).any())

    def budgets(self, arch, q) -> list[int]:
        """The training budgets (steps) of ``arch`` with critical widths at ``q``."""
        a = self.crit[(self.crit["arch"] == arch) & (self.crit["q"] == q)]
        return [int(s) for s in sorted(a["steps"].unique())]


@dataclass
class Cell:
    """One (q, N, d) of a sweep, with the paper's model trained there (``st``: its largest budget's final
    evaluations; empty where it was not)."""

    sweep: Sweep
    q: int
    N: int
    d: int

    @cached_property
    def st(self):
        return models(self.sweep.ev, paper_model(), self.q, self.N, self.d)

    @property
    def d_e(self) -> int:
        return int(self.st["width"].max())

    @property
    def label(self) -> str:
        return f"{paper_model()} d_e={self.d_e}"

    @cached_property
    def at_N(self):
        """The paper model's final losses at N' = N, largest d_e, one per seed."""
        return self.st[(self.st["width"] == self.d_e) & (self.st["N_eval"] == self.N)]["value"]

    @property
    def learned(self) -> bool:
        return learned(self.at_N)

    @property
    def not_learned(self) -> str:
        return (f"the model did not learn at N (worst seed's loss {self.at_N.max():.3g} > {LEARNED_BELOW:g})"
                if len(self.at_N) else "no evaluation at N")

    @property
    def sel(self) -> dict:
        return dict(q=self.q, N=self.N, d=self.d, width=self.d_e, steps=int(self.st["steps"].max()))

    @cached_property
    def reach(self):
        r = self.sweep.reach
        return r[(r["arch"] == paper_model()) & (r["q"] == self.q) & (r["N"] == self.N) & (r["d"] == self.d)
                 & (r["steps"] == self.sel["steps"])]

    def of(self, arch):
        """The final evaluations of ``arch`` at this (q, N, d), its largest budget."""
        return models(self.sweep.ev, arch, self.q, self.N, self.d)
