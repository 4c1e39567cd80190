"""The claims table: each claim of the paper, the measured value over seeds, the threshold, pass/fail.

Claims are checked per (q, N) group, on the transformer's largest d_e in the
sweep and on every FCN width.  A claim passes only if every seed meets the
threshold (the worst seed is the value compared).
"""

from __future__ import annotations

import html

import pandas as pd

from .experiment import CLAIM_COLUMNS as COLUMNS
from .experiment import FCN_ABOVE_FLOOR, FCN_ARCH, FCN_FAILS, LOSS, LOSS_CLAIMS, OK
from .files import atomic_write_text
from .theory import width_floor


def _final(table):
    return table[(table["split"] == "eval") & (table["metric"] == LOSS) & (table["status"] == OK)]


def _row(claim, q, N, cell, values: pd.Series, op: str, threshold: float):
    worst = values.max() if op == "<" else values.min()
    passed = bool(worst < threshold) if op == "<" else bool(worst > threshold)
    measured = f"{values.mean():.4g} [{values.min():.4g}, {values.max():.4g}] (n={len(values)})"
    return {"claim": claim, "q": q, "N": N, "cell": cell, "measured": measured, "worst": float(worst),
            "threshold": f"{op} {threshold:g}", "passed": passed}


def evaluate_claims(table: pd.DataFrame) -> pd.DataFrame:
    ev = _final(table)
    rows = []
    for (q, N), g in ev.groupby(["q", "N"]):
        for c in LOSS_CLAIMS:
            a = g[g["arch"] == c.arch]
            if a.empty:
                continue
            w = a["width"].max()
            v = a[(a["width"] == w) & (a["N_eval"] == c.factor * N)]["value"]
            if not v.empty:
                rows.append(_row(c.statement, q, N, f"{c.arch} d_e={w}, N'={c.factor * N}", v, c.op, c.threshold))
        fcn = g[(g["arch"] == FCN_ARCH) & (g["N_eval"] == N)]
        if not fcn.empty:
            per_width = fcn.groupby("width")["value"].mean()
            best = int(per_width.idxmin())
            rows.append(_row(FCN_FAILS.statement, q, N,
                             f"best FCN: m={best} of {sorted(int(w) for w in per_width.index)}",
                             fcn[fcn["width"] == best]["value"], FCN_FAILS.op, FCN_FAILS.threshold))
            floor = fcn.apply(lambda r: width_floor(int(r["N"]), int(r["d"]), int(r["q"]), int(r["width"])), axis=1)
            rows.append(_row(FCN_ABOVE_FLOOR, q, N,
                             f"fcn m in {sorted(int(w) for w in fcn['width'].unique())}",
                             fcn["value"] - floor, ">", 0.0))
    return pd.DataFrame(rows, columns=COLUMNS)


def write_claims(claims: pd.DataFrame, csv_path, html_path) -> None:
    atomic_write_text(csv_path, claims.to_csv(index=False, lineterminator="\n"))
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(r[c]) if c != 'passed' else ('PASS' if r[c] else 'FAIL'))}</td>"
                         for c in COLUMNS) + "</tr>"
        for _, r in claims.iterrows())
    n_pass = int(claims["passed"].sum())
    page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Claims</title></head><body>"
            f"<h1>Claims: {n_pass} of {len(claims)} pass</h1>"
            f"<p>measured: mean [min, max] over seeds; worst: the seed value compared with the threshold.</p>"
            f"<table border='1' cellpadding='4'><tr>{head}</tr>{body}</table></body></html>\n")
    atomic_write_text(html_path, page)
