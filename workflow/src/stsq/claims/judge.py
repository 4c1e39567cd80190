"""The claims table: every claim of the registry (``CLAIMS``) measured from a sweep's tidy table and oracle table,
each row with a verdict PASS, FAIL or NOT TESTED (the sweep cannot test it, or what it presupposes does not hold:
the reason is said).

A claim is a record (stsq.core.claim_records.Claim) in a module by subject, beside the function that measures it:
stsq.claims.learning, claims_length, claims_width and claims_checks.  One judge (``evaluate_claims``) walks them.
For each q: every (q, N, d) for the claims judged per cell, then the claims judged per training budget and per q
of their arch; after every q, the claims fitted across the sweep.  The judge writes the NOT TESTED rows no claim
has to: the arch it reads is not in the sweep, the sweep scores no N' > N for a claim about unseen lengths, the
paper's model did not learn at N for a claim that presupposes it.  Checks (bounds every correct pipeline obeys)
are listed after the paper's claims.  A claim about a bound is judged on the worst seed.
"""

from __future__ import annotations

import importlib

import pandas as pd

from stsq.claims.view import Cell, Sweep
from stsq.core import experiment as ex
from stsq.core.claim_records import BUDGET, CELL, CHECK, CLAIM_COLUMNS, IN_EACH_Q, SWEEP, SWEEP_BY_Q, Claim, Q
from stsq.core.measures import MEASURES, measure_of, resolve
from stsq.core.tasks import DEFAULT_TASK, TASKS, Task

# in the order the table lists them: each measure's claim modules (stsq.core.measures), in the registry's order
SUBJECTS = {name: tuple(importlib.import_module(m) for m in measure.claims) for name, measure in MEASURES.items()}
CLAIMS: dict[str, Claim] = {c.key: c for ms in SUBJECTS.values() for m in ms for c in vars(m).values()
                            if isinstance(c, Claim)}
# the measure whose claim modules hold each claim: a claim is judged on the sweeps of that measure's tasks
MEASURE_OF_CLAIM = {c.key: name for name, ms in SUBJECTS.items() for m in ms for c in vars(m).values()
                    if isinstance(c, Claim)}


# the tasks with claims of their own (``Claim.task``): their sweeps judge only those
OWN_CLAIMS = {c.task for c in CLAIMS.values() if c.task}


def applies(c: Claim, task: str) -> bool:
    """Whether a sweep of ``task`` judges ``c``: a claim of its measure's modules, of this task where the claim names
    one (``Claim.task``); a claim that names none, on a task without claims of its own (STS_q's, on any new task of
    Gaussian tokens)."""
    return MEASURE_OF_CLAIM[c.key] == TASKS[task].measure and (c.task == task or not c.task and task not in OWN_CLAIMS)
NO_LENGTHS = "the sweep scores no N' > N (its eval_length_factors are [1])"
TASK_LACKS = {  # why a claim that reads it says nothing of a task without it
    "oracle": "the claim is a statement about the ground-truth family's solution, which is STS_q's",
    "floor": "the claim is a statement about the FCN's exact width floor, which is STS_q's"}


def _per_arch(c: Claim) -> bool:
    """Whether ``c`` reads every arch expected to do something at N' > N (a row each), not one role's arch or one
    arch it names."""
    return c.reads not in ex.ROLES and c.reads not in ex.ARCHS


def _archs(c: Claim) -> list[str]:
    if c.reads in ex.ROLES:
        return [ex.role_arch(c.reads)]
    return [c.reads] if c.reads in ex.ARCHS else ex.with_length(c.reads)


def _at_cell(c: Claim, cell: Cell) -> list[dict]:
    rows = []
    if c.lengths and not cell.sweep.lengths:
        return rows  # one row for the sweep (``_sweep_rows``)
    for arch in _archs(c):
        if cell.of(arch).empty:  # not trained here: no statement about this cell
            continue
        if c.learned and not cell.learned:
            rows.append(c.untested(cell.q, cell.N, cell.d, cell.not_learned, cell.label))
        else:
            rows.extend(c.measure(c, cell, arch))
    return rows


def _in_q(s: Sweep, q, judged: list[Claim]) -> list[dict]:
    """The rows of one q: each (N, d), then each budget and the q itself of the claims judged per q."""
    rows = []
    for N, d in s.shapes(q):
        cell = Cell(s, q, N, d)
        rows.extend(r for c in judged if c.scope == CELL for r in _at_cell(c, cell))
    per_budget = [c for c in judged if c.scope == BUDGET]
    for arch in dict.fromkeys(a for c in per_budget for a in _archs(c)):
        if not s.trains_at(arch, q):
            continue
        claims = [c for c in per_budget if arch in _archs(c)]
        budgets = s.budgets(arch, q)
        if not budgets:
            rows.extend(c.untested(q, "all", "all", f"the sweep has no {arch}") for c in claims)
        for steps in budgets:
            rows.extend(r for c in claims for r in c.measure(c, s, q, steps))
    for c in judged:
        if c.scope == Q and any(s.trains_at(a, q) for a in _archs(c)):
            rows.extend(c.measure(c, s, q))
    return rows


def _sweep_rows(s: Sweep, judged: list[Claim]) -> list[dict]:
    """After every q: a role's arch absent from the sweep (a row for each claim of it judged inside q), the claims
    fitted across the sweep, a claim about unseen lengths in a sweep that scores none, and each arch a per-arch
    claim reads that the sweep lacks."""
    rows = []
    for c in judged:
        if c.scope in IN_EACH_Q and not _per_arch(c) and _archs(c)[0] not in s.archs:
            rows.append(c.untested("all", "all", "all", f"the sweep has no {_archs(c)[0]}"))
    for scope in (SWEEP_BY_Q, SWEEP):
        for c in judged:
            if c.scope == scope:
                absent = [a for a in _archs(c) if a not in s.archs]
                rows.extend([c.untested("all", "all", "all", f"the sweep has no {absent[0]}")] if absent
                            else c.measure(c, s))
    for c in judged:
        if c.lengths and not _per_arch(c) and _archs(c)[0] in s.archs and not s.lengths:
            rows.append(c.untested("all", "all", "all", NO_LENGTHS, _archs(c)[0]))
    for c in judged:
        for arch in _archs(c) if _per_arch(c) else ():  # one row for the sweep, not one per (q, N, d)
            if arch not in s.archs:
                rows.append(c.untested("all", "all", "all", f"the sweep has no {arch}", arch))
            elif c.lengths and not s.lengths:
                rows.append(c.untested("all", "all", "all", NO_LENGTHS, arch))
    return rows


def _claims_of(table: pd.DataFrame, oracle: pd.DataFrame, task: Task) -> pd.DataFrame:
    s = Sweep(table, oracle)
    own = [c for c in CLAIMS.values() if applies(c, task.name)]
    lacks = {c.key: [n for n in c.needs if getattr(task, n) is None] for c in own}
    judged = [c for c in own if not lacks[c.key]]
    rows = [c.untested("all", "all", "all", f"the task {task.name} has no {' and no '.join(lacks[c.key])}: "
                       f"{TASK_LACKS[lacks[c.key][0]]}") for c in own if lacks[c.key]]
    rows += [r for q in s.qs() for r in _in_q(s, q, judged)] + _sweep_rows(s, judged)
    claims = pd.DataFrame(rows, columns=CLAIM_COLUMNS)
    return claims.sort_values("kind", key=lambda k: k == CHECK, kind="stable").reset_index(drop=True)


def evaluate_claims(table: pd.DataFrame, oracle: pd.DataFrame | None, task: str = DEFAULT_TASK) -> pd.DataFrame:
    """Every claim of ``CLAIMS`` that applies to ``task`` (stsq.core.tasks.TASKS), judged on a sweep's tables by its
    measure's judge (stsq.core.measures: ``judge``)."""
    return resolve(measure_of(task).judge)(table, oracle, task)


def judge_table(table: pd.DataFrame, oracle: None, task: str) -> pd.DataFrame:
    """The judge of a measure whose claims read its one table (the samples measure's, stsq.samples.table): each
    claim measures its rows from it, in the registry's order."""
    rows = []
    for c in claims_of(task).values():
        if c.at is not None and not (table["threshold"] == c.at).any():
            present = ", ".join(f"{t:g}" for t in sorted(table["threshold"].unique())) or "none"
            rows.append(c.untested("all", "all", "all", f"the table has no row at the threshold {c.at:g} the claim "
                                   f"reads (its thresholds: {present})"))
            continue
        # a claim whose curves the sweep lacks says so in one row: no claim vanishes from the table
        rows.extend(c.measure(c, table) or [c.untested("all", "all", "all", "the sweep has none of the curves it "
                                                       f"reads ({c.measured})")])
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


def judge_widths(table: pd.DataFrame, oracle: pd.DataFrame, task: str) -> pd.DataFrame:
    """The width measure's judge: every claim for every (q, N, d) (and every q, for the width claims) of the tidy
    table and the oracle table; the paper's claims first, then the checks.  Each role is read through its arch in
    the table (stsq.core.experiment.reading); where the table has an axis beyond the shape
    (stsq.core.experiment.extra_axes),
    every claim is judged per value of it, and its rows name that value first in their cell."""
    with ex.reading(table["arch"].unique()):
        extra = [k for k in ex.extra_axes() if k in table.columns]
        if not extra:
            return _claims_of(table, oracle, TASKS[task])
        parts = []
        for key, part in table.groupby(extra, sort=True):
            where = " ".join(f"{k}={v}" for k, v in zip(extra, key if isinstance(key, tuple) else (key,)))
            claims = _claims_of(part, oracle, TASKS[task])
            parts.append(claims.assign(cell=[f"{where} {c}".strip() for c in claims["cell"]]))
        claims = pd.concat(parts, ignore_index=True)
        return claims.sort_values("kind", key=lambda k: k == CHECK, kind="stable").reset_index(drop=True)


def read_claims_input(task: str, table, oracle=None):
    """The tables the claims of ``task`` read, each checked: its measure's (stsq.core.measures: read_table)."""
    return resolve(measure_of(task).read_table)(table, oracle)


def claims_of(task: str = DEFAULT_TASK) -> dict[str, Claim]:
    """The claims judged on ``task``'s sweeps (``applies``), in the registry's order."""
    return {k: c for k, c in CLAIMS.items() if applies(c, task)}


def figure_claims(figure: str) -> list[Claim]:
    """The claims whose rows a figure's caption reports (``Claim.figures``), in the registry's order."""
    return [c for c in CLAIMS.values() if figure in c.figures]
