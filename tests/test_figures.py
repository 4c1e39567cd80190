"""The figures say what they draw: every legend entry is a drawn artist with data, on a synthetic table of
the paper's picture (every arch, three N and three d, two FCN budgets, curves at unseen lengths)."""

from __future__ import annotations

import matplotlib.collections
import matplotlib.colors
import matplotlib.lines
import numpy as np
import pandas as pd
import pytest
from report_checks import has_data
from stsq.core import experiment as ex
from stsq.core import figure_catalog as catalog
from stsq.report.figures import FIGURES
from test_claims import oracle, table


@pytest.fixture(scope="module")
def synthetic():
    t = table()
    # a training curve for every model (split test at N), as the pipeline writes one
    ev = t[(t["split"] == "eval") & (t["metric"] == ex.LOSS) & (t["N_eval"] == t["N"])]
    curves = [ev.assign(split="test", step=s, value=ev["value"] * 2000 / s) for s in (500, 1000, 2000)]
    curves = [c[c["arch"] != ex.paper_model()] for c in curves]  # the stochastic model has its own above
    return pd.concat([t, *curves], ignore_index=True), oracle(value=0.02)


def _legend_texts(fig):
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    return [t.get_text() for lg in legends for t in lg.get_texts()]


@pytest.mark.parametrize("name", catalog.figures_of("width"))
def test_every_legend_entry_is_a_drawn_artist(synthetic, name):
    fig = FIGURES[name](*synthetic)
    labels = _legend_texts(fig)
    assert labels, f"{name}: no legend"
    artists = [a for ax in fig.axes for a in ax.get_children() if not str(a.get_label()).startswith("_")]
    for label in labels:
        drawn = [a for a in artists if a.get_label() == label and has_data(a)]
        assert drawn, f"{name}: legend entry {label!r} has no drawn artist"


def test_the_scaling_figure_marks_censored_widths_as_open_markers_with_arrows(synthetic):
    t, o = synthetic
    t = t[~((t["arch"] == ex.fcn_arch()) & (t["N"] == 16) & (t["d"] == 16))].copy()
    starved = (t["arch"] == ex.fcn_arch()) & (t["N"] == 16) & (t["d"] == 8)
    t.loc[starved, "value"] = 0.9  # no width reaches the target: censored above
    fig = FIGURES["scaling"](t, o)
    ax = fig.axes[0]
    hollow = [ln for ln in ax.lines if ln.get_marker() not in (None, "None", "")
              and np.allclose(matplotlib.colors.to_rgb(ln.get_markerfacecolor()), 1.0)]
    assert hollow, "no open marker for a censored width"
    assert any(getattr(a, "arrow_patch", None) is not None for a in ax.texts), "no arrow on the censored width"


def test_the_mechanism_figure_leaves_out_a_metric_flat_at_one_and_says_so(synthetic):
    t, o = synthetic
    flat = t[(t["metric"] == "cos_V_ground_truth")].assign(metric="attn_evenness_y", value=1.0)
    fig = FIGURES["mechanism"](pd.concat([t, flat]), o)
    assert "evenness inside y" in fig._suptitle.get_text()
    assert not any("evenness" in ax.get_title() for ax in fig.axes)


def test_the_figures_theme_is_seaborns_whitegrid_paper_theme_without_importing_seaborn():
    """figures.mplstyle, the colour codes and ``shades_of`` give what seaborn's set_theme and color_palette give:
    a figure job draws in seaborn's theme and does not import it (or scipy)."""
    import os
    import subprocess
    import sys

    import matplotlib as mpl
    from stsq.report import figures
    probe = ("import sys; import stsq.report.figures; "
             "print(' '.join(m for m in ('seaborn', 'scipy') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONPATH": str(figures.Path(figures.__file__).parents[2])})
    assert r.stdout.strip() == "", f"a figure job imports {r.stdout.strip()}"
    ours = {k: mpl.rcParams[k] for k in mpl.rcParams}
    codes = {c: mpl.colors.to_rgb(c) for c in "bgrmyck"}
    names = sorted({s.colours for s in ex.STYLES.values()} | {"viridis"})
    ours_palettes = {(n, k): figures.shades_of(n, k) for n in names for k in (1, 4, 7)}
    import seaborn as sns
    try:
        sns.set_theme(context="paper", style="whitegrid", font_scale=1.5)
        theirs = {k: mpl.rcParams[k] for k in mpl.rcParams}
        for key in set(ours) | set(theirs):
            a, b = ours.get(key), theirs.get(key)
            if key == "axes.prop_cycle":
                a, b = ([mpl.colors.to_rgb(c) for c in x.by_key()["color"]] for x in (a, b))
            if key != "image.cmap":  # seaborn's own map, which no figure draws with
                assert a == b, (key, a, b)
        assert codes == {c: mpl.colors.to_rgb(c) for c in "bgrmyck"}
        for (n, k), p in ours_palettes.items():
            assert p == list(sns.color_palette(n, k)), (n, k)
    finally:
        mpl.style.use(figures.Path(figures.__file__).with_name("figures.mplstyle"))
        mpl.rcParams["image.cmap"] = ours["image.cmap"]
