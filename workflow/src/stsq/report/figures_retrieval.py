"""The figure of a samples sweep: samples to threshold against N, per family (docs/retrieval.md).

One panel per (q, mode) of the table: at q = 1 the three families, at q = 2 the transformer with one and with two
heads.  A marker is the seeds' median, its bar the seeds' range; a censored point (a seed stopped at the cap) is an
open marker at the cap with an arrow up: the samples needed are more than that.  The dotted line is growth like N
through the FFN's first point, for the eye.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

from stsq.claims.retrieval import AT  # noqa: E402
from stsq.core.experiment import ARCHS, style_of  # noqa: E402
from stsq.report.legibility import _legend_below  # noqa: E402
from stsq.samples.table import curve  # noqa: E402

COLOURS = {"Blues": "#1f5fa8", "Greens": "#2a8a3e", "Oranges": "#d2691e"}
HEAD_SHADES = {1: "#9ab6dd", 2: "#1f5fa8"}


def _label(arch: str, heads: int, q: int) -> str:
    name = ARCHS[arch].legend
    return f"{name}, {heads} head{'s' if heads > 1 else ''}" if q > 1 else name


def samples_figure(table: pd.DataFrame, oracle=None, position_range=None, threshold: float = AT):
    """The samples measure's figure (stsq.core.figure_catalog: ``samples``): one panel per (q, mode), at
    ``threshold``; a table without it is drawn at its nearest threshold, saying so, and a table without rows is a
    panel that says it has none."""
    present = sorted(table["threshold"].unique())
    if not present:
        fig, ax = plt.subplots(figsize=(6, 3))
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no samples to draw: the table has no rows", ha="center", va="center")
        return fig
    asked = threshold
    if threshold not in present:  # the claims' threshold is missing (their rows say NOT TESTED): the nearest one
        threshold = min(present, key=lambda t: (abs(t - threshold), t))
    at = table[table["threshold"] == threshold]
    panels = list(at.groupby(["q", "mode"], sort=True).groups)
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.6), squeeze=False, sharey=True)
    for ax, (q, mode) in zip(axes[0], panels):
        part = at[(at["q"] == q) & (at["mode"] == mode)]
        for (arch, heads), g in part.groupby(["arch", "heads"], sort=False):
            st = style_of(arch)
            colour = HEAD_SHADES.get(heads, "k") if q > 1 else COLOURS.get(st.colours, "k")
            c = curve(g)
            full = c[c["censored"] == 0]
            ax.errorbar(full["N"], full["median"], yerr=[full["median"] - full["low"], full["high"] - full["median"]],
                        color=colour, marker=st.marker, linestyle=st.line, capsize=3,
                        label=_label(arch, heads, q), gid=arch)
            cens = c[c["censored"] > 0]
            if len(cens):
                ax.plot(cens["N"], cens["high"], linestyle="none", marker=st.marker, markerfacecolor="white",
                        color=colour, gid=arch)
                for n, cap in zip(cens["N"], cens["high"]):
                    ax.annotate("", xy=(n, cap * 1.5), xytext=(n, cap),
                                arrowprops={"arrowstyle": "->", "color": colour})

            if arch == "qstr_ffn" and len(c):
                n0, s0 = c["N"].iloc[0], c["median"].iloc[0]
                ax.plot(c["N"], s0 * c["N"] / n0, ":", color="grey", linewidth=1, label="grows like N")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xticks(sorted(part["N"].unique()), [str(n) for n in sorted(part["N"].unique())])
        ax.set_xlabel("N")
        ax.set_title(f"q = {q}, {mode}")
        ax.grid(True, which="major", alpha=0.3)
    # one y range for the panels: every seed's samples, and room above a censored point for its arrow
    axes[0][0].set_ylim(at["samples"].min() / 1.3, at["samples"].max() * (2.0 if at["censored"].any() else 1.3))
    axes[0][0].set_ylabel(f"samples to loss < {threshold:g}"
                          + ("" if threshold == asked else f" ({asked:g}, the one asked for, is not in this table)"))
    if at["censored"].any():  # what an open marker means, once in the legend
        axes[0][0].plot([], [], linestyle="none", marker="o", markerfacecolor="white", color="grey",
                        label="stopped at the cap (needs more)")
    _legend_below(fig, axes)
    return fig
