"""What the report of a samples sweep says: its front page and the figure's caption (docs/retrieval.md).

Every sentence about a result is built from the sweep's own tables (the claims table, the slopes table), so it
cannot contradict the run.  No torch.
"""

from __future__ import annotations

import pandas as pd

from stsq.claims.retrieval import AT
from stsq.claims.table import tally
from stsq.core.claim_records import FAIL, NOT_TESTED, OURS
from stsq.core.experiment import ARCHS
from stsq.report.pages import _link, _rst_safe, provenance_text

SOURCE = ("Sparse token retrieval after Mousavi-Hosseini, Sanford, Wu, Erdogdu (NeurIPS 2025), *When Do Transformers "
          "Outperform Feedforward and Recurrent Networks? A Statistical Perspective*")


def _arch_words(arch: str, heads: int, q: int) -> str:
    return ARCHS[arch].legend + (f" ({heads} head{'s' if heads > 1 else ''})" if q > 1 else "")


def _where(r) -> str:
    """A claims row's place: its cell ("general", "general N=4"), or the whole sweep."""
    return r.cell if isinstance(r.cell, str) and r.cell else "the sweep"


def slopes_lines(slopes: pd.DataFrame) -> list[str]:
    """One line per curve: its slope at every threshold, so a reader sees whether the ordering hinges on one."""
    lines = []
    for (arch, q, mode, heads), g in slopes.groupby(["arch", "q", "mode", "heads"], sort=False):
        at = "; ".join(f"{r.threshold:g}: " + ("no slope (reached at fewer than two N)" if pd.isna(r.slope) else
                                                f"{r.slope:.2f}")
                       + ("" if pd.isna(r.floor) else f" (at least {r.floor:.2f} to the first N at the cap)")
                       for r in g.sort_values("threshold", ascending=False).itertuples())
        lines.append(f"- {_arch_words(arch, heads, q)}, q = {q}, {mode}: {at}")
    return lines


def caption(claims: pd.DataFrame) -> str:
    """The figure's caption: what it draws, then each claim's verdicts and the measured text of each row."""
    lines = [f"Samples until the test loss falls below {AT:g} x the trivial loss, against N (log-log). Markers: the "
             "median of the seeds; bars: their range; an open marker with an arrow: a seed stopped at the cap "
             "(the samples needed are more). Dotted: growth like N through the FFN's first point.", ""]
    for key, g in claims.groupby("claim", sort=False):
        lines.append(f"``{key}`` ({tally(g)}): " + " / ".join(str(m) for m in g["measured"]))
    return _rst_safe("\n".join(lines)) + "\n"


def samples_landing(sweep: str, conf: dict, claims: pd.DataFrame, tables: dict, provenance: dict | None) -> str:
    """The samples measure's front page (stsq.core.measures: ``landing``): its grid, claims and slopes."""
    return landing(sweep, conf, claims, pd.read_csv(tables["slopes"]), provenance)


def figure_caption(name: str, fig, claims: pd.DataFrame, sweep: str, encodings=None) -> str:
    """The samples figure's caption as the figure command asks for it (stsq.core.figure_catalog: ``caption``)."""
    return caption(claims)


def landing(sweep: str, conf: dict, claims: pd.DataFrame, slopes: pd.DataFrame, provenance: dict | None) -> str:
    root = f"results/{sweep}"
    lines = [
        f"{SOURCE}: the sweep ``{sweep}``. d = {conf['d']}, N in {conf['N']}, q in {conf['q']}, modes "
        f"{', '.join(conf['modes'])}, {conf['codes']} codes, seeds {conf['seeds']}, thresholds "
        f"{', '.join(f'{t:g}' for t in conf['thresholds'])} x the trivial loss, a cap of {conf['cap']:,} samples "
        "(docs/retrieval.md).", "",
        f"**Result: {tally(claims[claims['kind'] != OURS]) or 'no claim'}** of the paper's claims; this project's "
        f"extensions of them (rows marked ours): {tally(claims[claims['kind'] == OURS]) or 'none'}. Each is read at "
        f"the threshold {AT:g}. The {_link(f'{root}/tables/claims.html', 'html', 'claims table')} has every row: "
        "what was measured, its threshold and why.", ""]
    fails = claims[claims["verdict"] == FAIL]
    if len(fails):
        lines += ["**FAIL**, and why:", ""]
        lines += [f"- ``{r.claim}`` ({r.statement}), "
                  + (f"{r.measured}." if str(r.measured).startswith(f"{_where(r)}:") else f"{_where(r)}: {r.measured}.")
                  for r in fails.itertuples()]
        lines.append("")
    untested = claims[claims["verdict"] == NOT_TESTED]
    if len(untested):
        lines += ["**NOT TESTED** here, and why:", ""]
        lines += [f"- ``{r.claim}`` ({r.statement}): {r.measured}." for r in untested.itertuples()]
        lines.append("")
    lines += ["**Slopes of log samples against log N** at each threshold, over the N below the cap "
              "(tables/slopes.csv):", "", *slopes_lines(slopes), ""]
    lines += [f"**The figure**: {_link(f'{root}/figures/samples.png', 'img', 'samples')}, samples to threshold "
              "against N."]
    if provenance is not None:
        lines += ["", provenance_text(provenance, f"{root}/provenance.json")]
    return _rst_safe("\n".join(lines)) + "\n"
