"""What a reviewer's eye checks in a figure, as functions the report tests share: every legend entry is
drawn and not fully covered by another artist, no figure is empty, the caption's style words are the
drawn artists' style, and the text the report displays is tall enough."""

from __future__ import annotations

import json

import matplotlib
import matplotlib.collections
import matplotlib.colors
import matplotlib.lines
import matplotlib.pyplot as plt
import numpy as np
import pytest
from browser import page_height, view, with_view
from stsq.core import experiment as ex
from stsq.core.figure_catalog import FIGURES as CATALOG
from stsq.report.figures import FIGURES
from stsq.report.legibility import DPI, TEXT_PX, cap_height, make_legible, texts
from stsq.report.pages import arch_words, drawn_archs, style_words


def legend_labels(fig) -> list[str]:
    legends = [*fig.legends, *[ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]]
    return [t.get_text() for lg in legends for t in lg.get_texts()]


def has_data(artist) -> bool:
    if isinstance(artist, matplotlib.lines.Line2D):
        return len(artist.get_xdata()) > 0
    if isinstance(artist, matplotlib.collections.Collection):
        return len(artist.get_offsets()) > 0 or len(artist.get_paths()) > 0
    return True


def artists_of(fig, label):
    return [a for ax in fig.axes for a in ax.get_children() if a.get_label() == label and has_data(a)]


def _pixels(fig, dpi):
    fig.set_dpi(dpi)
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba()).copy()


def covered_entries(fig, dpi=60) -> list[str]:
    """The legend entries whose artists, hidden, leave the figure's pixels unchanged: not drawn, off the axes,
    or fully covered by what is drawn over them."""
    base = _pixels(fig, dpi)
    covered = []
    for label in legend_labels(fig):
        arts = artists_of(fig, label)
        for a in arts:
            a.set_visible(False)
        if not arts or np.array_equal(_pixels(fig, dpi), base):
            covered.append(label)
        for a in arts:
            a.set_visible(True)
    return covered


def empty_panels(fig) -> list[str]:
    """Panels (visible axes) with no data drawn."""
    out = []
    for ax in fig.axes:
        if not ax.axison:
            continue
        data = [a for a in [*ax.lines, *ax.collections] if has_data(a) and a.get_visible()]
        if not data:
            out.append(ax.get_title() or "untitled panel")
    return out


def is_empty(fig) -> bool:
    return not any(ax.axison for ax in fig.axes)


def _in_map(colour, cmap: str, tol: float = 0.03) -> bool:
    """Whether a drawn colour is one of the colour map's shades (the arch's ``Style.colours``)."""
    rgb = np.array(matplotlib.colors.to_rgb(colour))
    return bool(np.min(np.linalg.norm(matplotlib.colormaps[cmap](np.linspace(0, 1, 256))[:, :3] - rgb, axis=1)) < tol)


def _filled(line) -> bool:
    face = line.get_markerfacecolor()
    return not (isinstance(face, str) and face.lower() == "none") and matplotlib.colors.to_rgba(face)[3] > 0 and \
        not np.allclose(matplotlib.colors.to_rgb(face), 1.0)


def model_lines(fig, arch) -> list:
    """The lines a figure draws for one of the arch's models (its ``gid``), each in the legend (not the derived
    lines, e.g. "... at N")."""
    labels = [lab for lab in dict.fromkeys(legend_labels(fig)) if " at " not in lab]
    return [a for lab in labels for a in artists_of(fig, lab)
            if isinstance(a, matplotlib.lines.Line2D) and a.get_gid() == arch]


def style_mismatches(name, fig, caption_text) -> list[str]:
    """Where the caption's words for an arch's style and the drawn artists disagree."""
    attrs = CATALOG[name].style
    out = []
    for arch in drawn_archs(fig):
        if not attrs:
            continue
        style = ex.style_of(arch)
        words = style_words(arch, attrs)
        if f"{arch_words(arch)} {words}" not in caption_text:
            out.append(f"{arch}: the caption does not say {words!r}")
        lines = model_lines(fig, arch)
        if name == "scaling":  # a second budget or q takes the next marker: the first entry is the arch's own
            lines = lines[:1]
        if not lines:
            out.append(f"{arch}: drawn (in the legend) but no line of its models found")
        for ln in lines:
            what = f"{arch} ({ln.get_label()})"
            if "line" in attrs and len(ln.get_xdata()) > 1 and ln.get_linestyle() not in ("None", "none"):
                if ln.get_linestyle() != style.line:
                    out.append(f"{what}: drawn {ln.get_linestyle()!r}, said {style.line!r}")
            if "marker" in attrs and ln.get_marker() not in (None, "None", "none", ""):
                if ln.get_marker() != style.marker:
                    out.append(f"{what}: marker {ln.get_marker()!r}, said {style.marker!r}")
                if "fill" in attrs and _filled(ln) != style.filled:
                    out.append(f"{what}: drawn {'filled' if _filled(ln) else 'hollow'}, said otherwise")
            if "colour" in attrs and not _in_map(ln.get_color(), style.colours):
                out.append(f"{what}: colour {ln.get_color()} is not a shade of {style.colours}, said")
    return out


def smallest_text_px(fig, scale: float) -> float:
    """The smallest digit/capital height (px) of the figure's text as displayed at ``scale`` (displayed
    width / PNG width)."""
    return min(cap_height(t.get_fontsize()) for t in texts(fig)) / 72 * DPI * scale


def tick_and_legend_px(fig, scale: float) -> tuple[float, float]:
    ticks = [t for ax in fig.axes for t in [*ax.get_xticklabels(), *ax.get_yticklabels()] if t.get_text()]
    legend = [t for lg in [*fig.legends, *[ax.get_legend() for ax in fig.axes if ax.get_legend()]] if lg
              for t in lg.get_texts()]

    def px(ts):
        return min(cap_height(t.get_fontsize()) for t in ts) / 72 * DPI * scale if ts else float("nan")

    return px(ticks), px(legend)


PLANS = {  # the figures each sweep of config.yaml leaves out of its report
    "cpu": {"encodings"},
    "encodings": {"separation", "scaling"},
    "budget": {"length", "mechanism", "encodings", "reach"},
    "separation": {"length", "encodings", "reach"},
    "paper": set(),
}


def report_views(report_html, out_dir, figures) -> dict:
    """Each figure of a report opened in Chromium at 1400 x 1000: its displayed / natural width; screenshots
    of the front page and every figure under out_dir."""
    root = report_html.parent.name
    views = {}
    for name in ["landing", *figures]:
        path = "" if name == "landing" else f"results/{root}/figures/{name}.png"
        views[name] = view(with_view(report_html, out_dir / f"{name}.html", path), out_dir / f"{name}.png")
    return views


def check_displayed_text(work, sweep, figures, out_dir):
    """The displayed height of every figure's tick and legend text, measured: the browser's scale of the PNG
    times the height of the figure's smallest text; the claims table's height at the report's width; and that
    the front page and every figure open on their top, inside the window."""
    from stsq.width.tables import read_metrics_table, read_oracle_table

    tables = work / "results" / sweep / "tables"
    table, oracle = read_metrics_table(tables / "metrics.csv"), read_oracle_table(tables / "oracle.csv")
    views = report_views(work / "results" / sweep / "report.html", out_dir, figures)
    heights = {}
    for name in figures:
        (shown, natural, *_), = views[name]["images"]
        fig = FIGURES[name](table, oracle, position_range=64)
        make_legible(fig)
        heights[name] = tick_and_legend_px(fig, shown / natural)
        plt.close(fig)
    claims_px = page_height(tables / "claims.html", 965)
    (out_dir / "measured.json").write_text(json.dumps({"text_px": heights, "claims_height_px": claims_px}, indent=1))
    print(f"\n[measured] {sweep} report at 1400 x 1000: (tick, legend) digit heights in px {heights}; the claims "
          f"table {claims_px} px tall; screenshots in {out_dir}")
    for name, (tick, legend) in heights.items():
        assert tick >= TEXT_PX - 0.5 and (legend != legend or legend >= TEXT_PX - 0.5), (name, tick, legend)
    assert claims_px < 4000
    # every page opens on its top: the front page (taller than the window) and each figure start inside the
    # window, not above the scrollbar's reach (workflow/report/style.css)
    assert views["landing"]["tops"], "the front page's text was not found"
    for name, v in views.items():
        assert min(v["tops"], default=0) >= 0, (name, v["tops"])


needs_chromium = pytest.mark.usefixtures("chromium_browser")  # installed where it can be (tests/conftest.py)


def run_figure_problems(work, sweep, name, position_range) -> list[str]:
    """A figure of a run's report drawn again from its tables as its rule draws it, and what a reviewer would
    object to: an empty figure or panel, a legend entry not seen, a style its caption does not say."""
    from stsq.width.tables import read_metrics_table, read_oracle_table

    tables = work / "results" / sweep / "tables"
    fig = FIGURES[name](read_metrics_table(tables / "metrics.csv"), read_oracle_table(tables / "oracle.csv"),
                        position_range=position_range)
    make_legible(fig)
    caption = (work / "results" / sweep / "report" / f"{name}.rst").read_text()
    try:
        return ((["the figure is empty"] if is_empty(fig) else []) + [f"empty panel {p}" for p in empty_panels(fig)]
                + [f"not seen: {e}" for e in covered_entries(fig)] + style_mismatches(name, fig, caption))
    finally:
        plt.close(fig)
