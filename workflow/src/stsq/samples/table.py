"""The tables of a samples sweep (no torch; docs/retrieval.md, "The tables").

- ``samples.csv``: one row per (cell, seed, threshold): the samples at the first check below the threshold, or the
  cap with ``censored`` true (a lower bound, never a measurement).
- ``slopes.csv``: per (arch, q, mode, heads, threshold), the slope of log samples against log N over the N before
  the first N where a seed was censored: fitted per seed (``slope_low``, ``slope_high``) and on the seeds' median
  (``slope``).  Where an N was censored, ``floor`` is a lower bound of the growth from the smallest N to that one:
  the lowest seed's log(samples there / samples at the smallest N) / log(N ratio), with a censored seed's samples
  there at the cap (the samples it needs are more).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from stsq.retrieval.cells import RETRIEVAL_AXES

SAMPLE_COLUMNS = [*RETRIEVAL_AXES, "codes", "test_mode", "seed", "threshold", "samples", "censored", "test_loss",
                  "steps"]
# one curve of samples against N: every axis but N, d and width (one each per curve), and the threshold
GROUP = [*(k for k in RETRIEVAL_AXES if k not in ("N", "d", "width")), "threshold"]
SLOPE_COLUMNS = [*GROUP, "Ns", "slope", "slope_low", "slope_high", "censored_Ns", "floor"]


def read_samples(paths) -> pd.DataFrame:
    """Every cell's rows, in the order given (the sweep's cells)."""
    table = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
    return table[SAMPLE_COLUMNS]


def fit(N, samples) -> float:
    """The least-squares slope of log samples against log N (NaN with fewer than two points)."""
    if len(N) < 2:
        return math.nan
    return float(np.polyfit(np.log(np.asarray(N, float)), np.log(np.asarray(samples, float)), 1)[0])


def curve(g: pd.DataFrame) -> pd.DataFrame:
    """Per N of one curve: the seeds' median, min and max samples, and how many seeds were censored."""
    return g.groupby("N").agg(median=("samples", "median"), low=("samples", "min"), high=("samples", "max"),
                              censored=("censored", "sum"), seeds=("seed", "nunique")).reset_index()


def floor(g: pd.DataFrame, first: int) -> float:
    """A lower bound of the growth from the smallest N to the censored N ``first``: the lowest seed's slope between
    the two, a censored seed's samples at ``first`` being its cap (it needs more).  NaN where the smallest N is
    itself censored for a seed (no count to grow from)."""
    smallest = g["N"].min()
    if first == smallest:
        return math.nan
    at = g[g["N"].isin([smallest, first])].pivot_table(index="seed", columns="N", values="samples")
    start = g[g["N"] == smallest].set_index("seed")["censored"]
    if start.any():
        return math.nan
    return float(np.min(np.log(at[first] / at[smallest])) / math.log(first / smallest))


def slope_row(key, g: pd.DataFrame) -> dict:
    """One curve's slope over the N before the first N at which any seed was censored, and below it the floor."""
    c = curve(g)
    censored = c[c["censored"] > 0]["N"].tolist()
    first = min(censored) if censored else math.inf
    fitted = c[c["N"] < first]
    per_seed = [fit(s["N"], s["samples"]) for _, s in g[g["N"] < first].groupby("seed")]
    per_seed = [x for x in per_seed if not math.isnan(x)]
    return {**dict(zip(GROUP, key)), "Ns": " ".join(str(n) for n in fitted["N"]),
            "slope": fit(fitted["N"], fitted["median"]),
            "slope_low": min(per_seed) if per_seed else math.nan, "slope_high": max(per_seed) if per_seed else math.nan,
            "censored_Ns": " ".join(str(n) for n in censored),
            "floor": floor(g, first) if censored else math.nan}


def slopes(table: pd.DataFrame) -> pd.DataFrame:
    rows = [slope_row(key, g) for key, g in table.groupby(GROUP, sort=False)]
    return pd.DataFrame(rows, columns=SLOPE_COLUMNS)


def write_checked(table: pd.DataFrame, path) -> None:
    """A table of a samples sweep as CSV, with its ``<path>.sha256`` (read back by ``read_samples_table``)."""
    from stsq.core.files import atomic_write_text, sha256_of
    atomic_write_text(path, table.to_csv(index=False, lineterminator="\n"))
    atomic_write_text(f"{path}.sha256", sha256_of(path) + "\n")


def read_samples_table(path) -> pd.DataFrame:
    """tables/samples.csv, checked: its SHA-256 sidecar matches (an edited table is refused) and it has every
    column of ``SAMPLE_COLUMNS``."""
    from stsq.width.tables import read_checked
    return read_checked(path, SAMPLE_COLUMNS, rule="aggregate")


def read_claims_input(table, oracle=None) -> tuple[pd.DataFrame, None]:
    """What the samples measure's claims read (stsq.core.measures): the samples table, checked; no oracle."""
    return read_samples_table(table), None
