"""A toy axis added to the cell record, run against a real run's tables (tests/test_claims_cpu.py runs this in
a copy of the package whose CellRecord has one more field marked AXIS, as docs/extending.md would add it).

Usage: python toy_axis.py METRICS_CSV ORACLE_CSV CLAIMS_CSV SWEEP_JSON.  Prints one JSON object of what it found.
"""

from __future__ import annotations

import json
import sys

import matplotlib
import pandas as pd

matplotlib.use("Agg")

from stsq.claims.judge import evaluate_claims  # noqa: E402
from stsq.core import experiment as ex  # noqa: E402
from stsq.core.figure_catalog import figures_of  # noqa: E402
from stsq.core.sweep import cell_records  # noqa: E402
from stsq.report.figures import FIGURES  # noqa: E402
from stsq.report.legibility import texts  # noqa: E402
from stsq.width.critical import critical_widths  # noqa: E402


def figure_text(fig) -> str:
    return " ".join(t.get_text() for t in texts(fig))


def main(metrics_csv, oracle_csv, claims_csv, sweep_json) -> dict:
    assert "toy" in ex.AXES and ex.extra_axes() == ["toy"], ex.AXES
    table, oracle = pd.read_csv(metrics_csv), pd.read_csv(oracle_csv)
    # toy = 1: the same models, the paper's model 3x worse at every length: a different picture
    worse = table.assign(value=table["value"].where(table["arch"] != ex.paper_model(), table["value"] * 3))
    both = pd.concat([table.assign(toy=0), worse.assign(toy=1)], ignore_index=True)
    out = {}

    sweep = json.loads(sweep_json)
    sweep["toy"] = [0, 1]
    records = cell_records(sweep)
    out["grid"] = {"cells": len(records), "toy_values": sorted({r.toy for r in records}),
                   "paths_with_toy": sum("toy~" in r.path for r in records)}

    claims_both = evaluate_claims(both, oracle)
    # each value's claims, judged on its table alone (toy then takes one value)
    alone = {0: evaluate_claims(table.assign(toy=0), oracle), 1: evaluate_claims(worse.assign(toy=1), oracle)}
    out["claims"] = {}
    for value, claims in alone.items():
        part = claims_both[claims_both["cell"].str.match(f"toy={value}( |$)")].reset_index(drop=True)
        same = len(part) == len(claims) and part[["claim", "cell", "measured", "verdict"]].equals(
            claims[["claim", "cell", "measured", "verdict"]].reset_index(drop=True))
        out["claims"][value] = {"rows": len(part), "same_as_alone": bool(same)}
    run = pd.read_csv(claims_csv)  # the run's own claims table, without the axis
    mine = alone[0].reset_index(drop=True)
    out["claims"]["0_as_run"] = bool(list(mine["measured"]) == list(run["measured"])
                                     and list(mine["verdict"]) == list(run["verdict"]))
    out["claims"]["pictures_differ"] = list(alone[0]["verdict"]) != list(alone[1]["verdict"])
    out["claims"]["rows"] = len(claims_both)

    crit = critical_widths(both)
    out["critical"] = {"has_toy": "toy" in crit.columns, "rows": len(crit),
                       "rows_alone": len(critical_widths(table.assign(toy=0)))}

    out["figures"] = {}
    for name in figures_of("width", "sts"):
        draw = FIGURES[name]
        refused = figure_text(draw(both, oracle, position_range=sweep.get("position_range")))
        drawn = figure_text(draw(both[both["toy"] == 0], oracle, position_range=sweep.get("position_range")))
        out["figures"][name] = {"refused": "cannot draw" in refused and "toy" in refused,
                                "drawn_one_value": "cannot draw" not in drawn}
    return out


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:5])))
