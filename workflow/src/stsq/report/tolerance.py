"""How far each number of a reference may move on another machine, from the reference's own seeds.

Another CPU (or another float path on one CPU) sums its products in another order.  Training carries the
difference along, and where a number reads a crossing (the first check below a threshold, a plateau left late,
a need read between a width that learned and one stuck at chance) the difference is as large as a change of seed.
So each number's tolerance is its own seeds' noise:

- a number of one seed (a row with a ``seed`` key): two runs of that seed differ like two draws of a seed, whose
  difference has standard deviation sqrt(2) s, with s the standard deviation over the row's seeds in the
  reference (of the number's log, where the arch's numbers are all positive: a loss, a width or a count moves by a
  factor), at least the arch's pooled one; the tolerance is ``Z`` times that;
- a number derived from several seeds (a slope, a claim's value): its standard error over seeds by the jackknife
  (recomputed with each seed left out, from the reference's own per-seed table), and the same ``Z`` sqrt(2) times it;
- a number aggregated over seeds with its range beside it (an encoding's mean loss over seeds): s estimated from
  the range;
- the oracle's Monte-Carlo loss: its standard error.

No tolerance is below the floor measured between two CPUs on continuous numbers (``RELATIVE`` of the number or
``ABSOLUTE``), nor, for a sample count, below one check (the counts' greatest common divisor).  A number whose
inputs the reference lacks (a claim read from the training curves), or that has one seed, gets the floor.

``TOLERANCE`` (``tolerance.csv`` in the reference) holds one row per number: the table, the row, the column, the
reference's value, the tolerance and the rule that gave it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

Z = 3.0  # standard deviations of the difference between two runs
RELATIVE = 0.05  # the floor: a number may always move by this fraction of its size ...
ABSOLUTE = 0.005  # ... or by this much
TOLERANCE = "tolerance.csv"
COLUMNS = ["table", "row", "column", "value", "tolerance", "factor", "rule"]
POOLED = ("arch", "metric", "threshold", "epsilon")  # the keys of one measure of one arch, whose cells pool their noise
# the expected range of n draws of a standard normal (d2): s is estimated as range / D2[n]
D2 = {2: 1.128, 3: 1.693, 4: 2.059, 5: 2.326, 6: 2.534, 7: 2.704, 8: 2.847, 9: 2.970, 10: 3.078}


def row_label(r: dict, keys: Iterable[str]) -> str:
    """A row in words, from its keys: '(arch=fcn, q=2, ..., seed=0)' (empty keys left out)."""
    return "(" + ", ".join(f"{k}={r[k]}" for k in keys if r.get(k) not in ("", None)) + ")"


def _num(text) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def floor(value: float) -> float:
    """The least tolerance of any number: ``RELATIVE`` of it, or ``ABSOLUTE``."""
    return max(ABSOLUTE, RELATIVE * abs(value)) if math.isfinite(value) else ABSOLUTE


def _granularity(values: pd.Series) -> float:
    """One check of a sample count: the greatest common divisor of the counts (0 where they are not integers)."""
    ints = [int(v) for v in values if math.isfinite(v) and v > 0 and float(v).is_integer()]
    return float(np.gcd.reduce(ints)) if ints else 0.0


def _per_seed(df: pd.DataFrame, keys, column: str) -> tuple[pd.Series, pd.Series]:
    """Per row, (Z sqrt(2) s as an amount, or NaN; the factor exp(Z sqrt(2) s), or NaN), in the scale the number
    moves in.  A positive number (a loss, a width, a count of samples) moves by a factor: s is the sd of its log over
    the row's seeds.  A number that can be 0 or negative moves by an amount: s is the sd itself.  s is at least the
    pooled one of its kind (one measure of one arch: the root mean square of its cells' sds): two or three seeds
    estimate a cell's spread poorly (with three, one cell in twenty shows less than a quarter of it)."""
    group = [k for k in keys if k != "seed" and k in df.columns]
    x = pd.to_numeric(df[column], errors="coerce").replace([np.inf, -np.inf], np.nan)
    kind = [df[k] for k in POOLED if k in df.columns] or [pd.Series(0, index=df.index)]
    positive = x.le(0).groupby(kind, dropna=False).transform("sum").eq(0)  # no number of its kind is 0 or below
    by = [df[k] for k in group]
    sd_log = np.log(x.where(positive)).groupby(by, dropna=False).transform(lambda v: v.std(ddof=1))
    sd = x.groupby(by, dropna=False).transform(lambda v: v.std(ddof=1))
    pool_log = sd_log.pow(2).groupby(kind, dropna=False).transform("mean").pow(0.5)
    mean = x.groupby(by, dropna=False).transform("mean")
    pool = ((sd / mean.abs()).where(mean.abs() > 0).pow(2).groupby(kind, dropna=False).transform("mean").pow(0.5)
            * mean.abs())
    additive = Z * math.sqrt(2) * pd.concat([sd, pool], axis=1).max(axis=1, skipna=True)
    factor = np.exp(Z * math.sqrt(2) * pd.concat([sd_log, pool_log], axis=1).max(axis=1, skipna=True))
    defined = sd.notna()
    return additive.where(~positive & defined), factor.where(positive & defined)


def jackknife(values: list[float], full: float) -> float:
    """The jackknife standard error of a statistic from its leave-one-seed-out values, over those that are defined
    (leaving out the one seed that was censored may leave a bound undefined); NaN where fewer than two are."""
    v = np.array(values, dtype=float)
    v = v[np.isfinite(v)]
    if len(v) < 2 or not math.isfinite(full):
        return math.nan
    return float(math.sqrt((len(v) - 1) / len(v) * ((v - v.mean()) ** 2).sum()))


def _derived(ref: pd.DataFrame, keys, column: str, recompute, seeds) -> pd.Series:
    """Z sqrt(2) times the jackknife standard error of each row's ``column``, recomputing the table without each
    seed; NaN where the recomputation from the reference's per-seed table does not give back the row's value."""
    full = recompute(None)
    tol = pd.Series(math.nan, index=ref.index)
    if full is None or len(seeds) < 2:
        return tol
    keyed = [k for k in keys if k in ref.columns and k in full.columns]
    again = ref[keyed].merge(full[[*keyed, column]].astype({k: str for k in keyed}), on=keyed, how="left")
    outs = [recompute(s) for s in seeds]
    for i, r in ref.iterrows():
        value, back = _num(r[column]), _num(again.loc[i, column])
        if not (math.isfinite(value) and math.isfinite(back) and math.isclose(value, back, rel_tol=1e-9)):
            continue
        loo = []
        for out in outs:
            hit = out if out is not None else pd.DataFrame(columns=[*keyed, column])
            for k in keyed:
                hit = hit[hit[k].astype(str) == str(r[k])]
            loo.append(_num(hit[column].iloc[0]) if len(hit) == 1 else math.nan)
        tol[i] = Z * math.sqrt(2) * jackknife(loo, value)
    return tol


PER_SEED = "per seed: 3 sqrt(2) x the sd over the row's seeds (at least its kind's pooled sd)"
PER_SEED_LOG = "per seed: exp(3 sqrt(2) x the sd of the log over the row's seeds) (at least its kind's pooled sd)"
OVER_SEEDS = "over seeds: 3 sqrt(2) x the sd from the seeds' range"
MONTE_CARLO = "Monte Carlo: 3 sqrt(2) x its standard error"
DERIVED = "derived: 3 sqrt(2) x its jackknife standard error over seeds"
FLOOR = "the floor: 0.05 relative or 0.005 absolute"
ONE_CHECK = "one check"


def _spread(ref: pd.DataFrame, keys, column: str, recompute, seeds) -> tuple[pd.Series, pd.Series, str]:
    """Each row's noise in ``column``: (Z sqrt(2) times it as an amount, or as a factor; NaN where the other applies
    or none does), and the rule that gave it."""
    none = pd.Series(math.nan, index=ref.index)
    if "seed" in keys and "seed" in ref.columns:
        return *_per_seed(ref, keys, column), PER_SEED
    if column in ("loss_mean", "loss_min", "loss_max") and {"loss_min", "loss_max", "seeds"} <= set(ref.columns):
        n = ref["seeds"].map(_num)
        d2 = n.map(lambda k: D2.get(int(k), math.nan) if math.isfinite(k) else math.nan)
        s = (ref["loss_max"].map(_num) - ref["loss_min"].map(_num)) / d2
        if column == "loss_mean":  # a mean over n seeds
            return Z * math.sqrt(2) * s / np.sqrt(n), none, OVER_SEEDS + " / sqrt(n)"
        return Z * math.sqrt(2) * s, none, OVER_SEEDS
    if column == "normalized_loss" and "standard_error" in ref.columns:
        return Z * math.sqrt(2) * ref["standard_error"].map(_num), none, MONTE_CARLO
    if recompute is not None:
        return _derived(ref, keys, column, recompute, seeds), none, DERIVED
    return none, none, ""


def table_tolerances(name: str, keys, numbers, ref: pd.DataFrame, *, recompute=None, seeds=()) -> list[dict]:
    """The tolerance of every number of one reference table (``ref`` read as text): an amount, at least the floor
    (and, for a sample count, one check), and where the number moves by a factor, that factor.  A number is within
    its tolerance where it differs by at most the amount, or by at most the factor."""
    rows = []
    for column in [c for c in numbers if c in ref.columns]:
        values = ref[column].map(_num)
        amount, factor, rule = _spread(ref, keys, column, recompute, seeds)
        step = _granularity(values) if column == "samples" else 0.0
        for i, r in ref.iterrows():
            value, t, f = values[i], amount[i], factor[i]
            least = max(floor(value), step)
            by_amount = math.isfinite(t) and t > least
            by_factor = math.isfinite(f) and math.isfinite(value) and abs(value) * (f - 1) > least
            said = PER_SEED_LOG if by_factor else rule if by_amount else ONE_CHECK if step > floor(value) else FLOOR
            rows.append({"table": name, "row": row_label(r, keys), "column": column, "value": r[column],
                         "tolerance": t if by_amount else least, "factor": f if by_factor else "", "rule": said})
    return rows
