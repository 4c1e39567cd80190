"""What the report says: which figures a sweep draws, each figure's caption and the landing page.

A caption has two kinds of sentence.  What the run found is built from the sweep's own claims table (each
claim the figure shows: its verdicts, and the measured text of every FAIL and NOT TESTED row) or from the
figure's own table (the encodings figure's ranking), so it cannot contradict the run.  What stays fixed
describes only the drawing: the axes, and each drawn arch's colour, line and marker in words generated
from its ``Arch.style``, the record the figure draws it with (tests/test_report.py compares the words with
the drawn artists).  No torch: ``figure_plan`` runs at DAG-parse time.
"""

from __future__ import annotations

import re

import pandas as pd

from stsq.claims.judge import CLAIMS, figure_claims
from stsq.claims.table import placed, tally, where
from stsq.core import claim_records as cl
from stsq.core import experiment as ex
from stsq.core.claim_records import CHECK, FAIL, NOT_TESTED, PASS
from stsq.core.experiment import ARCHS, fcn_arch, paper_model, style_of
from stsq.core.figure_catalog import FIGURE_RULE, FIGURES, Grid, figures_of
from stsq.core.measures import measure_of_sweep
from stsq.core.sweep import cells
from stsq.core.tasks import DEFAULT_TASK, TASKS

# -- which figures a sweep draws ----------------------------------------------------------------


def make_target(sweep: str) -> str:
    """The command that runs a sweep of config.yaml (and builds its report where the Makefile does)."""
    return "make run" if sweep == "cpu" else f"make {sweep}" if sweep in cl.MAKE_SWEEPS else (
        f"snakemake --cores 8 --config sweep={sweep}")


def figure_plan(sweep: dict) -> dict[str, str]:
    """Each figure of the sweep's measure (stsq.core.figure_catalog.figures_of) about a family the sweep trains
    (``Figure.families``) -> "" where this sweep's grid gives it something to show (its record's ``needs``), else one
    line saying why not and which command draws it."""
    grid, eval_factors = cells(sweep), sweep["eval_length_factors"]
    archs = set(grid["arch"])
    n_widths = grid.groupby(ex.model_keys("width", "seed"))["width"].nunique()
    with ex.reading(archs):
        paper, fcn = paper_model(), fcn_arch()
    g = Grid(archs=archs, core_tf={a for a in archs if ARCHS[a].transformer and ARCHS[a].core},
             compared={a for a in archs if ARCHS[a].transformer and not ARCHS[a].core},
             longer=any(int(f) > 1 for f in ex.eval_factors(eval_factors)),
             graded={a for a in n_widths[n_widths >= 2].index.get_level_values("arch")}, paper=paper, fcn=fcn)
    families = {ARCHS[a].family for a in archs}
    return {name: (f"{reason}; `{make_target(FIGURES[name].drawn_by)}` draws it"
                   if (reason := FIGURES[name].needs(g)) else "")
            for name in figures_of(measure_of_sweep(sweep).name, sweep.get("task", DEFAULT_TASK))
            if not FIGURES[name].families or families & set(FIGURES[name].families)}


def drawn_figures(sweep: dict) -> list[str]:
    """The figures this sweep's report holds, in reading order."""
    return [name for name, why in figure_plan(sweep).items() if not why]


# -- the drawing, in words from the style records -----------------------------------------------
COLOUR_WORDS = {"Blues": "blue", "Oranges": "orange", "Purples": "purple", "Greens": "green", "Reds": "red",
                "Greys": "grey", "YlGn": "yellow-green"}
MARKER_WORDS = {"o": "circles", "s": "squares", "^": "triangles", "D": "diamonds", "v": "down-triangles",
                "P": "pluses", "X": "crosses"}
LINE_WORDS = {"-": "solid line", "--": "dashed line", ":": "dotted line"}


def analysis_rules(sweep: dict) -> list[str]:
    """The rules of the analysis stage: the tables, the claims, the report's front page and each figure this
    sweep draws (stsq.report.pages.figure_plan)."""
    return ["aggregate", "critical", "encodings", "reach", "claims", "landing"] + [FIGURE_RULE.format(name=n)
                                                                                   for n in drawn_figures(sweep)]


def style_words(arch: str, attrs) -> str:
    """The words for an arch's style: e.g. "blue, dashed line, hollow squares"."""
    s = style_of(arch)
    words = []
    if "colour" in attrs:
        words.append(COLOUR_WORDS.get(s.colours, f"{s.colours} (colour map)"))  # a new arch's own map
    if "line" in attrs:
        words.append(LINE_WORDS.get(s.line, f"line {s.line!r}"))
    if "marker" in attrs:
        words.append(("filled " if s.filled else "hollow ") * ("fill" in attrs)
                     + MARKER_WORDS.get(s.marker, f"{s.marker!r} markers"))
    return ", ".join(words)


def drawn_archs(fig) -> list[str]:
    """The archs a drawn figure shows, as the drawing tells: each artist that draws an arch's models carries the
    arch's name as its ``gid`` (stsq.report.figures); in the order of ``ARCHS``."""
    gids = {artist.get_gid() for ax in fig.axes for artist in ax.get_children()}
    return [a for a in ARCHS if a in gids]


def arch_words(arch: str) -> str:
    """How a caption names an arch: its legend name with its key (``tf_stochastic``), or the key alone."""
    a = ARCHS[arch]
    return f"{a.legend} (``{arch}``)" if a.display else f"``{arch}``"


def style_key(name: str, archs) -> str:
    attrs = FIGURES[name].style
    if not attrs or not archs:
        return ""
    return "; ".join(f"{arch_words(a)} {style_words(a, attrs)}" for a in archs) + "."


# -- the results, from the claims table ---------------------------------------------------------
SAID_ROWS = 3  # a claim's FAIL (and NOT TESTED) rows said in a caption; the claims table has them all


def _reason(measured: str) -> str:
    """A NOT TESTED row's reason: its text, or where it also reports what it measured, the clauses that say
    why it cannot tell (a rival's "cannot tell them apart")."""
    text = measured.removeprefix("not tested: ")
    clauses = [c for c in text.split("; ") if re.search(r"rival|cannot|^one |^no |the sweep has no", c)]
    return "; ".join(clauses) if clauses else text


def _not_tested_text(r, sweep: str) -> str:
    reason = _reason(str(r.measured))
    others = [s for s in CLAIMS[r.claim].tested_by if s != sweep]
    return reason + (f" (`{make_target(others[0])}` tests it)" if others else "")


def claim_sentence(claims: pd.DataFrame, key: str, sweep: str) -> str:
    """One claim as this sweep measured it: its verdicts, then each FAIL's and NOT TESTED's words (the first
    few), or the one row's measurement where the claim is one row for the sweep."""
    rows = claims[claims["claim"] == key]
    if rows.empty:
        return ""
    c = CLAIMS[key]
    head = f"**{key}** ({c.statement}): {tally(rows)}"
    if len(rows) == 1:
        r = next(rows.itertuples())
        text = _not_tested_text(r, sweep) if r.verdict == NOT_TESTED else r.measured
        return f"{head}. {text}."
    said = []
    for verdict in (FAIL, NOT_TESTED):
        picked = rows[rows["verdict"] == verdict]
        for r in list(picked.itertuples())[:SAID_ROWS]:
            text = _not_tested_text(r, sweep) if verdict == NOT_TESTED else r.measured
            said.append(f"{verdict} {placed(r)}: {text}")
        if len(picked) > SAID_ROWS:
            said.append(f"{len(picked) - SAID_ROWS} more {verdict} in the claims table")
    passed = rows[rows["verdict"] == PASS]["value"].dropna()
    if len(passed):
        said.insert(0, f"PASS values ({c.value}) {passed.min():.3g} to {passed.max():.3g} against {c.threshold}"
                    if passed.min() != passed.max() else f"PASS value ({c.value}) {passed.min():.3g} against "
                                                         f"{c.threshold}")
    return head + "".join(f"; {s}" for s in said) + "."


def results_text(name: str, claims: pd.DataFrame, sweep: str) -> str:
    sentences = [s for s in (claim_sentence(claims, k, sweep) for k in (c.key for c in figure_claims(name))) if s]
    if not sentences:
        return ""
    return "**Measured in this sweep** (the claims table's rows):\n\n" + "\n".join(f"- {s}" for s in sentences)


def encodings_ranking(table: pd.DataFrame, position_range=None) -> str:
    """The result the encodings figure shows first, from its table (``stsq.width.tables.encoding_table``'s rows):
    at the longest N' every encoding can take, which has the lowest loss, per N; which does not learn even
    at N.  The figure's own selection (one d_e, the first q, the largest d) is the table's."""
    t = table[table["status"] == ex.OK]
    if t.empty:
        return ""
    said = []
    for N, g in t.groupby("N"):
        longest = int(g.groupby("arch")["N_eval"].max().min())  # the longest N' every drawn encoding takes
        at = g[g["N_eval"] == longest].set_index("arch")["loss_mean"].sort_values()
        order = ", ".join(f"``{a}`` {v:.2g}" for a, v in at.items())
        said.append(f"N={int(N)}, at N'={longest // int(N)}N: {order}")
    at_N = t[t["N_eval"] == t["N"]].groupby("arch")["loss_max"].min()
    never = [f"``{a}`` ({at_N[a]:.2g} at best)" for a in at_N.index if at_N[a] > cl.LEARNED_BELOW]
    text = ("**Lowest loss at the longest length every encoding takes** (mean over seeds, lowest first): "
            + "; ".join(said) + ".")
    if never:
        text += (f" Not learned even at N' = N (worst seed's loss above {cl.LEARNED_BELOW:g} at every N): "
                 + ", ".join(never) + ".")
    return text


# -- the fixed part of each caption: the drawing only --------------------------------------------




def caption(name: str, fig, claims: pd.DataFrame, sweep: str, encodings: pd.DataFrame | None = None) -> str:
    """The caption (reStructuredText) of figure ``name`` as drawn (``fig``) for a sweep with this claims
    table: first what was measured (the claims' rows, the encodings' ranking), then how it is drawn."""
    parts = []
    if name == "encodings" and encodings is not None:
        parts.append(encodings_ranking(encodings))
    parts.append(results_text(name, claims, sweep))
    parts.append(FIGURES[name].drawing())
    parts.append(style_key(name, drawn_archs(fig)))
    return _rst_safe("\n\n".join(p for p in parts if p)) + "\n"


def _rst_safe(text: str) -> str:
    # the report renders captions as Jinja templates, then reStructuredText: no template syntax, no stray
    # emphasis from a product like "N * d", no substitution from |x|, and a `command` as literal text
    text = text.replace("{{", "{ {").replace("{%", "{ %").replace(" * ", " x ").replace("|", "\\|")
    return re.sub(r"(?<![`\w])`([^`<>\n]+)`(?![`_])", r"``\1``", text)


# -- the landing page ----------------------------------------------------------------------------
def _grid_text(cells: pd.DataFrame, sweep_conf: dict) -> str:
    def values(col, g=cells):
        return ", ".join(str(v) for v in sorted(g[col].unique()))

    archs = []
    for arch, g in cells.groupby("arch", sort=False):
        width = ex.width_name(arch)
        archs.append(f"``{arch}`` ({ARCHS[arch].about}) at q {values('q', g)}, N {values('N', g)}, d "
                     f"{values('d', g)}, {width} {values('width', g)}, {values('steps', g)} steps")
    factors = ", ".join(f"{f}N" for f in ex.eval_factors(sweep_conf["eval_length_factors"]))
    return (f"Seeds {', '.join(str(s) for s in sweep_conf['seeds'])}; scored at N' = {factors}. Models:\n\n"
            + "\n".join(f"- {a}" for a in archs))


def _link(path: str, content: str, text: str) -> str:
    return (f"`{text} <javascript:app.setView({{navbarMode:'resultinfo',resultPath:'{path}',content:'{content}',"
            f"contentPath:results['{path}'].data_uri}})>`_")


def landing(sweep: str, sweep_conf: dict, cells: pd.DataFrame, claims: pd.DataFrame, plan: dict[str, str],
            provenance: dict | None = None) -> str:
    """The report's front page for one sweep: its grid, the tally, each FAIL with its reason, each NOT TESTED
    with the command that tests it, the figures it holds and those it leaves out with why, and where the
    results came from (``provenance``: the sweep's provenance.json, stsq.provenance.sidecars)."""
    root, task = f"results/{sweep}", TASKS[sweep_conf.get("task", DEFAULT_TASK)]
    paper, checks = claims[claims["kind"] != CHECK], claims[claims["kind"] == CHECK]
    lines = [
        f"Reproduction of {task.source}: the sweep ``{sweep}``. "
        + _grid_text(cells, sweep_conf), "",
        f"**Result: {tally(paper) or 'no claim'}** of the paper's claims, over their rows (a claim has a row per "
        f"(q, N, d) it reads); the pipeline's checks (bounds every correct run obeys): {tally(checks) or 'none'}. "
        f"The {_link(f'{root}/tables/claims.html', 'html', 'claims table')} has every row: what was measured, "
        "its threshold and why.", ""]
    fails = claims[claims["verdict"] == FAIL]
    if len(fails):
        lines += ["**FAIL**, and why:", ""]
        lines += [f"- ``{r.claim}`` ({CLAIMS[r.claim].statement}), {where(r)}: {r.measured}." for r in
                  fails.itertuples()]
        lines.append("")
    untested = claims[claims["verdict"] == NOT_TESTED]
    if len(untested):
        lines += ["**NOT TESTED** here, and what tests it:", ""]
        for key, g in untested.groupby("claim", sort=False):
            reasons = list(dict.fromkeys(_not_tested_text(r, sweep) for r in g.itertuples()))
            rows = f"{len(g)} row" + ("" if len(g) == 1 else "s")
            lines.append(f"- ``{key}`` ({CLAIMS[key].statement}), {rows}: " + "; ".join(reasons) + ".")
        lines.append("")
    drawn = [n for n in plan if not plan[n]]
    lines += ["**The figures**, in reading order (each opens with what it measured):", ""]
    lines += [f"{k}. {_link(f'{root}/figures/{n}.png', 'img', n)}: {FIGURES[n].shows}" for k, n in enumerate(drawn, 1)]
    left = [n for n in plan if plan[n]]
    if left:
        lines += ["", "Not drawn for this sweep:", ""]
        lines += [f"- {n}: {plan[n]}." for n in left]
    if provenance is not None:
        lines += ["", provenance_text(provenance, f"{root}/provenance.json")]
    if task.explained:
        lines += ["", task.explained]
    return _rst_safe("\n".join(lines)) + "\n"


def width_landing(sweep: str, sweep_conf: dict, claims: pd.DataFrame, tables: dict, provenance: dict | None) -> str:
    """The width measure's front page (stsq.core.measures: ``landing``): its grid, claims and figures."""
    return landing(sweep, sweep_conf, cells(sweep_conf), claims, figure_plan(sweep_conf), provenance=provenance)


def provenance_text(summary: dict, path: str) -> str:
    """The front page's lines on where the results came from: the code and machines of the trained models, the
    evaluations and the oracle, and a warning naming the cells where they mix code versions."""
    from stsq.provenance.sidecars import brief
    mixed = (summary.get("rows_from") or {}).get("mixed") or []
    head = f"**Provenance** (``{path}``; each result has its own ``<name>.provenance.json``):"
    warning = ["", f"**These results mix code versions** ({', '.join(mixed)}): rerun without ``--rerun-triggers`` "
               "or ``--touch`` to make them one (docs/reproducibility.md)."] if mixed else []
    return "\n".join([head, "", *(f"- {line}" for line in brief(summary)), *warning])
