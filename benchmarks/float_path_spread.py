"""How far each measure's numbers move between two float paths: a run against a reference of the same sweep made
on another CPU (or on another float path of one CPU: MKL_CBWR, ATEN_CPU_CAPABILITY), per table and column.

    PYTHONPATH=workflow/src python benchmarks/float_path_spread.py results/qstr reference/qstr

Prints, per (table, column): the numbers compared, how many differ, the median and the largest relative
difference, and the largest difference over the number's own tolerance (reference/<sweep>/tolerance.csv); the
rule the old single tolerance would have broken (over 5 % and over 0.005) is counted too.  docs/reproducibility.md
quotes it."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from stsq.report import reference as ref
from stsq.report import tolerance as tol


def spread(run: Path, reference: Path) -> pd.DataFrame:
    allowed = ref._allowed(reference)
    rows = []
    for t in ref.SAMPLES_TABLES if (reference / ref.SAMPLES).exists() else ref.TABLES:
        a, b = ref._read(run, t.name), ref._read(reference, t.name)
        keys = [k for k in t.keys if k in a.columns and k in b.columns]
        joined = a.merge(b, on=keys, suffixes=("", "@ref")).to_dict("records")
        for col in [c for c in t.numbers if c in a.columns and c in b.columns]:
            rel, over, n, moved, old = [], [], 0, 0, 0
            for r in joined:
                x, y = pd.to_numeric(r[col], errors="coerce"), pd.to_numeric(r[f"{col}@ref"], errors="coerce")
                if not (np.isfinite(x) and np.isfinite(y)):
                    continue
                n += 1
                gap = abs(x - y)
                moved += gap > 0
                rel.append(gap / max(abs(x), abs(y)) if gap else 0.0)
                old += gap > tol.ABSOLUTE and rel[-1] > tol.RELATIVE
                limit, factor, _ = allowed[(t.name, tol.row_label(r, keys), col)]
                over.append(ref._close(str(x), str(y), limit, factor)[1])
            if n:
                rows.append({"table": t.name, "column": col, "numbers": n, "moved": moved,
                             "median_rel": float(np.median(rel)), "max_rel": max(rel),
                             "beyond_5pct_and_0.005": old, "max_over_own_tolerance": max(over)})
    return pd.DataFrame(rows)


if __name__ == "__main__":
    pd.set_option("display.width", 200)
    print(spread(Path(sys.argv[1]), Path(sys.argv[2])).to_string(index=False, float_format=lambda v: f"{v:.3g}"))
