"""What a claim is: the ``Claim`` record, its verdicts and rows, the scopes the judge walks, and the constants the
analysis shares (the target loss, the resolution of a critical width, when a model has learned).  No pandas, no
claim: each claim is a record in a module by subject (stsq.claims.learning, claims_length, claims_width,
claims_checks), beside the function that measures it; stsq.claims.judge walks them.

Apart from the vocabulary (stsq.core.experiment): training, evaluation and the data never read a claim, so a threshold
changes the claims table and what reads it, and nothing before it (stsq.provenance.codehash).  docs/claims.md explains
each
threshold.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

SAMPLING_Z = 2.0  # a loss counts as below an exact floor only when below it by more than this many standard errors


# The sweeps of config.yaml with their own make target (the cpu sweep's is `make run`); the claims say
# which of them tests each claim (``Claim.tested_by``), the report names the command.
MAKE_SWEEPS = ("cpu", "budget", "encodings", "separation", "qstr", "lookup", "dyck")


# Each claim is a statement of the paper, measured from the tidy table (and the oracle table) of any
# sweep, with what it presupposes.  Its verdict is PASS, FAIL, or NOT TESTED when the sweep cannot test
# it or its presupposition does not hold (the reason is said).  Checks are bounds every correct pipeline
# obeys (theorems): they catch bugs, not the paper being wrong, and are listed apart.
PASS, FAIL, NOT_TESTED = "PASS", "FAIL", "NOT TESTED"
PAPER, CHECK = "paper", "check"  # a claim's kind: a statement of the paper, or a pipeline check
# a row (or a claim) that measures this project's extension of a paper's statement, not the statement itself: the
# claims pages and the front pages count it apart, so that its FAIL reads as ours
OURS = "ours"
EPSILON = 0.1  # the target loss of the scaling claims: the width "needed" reaches it (stsq.width.critical)
EPSILONS = (0.05, 0.1, 0.2)  # the targets the critical widths are computed at (robustness to eps)
RESOLUTION = 2.0  # a critical width counts in a fit only when bracketed by widths at most this far apart
LEARNED_BELOW = 0.1  # "the model learned at N": its worst seed's loss at N' = N is at most this
GENERALIZES_WITHIN = 0.15  # at N' > N: loss <= the oracle at N' + this (stochastic and randomized positions)

# What one row of a claim is about, in the order the judge (stsq.claims.judge.evaluate_claims) walks them:
# per (q, N, d) of its arch; per q and training budget of its arch; per q of its arch; after every q, a row per q
# of one fit across the sweep; one row for the whole sweep.
CELL, BUDGET, Q, SWEEP_BY_Q, SWEEP = "cell", "budget", "q", "sweep by q", "sweep"
SCOPES = (CELL, BUDGET, Q, SWEEP_BY_Q, SWEEP)
IN_EACH_Q = (CELL, BUDGET, Q)  # judged inside the walk over q; the others after it

CLAIM_COLUMNS = ["claim", "kind", "statement", "q", "N", "d", "cell", "measured", "value", "threshold", "verdict"]


@dataclass(frozen=True)
class Claim:
    key: str
    statement: str  # the paper's statement, in words
    measured: str  # what is measured, from which rows of the table
    threshold: str  # what PASS means
    why: str  # where the threshold comes from
    presupposes: str = ""  # what must hold for the measurement to test the statement (else NOT TESTED)
    kind: str = PAPER
    # the sweeps of MAKE_SWEEPS whose grid tests it; the report names the first other than its own, so the
    # first trains every arch the claim reads
    tested_by: tuple[str, ...] = ("cpu",)
    value: str = ""  # what a row's number (the table's value column) is: the captions and the claims page name it
    # -- how the judge (stsq.claims.judge) walks it --
    scope: str = CELL  # one of SCOPES
    # what it reads: a role of stsq.core.experiment.ROLES (the one arch read as the paper's model or the FCN), what
    # an arch is expected to do at N' > N (stsq.core.experiment.TRAINING_LENGTH, POSITION_RANGE: every such arch, a
    # row each), or one arch's name
    reads: str = "paper"
    lengths: bool = False  # it reads the scores at N' > N: a sweep scoring only N' = N has one NOT TESTED row
    learned: bool = False  # it presupposes the paper's model learned at N (a cell where it did not: NOT TESTED)
    # what of the theory it reads, of the task's (stsq.core.tasks.Task): "oracle" (the ground-truth family), "floor"
    # (the FCN's exact width floor); a task without it has one NOT TESTED row
    needs: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()  # the figures whose captions report it (stsq.core.figure_catalog)
    # fn(claim, where...) -> rows: (claim, cell view) per CELL, (claim, sweep view, q, steps) per BUDGET,
    # (claim, sweep view, q) per Q, (claim, sweep view) after the walk (stsq.claims.view)
    measure: Callable | None = None
    # the task whose sweeps it is judged on (stsq.core.tasks.TASKS); "" (the default): every task of the measure whose
    # claim modules hold it (stsq.core.measures: ``claims``; stsq.claims.judge.applies), STS_q's and any new width task
    # (a
    # claim that reads what the task lacks says NOT TESTED: ``needs``).  A claim of the samples measure is measured
    # from the samples table: fn(claim, table) -> rows
    task: str = ""
    # the rows about this project's extension of the statement (a paper's claim read where the paper does not state
    # it): (their cell, the statement they test) pairs; such a row's kind is OURS
    ours: tuple[tuple[str, str], ...] = ()
    at: float | None = None  # the threshold of the samples table its rows read (the config check asks for it)

    def row(self, q, N, d, cell, measured, value, verdict) -> dict:
        """One row of the claims table (CLAIM_COLUMNS)."""
        ours = dict(self.ours)
        kind, statement = (OURS, ours[cell]) if cell in ours else (self.kind, self.statement)
        return {"claim": self.key, "kind": kind, "statement": statement, "q": q, "N": N, "d": d,
                "cell": cell, "measured": measured, "value": value, "threshold": self.threshold, "verdict": verdict}

    def untested(self, q, N, d, reason, cell="") -> dict:
        """A NOT TESTED row, saying why."""
        return self.row(q, N, d, cell, f"not tested: {reason}", math.nan, NOT_TESTED)

    def judged(self, q, N, d, cell, measured, value, ok: bool) -> dict:
        """A row with its verdict: PASS where ``ok``, else FAIL."""
        return self.row(q, N, d, cell, measured, value, PASS if ok else FAIL)


LEARNED = f"the stochastic-PE transformer (largest d_e) learned at N: worst seed's loss at N' = N <= {LEARNED_BELOW:g}"
