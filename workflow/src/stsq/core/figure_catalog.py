"""The figures: one record each, in reading order.

A figure's record holds its name, what it shows, the function that draws it (``"stsq.report.figures:<function>"``, so
that this catalog imports no plotting library), which style attributes of each drawn arch the caption names, the
sweep that draws it where another sweep cannot, what a sweep must have for it to be drawn (and the reason when it
has not), and the fixed text of its caption: how it is drawn.  The claims its caption reports name it
(``Claim.figures``; stsq.claims.judge.figure_claims).

Rule fig_<name> writes figures/<name>.{pdf,png} and its caption report/<name>.rst; `python -m stsq figure <name>`
draws it.  Adding a figure is one record here and one function in stsq.report.figures (docs/extending.md).  No torch, no
matplotlib: the Snakefile reads this catalog to build the DAG.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from stsq.core import claim_records as cl
from stsq.core.claim_records import EPSILON

FIGURE_FORMATS = ("pdf", "png")
FIGURE_RULE = "fig_{name}"  # the rule that draws figure {name}
FLOOR_REPORT = 1e-4  # a loss below this is not drawn on a log axis (the panel's title says so)
# the archs of index lookup and bounded Dyck (the figure "needs" draws them)
TOKEN_ARCHS = frozenset(("lookup_tf", "lookup_gru", "dyck_tf", "dyck_gru"))


@dataclass(frozen=True)
class Grid:
    """What a sweep's grid holds, as the figures' needs read it (stsq.report.pages.figure_plan builds it)."""

    archs: set  # every arch of the sweep
    core_tf: set  # its transformers of the main figures
    compared: set  # its transformers compared only (the encodings figure)
    longer: bool  # whether it scores an unseen length N' > N
    graded: set  # the archs with two widths or more at one (q, N, d): a critical width
    paper: str  # the arch read as the paper's model
    fcn: str  # the arch read as the FCN


@dataclass(frozen=True)
class Figure:
    name: str
    shows: str  # what it shows, in one line (the report's list of figures)
    draw: str  # "stsq.report.figures:<function>": fn(table, oracle, position_range=None) -> a matplotlib figure
    style: tuple[str, ...]  # what its caption says of each drawn arch's style: colour, line, marker, fill
    drawn_by: str  # the sweep of config.yaml that draws it (named where a sweep cannot)
    needs: Callable[[Grid], str]  # "" where the sweep's grid has something for it to show, else why not
    drawing: Callable[[], str]  # the caption's fixed part: how it is drawn
    over: tuple[str, ...] = ()  # the axes beyond the shape it draws itself (any other that varies: it cannot draw)
    measure: str = "width"  # the measure whose sweeps draw it (stsq.core.measures.MEASURES): from that measure's tables
    # "module:function": fn(name, fig, claims, sweep, encodings) -> its caption, where not stsq.report.pages.caption's
    caption: str = ""
    tasks: tuple[str, ...] = ()  # the tasks whose sweeps draw it (stsq.core.tasks); (): every task of its measure
    # the model families it is about (stsq.core.families): a sweep with none of them has nothing of it to draw, not
    # even a reason (an index-lookup sweep and the FCN's floor); (): any family
    families: tuple[str, ...] = ()


def _oracle_words():
    return (f"The black dashed line is the oracle (the best loss of the ground-truth family W_pp = c I, "
        f"V = v [I_d, 0]), drawn where it is above {FLOOR_REPORT:g}; where it is below, the panel's title says so.")


STS_FAMILIES = ("transformer", "fcn")  # the figures of STS_q's models: the floor, the oracle, the positions

FIGURES: dict[str, Figure] = {f.name: f for f in [
    Figure("training", "normalized test loss vs training step",
           draw="stsq.report.figures:training_figure",
           style=("colour", "line"), drawn_by="cpu",
           needs=lambda g: "" if g.archs - g.compared else "no model of the main figures (only compared encodings)",
           drawing=lambda: (
        "Normalized loss on the fixed in-distribution evaluation set against the training step, one panel per "
        "(q, N), at the sweep's largest d (said in the title), log scale. One line per arch and width (d_e for a "
        "transformer, m for the FCN), at most four widths of an arch per panel (its narrowest, its widest and two "
        "between): colour and line by arch, shade by width (darker = wider); within an arch wider lines are drawn "
        "first and thicker, so a narrower line lying on one leaves its edges visible. Line: mean over seeds; band: "
        "min to max over seeds. "
        + _oracle_words())),
    Figure("separation", "final loss vs width, with the FCN's width floor",
           draw="stsq.report.figures:separation_figure",
           style=("colour", "line", "marker", "fill"), drawn_by="cpu", families=STS_FAMILIES,
           needs=lambda g: "" if g.fcn in g.archs else f"the sweep has no {g.fcn}, the model whose exact width floor "
        "the figure draws",
           drawing=lambda: (
        "Final normalized loss at N' = N against model width (FCN: hidden width m; transformer: d + d_e), "
        "log-log, one panel per (q, d) row and N column, each arch at its largest training budget; mean over "
        "seeds, band = seed range (an arch with one width is one point); a panel with no model of the sweep says "
        "so. The solid black line is the exact FCN "
        "width floor: no FCN of width m can score below it; it reaches 0 at m = N d, the dotted vertical line, "
        f"and is drawn where it is above {FLOOR_REPORT:g}. The loss axis reaches down to the lowest loss drawn.")),
    Figure("length", "loss at unseen lengths N' = N x factor, stochastic vs fixed PE",
           draw="stsq.report.figures:length_figure",
           style=("colour", "line", "marker", "fill"), drawn_by="cpu", families=STS_FAMILIES,
           needs=lambda g: "" if g.core_tf and g.longer else (
        "the sweep has no transformer" if not g.core_tf else "the sweep scores only N' = N, no unseen length"),
           drawing=lambda: (
        "One column per training length N, at the sweep's largest d. Top row, end of training: loss against N'/N "
        "(log-log), one line per transformer and d_e, shade by d_e (darker = wider), each arch drawn a little to "
        "the side of the next so that coinciding points stay visible. Black crosses (markers only): the largest "
        "d_e stochastic model's projection onto the ground-truth family, scored at N'. " + _oracle_words()
        + " Bottom row, over training: the loss at the longest N' (thick line, the arch's markers) and at N (thin "
        "dotted line) of each arch's largest d_e at every checkpoint, mean over seeds.")),
    Figure("mechanism", "attention on y, its evenness, and the ground-truth cosines over training",
           draw="stsq.report.figures:mechanism_figure",
           style=("colour", "line"), drawn_by="cpu", families=STS_FAMILIES,
           needs=lambda g: "" if g.core_tf else "the sweep has no transformer",
           drawing=lambda: (
        "Over training, on the fixed in-distribution evaluation set, at the sweep's largest d, one panel per "
        "metric and (q, N): the attention mass on y (linear; 1 = all attention on the selected tokens) and, as "
        "their distance from 1 on a log scale, the evenness inside y (entropy over log q) and the cosines of W_pp "
        "with I and of V with [I_d, 0]; 1 - x is drawn at 1e-6 where below. A metric equal to 1 throughout is not "
        "drawn; the title names it. Lines as in the training figure (at most four widths of an arch per panel, wider "
        "drawn first and thicker); mean over seeds, band = seed range.")),
    Figure("scaling", "the width needed to reach the target loss, against N d (FCN) and q log N (transformer)",
           draw="stsq.report.figures:scaling_figure",
           style=("marker",), drawn_by="cpu", families=STS_FAMILIES,
           needs=lambda g: "" if g.graded & {g.paper, g.fcn} else (
        f"neither {g.paper} nor {g.fcn} has two widths at one (q, N, d): no critical width"),
           drawing=lambda: (
        f"The critical width (tables/critical.csv): per model family and seed, the width at which the final loss "
        f"at N' = N crosses {EPSILON:g}, interpolated log-log between the two grid widths that bracket it; each "
        "point the geometric mean over seeds, its vertical bar the seed range. Filled markers are measured; an open "
        "marker with an arrow is censored (arrow up: above the largest width; down: the smallest already reached "
        "it). Colour = d; marker by arch (a second budget or q of the same arch takes the next marker, said in the "
        f"legend). Left: the width needed against N d, with the exact floor's m*({EPSILON:g}) at each (N, d) (black "
        "bars) and m = N d (grey dotted). Right, where the sweep has the paper's transformer: its d_e_eps against "
        "q log N.")),
    Figure("needs", "the width each family needs against N (index lookup, bounded Dyck)",
           draw="stsq.report.figures:needs_figure", style=("colour", "marker", "line"), drawn_by="lookup",
           tasks=("lookup", "dyck"),
           needs=lambda g: "" if g.graded & TOKEN_ARCHS else "the sweep has no model of index lookup or bounded Dyck "
           "with two widths at one N",
           drawing=lambda: (
        f"The width m each family needs (tables/critical.csv): per seed, the width at which the normalized "
        f"cross-entropy at N' = N crosses {EPSILON:g} (a tenth of the chance level's), interpolated log-log between "
        "the two grid widths that bracket it; each point the geometric mean over seeds, its bar the seed range, "
        "against N, log-log. An open marker with an arrow is a bound (arrow up: some seed reached the target at no "
        "width of the grid).")),
    Figure("encodings", "loss against N'/N for every positional encoding at one d_e, the positions' range L marked",
           draw="stsq.report.figures:encodings_figure",
           style=("colour", "line", "marker", "fill"), drawn_by="encodings", families=STS_FAMILIES,
           needs=lambda g: "" if g.compared and g.longer else (
        "the sweep has no positional encoding beyond the paper's stochastic and fixed ones" if not g.compared
        else "the sweep scores only N' = N, no unseen length"),
           drawing=lambda: (
        "Loss at the end of training against N'/N (log-log) for every positional encoding at one d_e (the width "
        "they share), the sweep's first q and largest d, one column per N; line = mean over seeds, band = seed "
        "range; each arch drawn a little to the side of the next so that coinciding lines stay visible. "
        + _oracle_words() + " Where the sweep has randomized positions, the dotted vertical line marks L / N, "
        "the range they are drawn from; beyond it such a model has no position and no point is drawn.")),
    Figure("reach", "the longest N'/N within the bound, against d_e and along training (stochastic PE)",
           draw="stsq.report.figures:reach_figure",
           style=(), drawn_by="cpu", families=STS_FAMILIES,
           needs=lambda g: "" if g.paper in g.archs and g.longer else (
        f"the sweep has no {g.paper}" if g.paper not in g.archs
        else "the sweep scores only N' = N, no unseen length"),
           drawing=lambda: (
        "The reach of a model is the longest N' such that its loss at every scored N'' with N < N'' <= N' is "
        f"within the oracle at N'' + {cl.GENERALIZES_WITHIN:g}, one bound for every d_e of a (q, N): the oracle of "
        "its widest d_e. Left: the worst seed's reach of the final models against d_e, one line per (q, N, d), "
        "colour by N, marker by d, the bar spanning the seeds; right: the same at the largest d_e against the "
        "training step. An open marker with an upward arrow is a lower bound (within the bound at the longest N' "
        "scored); a reach of 1 means no unseen length was within the bound. Each (q, N, d) is drawn slightly to "
        "the side of the next. Numbers: tables/reach.csv.")),
    # the samples measure's (docs/retrieval.md): its table's samples to threshold, its captions from its claims
    Figure("samples", "samples to threshold against N, per family",
           draw="stsq.report.figures_retrieval:samples_figure", style=(), drawn_by="qstr", needs=lambda g: "",
           drawing=lambda: "", measure="samples", caption="stsq.report.retrieval:figure_caption"),
    # a new figure: one record here and its function in stsq.report.figures (docs/extending.md)
]}


def figures_of(measure: str, task: str | None = None) -> list[str]:
    """The figures a sweep of ``measure`` draws from (``Figure.measure``), in reading order; given its ``task``, only
    those drawn for it (``Figure.tasks``)."""
    return [name for name, f in FIGURES.items() if f.measure == measure and (task is None or not f.tasks
                                                                             or task in f.tasks)]
