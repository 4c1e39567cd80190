"""The claims table written out (stsq.claims.judge.evaluate_claims measures it): the CSV, the HTML page with the
worst verdict of each claim first and its rows beneath, and the Markdown digest docs/claims.md quotes."""

from __future__ import annotations

import html

import pandas as pd

from stsq.claims.judge import CLAIMS, MEASURE_OF_CLAIM
from stsq.core.claim_records import CHECK, FAIL, NOT_TESTED, OURS, PASS
from stsq.core.files import atomic_write_text
from stsq.core.measures import MEASURES, resolve


def where(r) -> str:
    """The (q, N, d) a claims row is about, as "q=2, N=8, d=4" ("across sizes" for a fit across them)."""
    parts = [f"{k}={getattr(r, k)}" for k in ("q", "N", "d") if str(getattr(r, k)) != "all"]
    return ", ".join(parts) if parts else "across sizes"


def placed(r) -> str:
    """Where a row is, as a sentence says it: "at q=2, N=8, d=4", or "across sizes"."""
    at = where(r)
    return at if at == "across sizes" else f"at {at}"


def tally(rows: pd.DataFrame) -> str:
    """The verdicts of claims rows, counted: "6 PASS, 1 NOT TESTED"."""
    counts = rows["verdict"].value_counts()
    return ", ".join(f"{counts[v]} {v}" for v in (PASS, FAIL, NOT_TESTED) if v in counts)


def write_claims(claims: pd.DataFrame, csv_path, html_path, md_path=None) -> None:
    atomic_write_text(csv_path, claims.to_csv(index=False, lineterminator="\n"))
    atomic_write_text(html_path, claims_html(claims))
    if md_path:
        atomic_write_text(md_path, claims_digest(claims))


def claims_digest(claims: pd.DataFrame) -> str:
    """One Markdown row per claim: its verdicts over the rows, the range of its value column, and what it
    measured: every row where the claim is judged across sizes (a fit), else each FAIL row with its (q, N, d),
    so that a failure's reason is in the digest.  docs/claims.md quotes the sweeps' digests, and a test checks
    the cpu sweep's quote against a fresh run (tests/test_claims_cpu.py)."""
    lines = ["| claim | verdicts | value over its rows | measured (rows across sizes; FAIL rows) |",
             "|---|---|---|---|"]
    for key in CLAIMS:
        rows = claims[claims["claim"] == key]
        if rows.empty:
            continue
        verdicts = tally(rows)
        v = rows["value"].dropna()
        value = "-" if v.empty else f"{v.min():.3g}" if v.min() == v.max() else f"{v.min():.3g} to {v.max():.3g}"
        across = rows[rows["N"].astype(str) == "all"]
        if len(across) == len(rows):
            text = " / ".join(str(m) for m in across["measured"])
        else:  # a claim per (q, N, d): its failures, each where it is
            text = " / ".join(f"FAIL {placed(r)}: {r.measured}" for r in rows[rows["verdict"] == FAIL].itertuples())
        lines.append(f"| `{key}` | {verdicts} | {value} | {text.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


COLOUR = {PASS: "#d9f2d9", FAIL: "#f8d0d0", NOT_TESTED: "#eeeeee"}


def _html_rows(claims):
    """One row per claim: its verdicts, threshold and, for a claim of one row, what it measured; a claim of
    several rows (one per (q, N, d)) keeps them a click away, FAIL rows first."""
    head = "".join(f"<th>{h}</th>" for h in ("claim", "verdicts", "threshold", "measured"))
    body = []
    for key in CLAIMS:
        rows = claims[claims["claim"] == key]
        if rows.empty:
            continue
        worst = next(v for v in (FAIL, NOT_TESTED, PASS) if (rows["verdict"] == v).any())
        if len(rows) == 1:
            r = next(rows.itertuples())
            said = str(r.cell) and str(r.measured).startswith(f"{r.cell}:")  # the row names its cell itself
            measured = (f"{html.escape(_where_html(r))}{'' if said else html.escape(str(r.cell)) + ': '}"
                        f"{_shown(r.measured)}")
            if r.verdict == NOT_TESTED:  # the sweeps of config.yaml whose grid tests it (the report: the command)
                measured += f" (sweeps that test it: {', '.join(CLAIMS[key].tested_by)})"
        else:
            rank = rows["verdict"].map({FAIL: 0, NOT_TESTED: 1, PASS: 2})
            order = rows.assign(o=rank).sort_values("o", kind="stable")
            inner = "".join(
                f"<tr style='background:{COLOUR[r.verdict]}'><td>{r.q}</td><td>{r.N}</td><td>{r.d}</td>"
                f"<td>{html.escape(str(r.cell))}</td><td>{html.escape(r.measured)}</td><td><b>{r.verdict}</b></td></tr>"
                for r in order.itertuples())
            fails = rows[rows["verdict"] == FAIL]
            first = (f"FAIL at {html.escape(_where_html(next(fails.itertuples())).removesuffix('; '))}: "
                     f"{html.escape(next(fails.itertuples()).measured)}<br>" if len(fails) else "")
            values = rows["value"].dropna()
            if len(values):
                first += (f"value ({html.escape(CLAIMS[key].value)}) {values.min():.3g} to {values.max():.3g} over "
                          "the rows<br>")
            measured = (f"{first}<details><summary>each of the {len(rows)} rows (q, N, d)</summary><table class=inner>"
                        "<tr><th>q</th><th>N</th><th>d</th><th>cell</th><th>measured</th><th>verdict</th></tr>"
                        f"{inner}</table></details>")
        body.append(f"<tr style='background:{COLOUR[worst]}'><td><b>{html.escape(key)}</b>: "
                    f"{html.escape(rows['statement'].iloc[0])}</td><td><b>{tally(rows)}</b></td>"
                    f"<td>{html.escape(CLAIMS[key].threshold)}</td><td>{measured}</td></tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


LONG = 600  # a row's measured text longer than this shows its first two parts, the rest a click away


def _shown(measured: str) -> str:
    """A row's measured text: whole where short; else its first two parts ("; "-separated: what decides the
    verdict comes first) and the rest in a <details>, so that the page stays a page and nothing is lost."""
    parts = measured.split("; ")
    if len(measured) <= LONG or len(parts) <= 2:
        return html.escape(measured)
    return (f"{html.escape('; '.join(parts[:2]))}; <details><summary>the rest of what it measured "
            f"({len(parts) - 2} parts)</summary>{html.escape('; '.join(parts[2:]))}</details>")


def _where_html(r) -> str:
    return "" if where(r) == "across sizes" else where(r) + "; "


SAMPLES_COLUMNS_TEXT = (
    "<p><b>Columns.</b> <i>claim</i>: the statement, in the paper's words where it is the paper's, starting with "
    "'ours:' where it is this project's extension; <i>verdicts</i>: over the claim's rows (one per pointer mode, or "
    "one per N for the heads claim); <i>threshold</i>: what PASS means; <i>measured</i>: the slope of log samples "
    "against log N over the N below the cap, of the seeds' median (the seeds' range), and where an N stopped at the "
    "cap the floor of the growth to it; then the law held out at the largest N with its margin, the rival law beside "
    "it, and the power scan (docs/retrieval.md, \"The claims as laws\"); each row a click away where the claim has "
    "several. NOT TESTED: this sweep cannot test the claim, or what it presupposes does not hold; the row says why."
    "</p>")


WIDTH_COLUMNS_TEXT = (
    "<p><b>Columns.</b> <i>claim</i>: the paper's statement; <i>verdicts</i>: over the claim's rows (one per "
    "(q, N, d) it reads, or one for the sweep where it fits across sizes); <i>threshold</i>: what PASS means "
    "(judged on the worst seed); <i>measured</i>: mean [min, max] over seeds, three significant digits, "
    "absolute losses beside relative tests, each row a click away where the claim has several (its FAIL rows "
    "first), with the range of the claim's value over them (the one number a row is judged on, named "
    "there). NOT TESTED: this sweep cannot test the claim, or what it presupposes (the model learned at N) "
    "does not hold; the row says why. The oracle is the best loss of the ground-truth family "
    "W_pp = c I, V = v [I, 0]; m_eps, d_e_eps are critical widths (tables/critical.csv), geometric means "
    "over seeds; m*(eps) is the exact floor's width.</p>")


def _ours_part(ours: pd.DataFrame) -> str:
    """The rows that measure this project's extensions of the paper's statements, apart from the paper's (none:
    nothing)."""
    if ours.empty:
        return ""
    counts = ours["verdict"].value_counts()
    text = ", ".join(f"{counts.get(v, 0)} {v}" for v in (PASS, FAIL, NOT_TESTED))
    return (f"<h2>This project's extensions of the paper's statements (where the paper does not state them): {text}"
            f"</h2>{_html_rows(ours)}")


def claims_html(claims: pd.DataFrame) -> str:
    """The claims page: the words of the measure whose claims the table holds (stsq.core.measures: ``columns``,
    ``checks``) and the claims the table holds (a sweep's table holds every claim judged on its task); a table of no
    claim or of several measures' reads as the width measure's, listing every claim."""
    found = {MEASURE_OF_CLAIM[k] for k in claims["claim"]}
    measure = MEASURES[found.pop()] if len(found) == 1 else None
    held = set(claims["claim"])
    own = {k: c for k, c in CLAIMS.items() if k in held} if measure else CLAIMS
    columns = resolve(measure.columns) if measure else WIDTH_COLUMNS_TEXT
    checks_listed = measure.checks if measure else True
    paper, checks = claims[~claims["kind"].isin([CHECK, OURS])], claims[claims["kind"] == CHECK]
    ours = claims[claims["kind"] == OURS]  # this project's extensions of the paper's statements
    counts = paper["verdict"].value_counts()
    summary_text = ", ".join(f"{counts.get(v, 0)} {v}" for v in (PASS, FAIL, NOT_TESTED))
    check_counts = checks["verdict"].value_counts()
    check_text = ", ".join(f"{check_counts.get(v, 0)} {v}" for v in (PASS, FAIL, NOT_TESTED))
    why = "".join(f"<li><b>{html.escape(k)}</b> ({c.kind}): {html.escape(c.measured)}; <i>value</i>: "
                  f"{html.escape(c.value)}; <i>threshold</i> "
                  f"{html.escape(c.threshold)}: {html.escape(c.why)}; <i>presupposes</i>: "
                  f"{html.escape(c.presupposes or 'nothing')}</li>" for k, c in own.items())
    check_part = "" if not checks_listed else (
        f"<h2>Checks of the pipeline (bounds every correct run obeys, not tests of the paper): {check_text}</h2>"
        f"{_html_rows(checks)}")
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>Claims</title>"
            "<style>body{font-family:sans-serif;font-size:15px;margin:8px}td,th{padding:4px 8px;"
            "vertical-align:top;text-align:left}table{border-collapse:collapse;width:100%}"
            "tr{border-bottom:1px solid #ccc}td:first-child{width:24%}td:nth-child(2){width:9%}"
            "td:nth-child(3){width:20%}table.inner td{width:auto}summary{cursor:pointer;color:#205080}</style>"
            "</head><body>"
            f"<h1>Claims of the paper, measured: {summary_text}</h1>"
            f"{columns}{_html_rows(paper)}{_ours_part(ours)}{check_part}"
            "<h2>What each claim measures, its threshold and why, what it presupposes</h2>"
            f"<ul>{why}</ul></body></html>\n")
