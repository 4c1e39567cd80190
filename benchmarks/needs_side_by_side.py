"""The docs' figure of index lookup and bounded Dyck side by side (docs/separations.md): the width each family needs
against N, one panel per task, from the committed references' critical widths (each sweep's report draws its own
task's panel; a figure of two sweeps has no rule).  `make docs` runs it:

    python benchmarks/needs_side_by_side.py reference/lookup reference/dyck --out docs/separations_needs.png
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "src"))

import pandas as pd  # noqa: E402
from stsq.report.figures import needs_panels  # noqa: E402
from stsq.report.legibility import save_figure  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("references", nargs="+", type=Path, help="each sweep's reference folder (its critical.csv)")
    p.add_argument("--out", required=True, type=Path)
    a = p.parse_args()
    crit = pd.concat([pd.read_csv(r / "critical.csv") for r in a.references], ignore_index=True)
    save_figure(needs_panels(crit), [a.out])


if __name__ == "__main__":
    main()
