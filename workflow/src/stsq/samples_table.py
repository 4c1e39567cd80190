"""The tables of a samples sweep (no torch; docs/retrieval.md, "The tables").

- ``samples.csv``: one row per (cell, seed, threshold): the samples at the first check below the threshold, or the
  cap with ``censored`` true (a lower bound, never a measurement).
- ``slopes.csv``: per (arch, q, mode, heads, threshold), the slope of log samples against log N, fitted per seed
  over the N it reached the threshold at, and the slope of the seeds' median.  Where a larger N was censored the
  true growth is steeper than the fit over the N before it: ``bound`` is ">=", the slope a lower bound.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .retrieval_cells import RETRIEVAL_AXES

SAMPLE_COLUMNS = [*RETRIEVAL_AXES, "codes", "test_mode", "seed", "threshold", "samples", "censored", "test_loss",
                  "steps"]
# one curve of samples against N: every axis but N, d and width (one each per curve), and the threshold
GROUP = [*(k for k in RETRIEVAL_AXES if k not in ("N", "d", "width")), "threshold"]
SLOPE_COLUMNS = [*GROUP, "Ns", "slope", "slope_low", "slope_high", "bound", "censored_Ns"]


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


def slope_row(key, g: pd.DataFrame) -> dict:
    """One curve's slope: over the N below the first N at which any seed was censored."""
    c = curve(g)
    censored = c[c["censored"] > 0]["N"].tolist()
    first = min(censored) if censored else math.inf
    fitted = c[c["N"] < first]
    per_seed = [fit(s["N"], s["samples"]) for _, s in g[g["N"] < first].groupby("seed")]
    per_seed = [x for x in per_seed if not math.isnan(x)]
    return {**dict(zip(GROUP, key)), "Ns": " ".join(str(n) for n in fitted["N"]),
            "slope": fit(fitted["N"], fitted["median"]),
            "slope_low": min(per_seed) if per_seed else math.nan, "slope_high": max(per_seed) if per_seed else math.nan,
            "bound": ">=" if censored else "=", "censored_Ns": " ".join(str(n) for n in censored)}


def slopes(table: pd.DataFrame) -> pd.DataFrame:
    rows = [slope_row(key, g) for key, g in table.groupby(GROUP, sort=False)]
    return pd.DataFrame(rows, columns=SLOPE_COLUMNS)
