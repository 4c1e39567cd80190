"""Legibility: every figure's text shows at least TEXT_PX tall (digit height) in the report, whose page
scales a PNG larger than its box down; one legend below the panels; files written atomically, byte-identical
for the same table.  Apart from the drawings (stsq.report.figures), which call only the legend helpers."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import matplotlib
import matplotlib.font_manager
import matplotlib.text

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from stsq.core.files import atomic_write_bytes  # noqa: E402


def _legend_below(fig, axes):
    """One legend for the figure, below the panels (so that it does not widen the figure, which the report
    scales to its width), from every panel's drawn artists (no duplicates), in as many columns as fit."""
    handles = {}
    for ax in np.ravel(axes):
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if handles:
        fig.stsq_legend = handles
        _place_legend(fig)


def _place_legend(fig) -> None:
    """The figure's legend below its panels, in as many columns as its width holds (placed anew as the
    width changes: a legend's columns are fixed when it is made)."""
    handles = getattr(fig, "stsq_legend", None)
    if not handles:
        return
    for old in list(fig.legends):
        old.remove()
    size = matplotlib.font_manager.FontProperties(size=matplotlib.rcParams["legend.fontsize"]).get_size_in_points()
    entry_in = (max(len(k) for k in handles) * 0.5 + 3.0) * size / 72
    ncol = int(max(1, min(len(handles), fig.get_size_inches()[0] // entry_in)))
    fig.legend(handles.values(), handles.keys(), loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=ncol,
               frameon=False)


# The report shows a figure within a box of at most this many px (in a 1400 x 1000 window, beside its caption,
# whose column widens with the caption: measured 812 to 1074 px wide and about 650 px tall by
# tests/test_report.py's screenshots): a larger PNG is scaled down, and its text with it.  Every text is
# sized so that its capital and digit height, as displayed, is at least TEXT_PX.
REPORT_WIDTH_PX, REPORT_HEIGHT_PX = 800, 640


TEXT_PX = 11.5


DPI = 130


def cap_height(fontsize_pt: float) -> float:
    """The height (pt) of a digit or capital of the figures' font at this size (its em)."""
    return _cap_height(fontsize_pt, matplotlib.font_manager.findfont(matplotlib.font_manager.FontProperties()))


@cache
def _cap_height(fontsize_pt: float, font_file: str) -> float:
    """cap_height, once per size and font file: a figure asks for it for each of its texts at each round of
    make_legible (hundreds of glyph outlines measured anew, seconds per figure, otherwise)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath

    return TextPath((0, 0), "0123456789EH", size=fontsize_pt, prop=FontProperties(fname=font_file)).get_extents().height


def _scales(fig) -> tuple[float, float]:
    """How much the report scales this figure's PNG to fit its box's width, and its height (< 1: scaled down)."""
    box = fig.get_tightbbox(fig.canvas.get_renderer())
    return REPORT_WIDTH_PX / (box.width * DPI), REPORT_HEIGHT_PX / (box.height * DPI)


def texts(fig):
    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]


def _wrap_titles(fig) -> None:
    """Titles wrapped to the width they head (the suptitle: the figure's), so that none widens the figure."""
    import textwrap

    heads = [(fig._suptitle, fig.get_size_inches()[0])] if fig._suptitle is not None else []
    heads += [(ax.title, ax.get_position().width * fig.get_size_inches()[0]) for ax in fig.axes]
    for text, inches in heads:
        if not hasattr(text, "stsq_unwrapped"):
            text.stsq_unwrapped = text.get_text()  # each round wraps the title as written
        chars = max(16, int(inches * 72 / (0.5 * text.get_fontsize())))
        text.set_text("\n".join(textwrap.fill(line, chars) for line in text.stsq_unwrapped.split("\n")))


def make_legible(fig, rounds: int = 10) -> None:
    """Shrink the figure around its text (fonts, markers and lines keep their size in points, the panels
    shrink) until the smallest text shows at least TEXT_PX tall (digit height) in the report, which scales
    a PNG larger than its box down; each round shrinks the dimension that binds, wraps the titles to their
    panels and lays the legend out anew."""
    for _ in range(rounds):
        _wrap_titles(fig)
        fig.tight_layout()
        by_width, by_height = _scales(fig)  # one layout pass for both
        shown = min(cap_height(t.get_fontsize()) for t in texts(fig)) / 72 * DPI * min(1.0, by_width, by_height)
        if shown >= TEXT_PX:
            return
        width, height = fig.get_size_inches()
        shrink = max(0.75, shown / TEXT_PX * 0.98)
        fig.set_size_inches(width * (shrink if by_width <= by_height else 1),
                            height * (shrink if by_height < by_width else 1))
        _place_legend(fig)
    _wrap_titles(fig)
    fig.tight_layout()


def save_figure(fig, paths) -> None:
    """Write the figure to every path (format from the suffix), atomically; close it."""
    import io
    make_legible(fig)
    for p in paths:
        buf = io.BytesIO()
        fig.savefig(buf, format=Path(p).suffix.lstrip("."), dpi=DPI, metadata=_fixed_metadata(p),
                    bbox_inches="tight")
        atomic_write_bytes(p, buf.getvalue())
    plt.close(fig)


def _fixed_metadata(path):
    # No creation dates: the same table gives byte-identical files.
    suffix = Path(path).suffix
    if suffix == ".pdf":
        return {"CreationDate": None, "Producer": None}
    if suffix == ".png":
        return {"Software": None}
    return None
