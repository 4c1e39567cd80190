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
