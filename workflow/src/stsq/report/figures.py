"""The figures, drawn from the tidy metrics table and the oracle table (matplotlib in seaborn's theme; PDF and PNG).

Every line is the mean over seeds and its band spans the seeds (min to max).  A line's colour is its
arch, its shade its width (darker = wider), so every legend entry is one model; lines are drawn widest
first, so where two coincide both still show.  Figures of one training run (training, length,
mechanism) show the sweep's largest d, said in the title; the separation and scaling figures show every d.
A legend lists only what is drawn (tests/test_figures.py checks it).  Every artist that draws an arch's models
carries the arch's name as its ``gid``: the caption reads which archs a figure drew from them (stsq.report.pages).
"""

from __future__ import annotations

import functools
import importlib
import math
from collections.abc import Mapping
from pathlib import Path

import matplotlib
import matplotlib.font_manager
import matplotlib.text
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.colors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.style  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from stsq.claims.length import length_curves  # noqa: E402
from stsq.core import experiment  # noqa: E402
from stsq.core.claim_records import EPSILON, GENERALIZES_WITHIN  # noqa: E402
from stsq.core.experiment import ARCHS, LOSS, MECHANISM_METRICS, OK, PROJECTION, fcn_arch, paper_model, style_of  # noqa: E402,E501
from stsq.core.figure_catalog import FIGURES as CATALOG  # noqa: E402
from stsq.core.figure_catalog import FLOOR_REPORT  # noqa: E402
from stsq.report.legibility import _legend_below  # noqa: E402
from stsq.sts.theory import width_floor, width_needed  # noqa: E402
from stsq.width.critical import ABOVE, BELOW, critical_widths, summary  # noqa: E402

BAND = ("pi", 100)  # min-to-max over seeds
ORACLE_STYLE = dict(color="black", ls="--", lw=1.4)
FLOOR_LOSS = FLOOR_REPORT  # a loss below this is not drawn on a log axis; the panel says so
MOST_LINES = 4  # over training, at most this many widths of an arch per panel: lines that saturate coincide
SPREAD = 1.04  # on a log N'/N axis, each model this factor to the side of the next (equal losses stay visible)
GAP_FLOOR = 1e-6  # 1 - cosine (or evenness) is drawn at this where below, on a log axis
matplotlib.style.use(Path(__file__).with_name("figures.mplstyle"))
# seaborn's colour codes, as its theme sets them: the one-letter colours from its "deep" palette, "k" a near black
for _code, _colour in zip("bgrmyck", ("#4C72B0", "#55A868", "#C44E52", "#8172B3", "#CCB974", "#64B5CD", (.1, .1, .1))):
    matplotlib.colors.colorConverter.colors[_code] = matplotlib.colors.to_rgb(_colour)


def shades_of(name: str, n: int) -> list[tuple]:
    """n colours of the matplotlib colour map ``name``, evenly spaced, its two ends left out (seaborn's
    color_palette of a continuous map)."""
    return [tuple(c[:3]) for c in matplotlib.colormaps[name](np.linspace(0, 1, n + 2)[1:-1])]


def _archs(df):
    return [a for a in ARCHS if a in set(df["arch"])]


def _core(df):
    """The rows of the archs the main figures draw (``Arch.core``); the others are in the encodings figure."""
    return df[df["arch"].map(lambda a: ARCHS[a].core)]


def _is_fcn(df):
    return ~df["arch"].map(lambda a: ARCHS[a].transformer).astype(bool)


def _label(arch, width) -> str:
    return f"{ARCHS[arch].legend} {experiment.width_name(arch)}={int(width)}"


def _one_d(df: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The rows of the sweep's largest d (and each arch's largest budget), and a note saying which."""
    d, several = int(df["d"].max()), df["d"].nunique() > 1
    df = df[df["d"] == d]
    df = experiment.at_largest_budget(df)
    return df, f"d = {d}" + (" (the largest d of the sweep)" if several else "")


def _with_labels(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str], dict]:
    """df with a "model" column (arch and width), the models in order, and a shade for each."""
    df = df.assign(model=[_label(a, w) for a, w in zip(df["arch"], df["width"])])
    order, palette = [], {}
    for arch in _archs(df):
        widths = sorted(df[df["arch"] == arch]["width"].unique())
        shades = shades_of(style_of(arch).colours, len(widths) + 2)[2:]  # skip the palest shades
        for w, shade in zip(widths, shades):
            order.append(_label(arch, w))
            palette[_label(arch, w)] = shade
    return df, order, palette


def _fewest(models: list, most: int | None) -> list:
    """At most ``most`` of an arch's models (ordered by width): the narrowest, the widest, and evenly between."""
    if most is None or len(models) <= most:
        return models
    return [models[round(k * (len(models) - 1) / (most - 1))] for k in range(most)]


def _lines(ax, sub, x, order, palette, markers=True, spread=1.0, most=None):
    """Mean over seeds with a min-max band, one line per model (arch and width), widest line first so
    that a line on top of another leaves it visible; each arch's line and marker from its ``Arch.style``.
    ``spread`` > 1 (a log x axis): each model drawn at x times spread^k, centred, so that models with equal
    values stay visible beside each other."""
    arch_of = dict(zip(sub["model"], sub["arch"]))
    present = [m for m in order if m in arch_of]
    # within an arch (at most ``most`` of its widths), the widest model first (underneath) and thickest
    present = [m for a in dict.fromkeys(arch_of[m] for m in present)
               for m in reversed(_fewest([p for p in present if arch_of[p] == a], most))]
    for k, m in enumerate(present):
        arch = arch_of[m]
        style = style_of(arch)
        same = [p for p in present if arch_of[p] == arch]
        g = sub[sub["model"] == m].groupby(x)["value"]
        mean, lo, hi = g.mean(), g.min(), g.max()
        xs = mean.index.to_numpy(dtype=float) * spread ** (k - (len(present) - 1) / 2)
        lw = 1.2 + 1.1 * (len(same) - 1 - same.index(m))  # a wider line's edge shows beside a narrower one
        ax.fill_between(xs, lo.values, hi.values, color=palette[m], alpha=0.15, lw=0)
        ax.plot(xs, mean.values, color=palette[m], lw=lw, ls=style.line,
                marker=style.marker if markers or len(mean) == 1 else None, markersize=6, label=m,  # one point: seen
                markerfacecolor=palette[m] if style.filled else "white", gid=arch)


def _grid(rows, cols, width=4.0, height=3.4):
    fig, axes = plt.subplots(len(rows), len(cols), figsize=(width * len(cols), height * len(rows) + 1.0),
                             squeeze=False)
    return fig, axes


def _title(fig, text, note="mean over seeds, band = seed range"):
    fig.suptitle(f"{text}\n({note})")


def _oracle_line(ax, x, loss, label, **style) -> str:
    """The oracle (or a projection) on a log axis where it is above FLOOR_LOSS; returns a note for the
    panel's title where it is below (not drawn there)."""
    loss = pd.Series(np.asarray(loss, dtype=float))
    x = np.asarray(x, dtype=float)
    keep = (loss > FLOOR_LOSS).to_numpy()
    if keep.any():
        ax.plot(x[keep], loss[keep], label=label, **style)
    if keep.all():
        return ""
    return f"\n{label.split(',')[0]} < {FLOOR_LOSS:g}" + (" in part" if keep.any() else "") + ", not drawn"


def _finish(fig, axes, title, note="mean over seeds, band = seed range"):
    _legend_below(fig, axes)
    _title(fig, title, note)
    return fig


def _empty(message):
    fig, ax = plt.subplots(figsize=(5, 2))
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center")
    return fig


def _oracle_at(oracle, q, N, d_e):
    o = oracle[(oracle["q"] == q) & (oracle["N"] == N) & (oracle["width"] == d_e)]
    return o.sort_values("N_eval")


def _at_N(table, split):
    return table[(table["split"] == split) & (table["metric"] == LOSS) & (table["N_eval"] == table["N"])]


def training_figure(table: pd.DataFrame, oracle: pd.DataFrame, position_range=None):
    """(a) Normalized test loss vs step, per model, one panel per (q, N), largest d; the oracle of the
    largest d_e."""
    df = _at_N(_core(table), "test")
    if df.empty:
        return _empty("no training curves in the table")
    df, which = _one_d(df)
    df, order, palette = _with_labels(df)
    qs, Ns = sorted(df["q"].unique()), sorted(df["N"].unique())
    fig, axes = _grid(qs, Ns)
    for i, q in enumerate(qs):
        for j, N in enumerate(Ns):
            ax, sub = axes[i, j], df[(df["q"] == q) & (df["N"] == N)]
            _lines(ax, sub, "step", order, palette, markers=False, most=MOST_LINES)
            st = sub[sub["arch"] == paper_model()]
            note = ""
            if not st.empty:
                o = _oracle_at(oracle, q, N, st["width"].max())
                o = o[o["N_eval"] == N]
                if not o.empty:
                    steps = sorted(sub["step"].unique())
                    note = _oracle_line(ax, [steps[0], steps[-1]], [float(o[LOSS].iloc[0])] * 2,
                                        f"oracle, d_e={int(st['width'].max())}", **ORACLE_STYLE)
            ax.set(yscale="log", title=f"q={q}, N={N}{note}", xlabel="training step", ylabel="normalized test loss")
    return _finish(fig, axes, f"Training: normalized test loss vs step, {which}")


def separation_figure(table: pd.DataFrame, oracle: pd.DataFrame, position_range=None):
    """(b) Final loss at N' = N vs width (FCN: m; transformer: d + d_e), one panel per (q, d) row and N
    column, with the FCN's exact width floor (solid) and m = N d (dotted)."""
    df = _at_N(_core(table[table["status"] == OK]), "eval").copy()
    if df.empty:
        return _empty("no in-distribution evaluations in the table")
    df = experiment.at_largest_budget(df)
    df["model width"] = np.where(_is_fcn(df), df["width"], df["d"] + df["width"])
    rows = sorted(df.groupby(["q", "d"]).groups)
    Ns = sorted(df["N"].unique())
    bottom = min(FLOOR_LOSS, 0.5 * float(df["value"][df["value"] > 0].min()))  # every point on the axis
    fig, axes = _grid(rows, Ns, height=3.2)
    for i, (q, d) in enumerate(rows):
        for j, N in enumerate(Ns):
            ax, sub = axes[i, j], df[(df["q"] == q) & (df["d"] == d) & (df["N"] == N)]
            if sub.empty:  # an arch's own q, N or d: no model of the sweep here
                ax.axis("off")
                ax.text(0.5, 0.5, f"q={q}, d={d}, N={N}:\nno model here", ha="center", va="center",
                        transform=ax.transAxes, color="grey")
                continue
            for arch in _archs(sub):
                a = sub[sub["arch"] == arch].groupby("model width")["value"]
                style = style_of(arch)
                colour = shades_of(style.colours, 4)[-1]
                mean = a.mean()
                ax.fill_between(mean.index, a.min().values, a.max().values, color=colour, alpha=0.15, lw=0)
                ax.plot(mean.index, mean.values, color=colour, marker=style.marker, markersize=7,
                        ls=style.line if len(mean) > 1 else "none", label=ARCHS[arch].legend,
                        markerfacecolor=colour if style.filled else "none", markeredgewidth=1.5, gid=arch)
            if _is_fcn(sub).any():
                m = np.unique(np.geomspace(1, N * d, 200).astype(int))
                floor = np.array([width_floor(N, d, q, int(k)) for k in m])
                keep = floor > FLOOR_LOSS
                ax.plot(m[keep], floor[keep], color="black", lw=1.4, label="exact width floor of the FCN")
                ax.axvline(N * d, color="grey", lw=1.0, ls=":", label="m = N d (floor reaches 0)")
            ax.set(xscale="log", yscale="log", title=f"q={q}, d={d}, N={N}", ylim=(bottom, 2),
                   xlabel="width (FCN m; transformer d + d_e)" if (i, j) == (len(rows) - 1, len(Ns) // 2) else "",
                   ylabel="loss at N' = N" if j == 0 else "")
    return _finish(fig, axes, "Separation: final loss vs width, and the FCN's exact width floor",
                   f"mean over seeds, band = seed range; the floor drawn where above {FLOOR_LOSS:g}")


def length_figure(table: pd.DataFrame, oracle: pd.DataFrame, position_range=None):
    """(c) Top: loss vs N'/N for the transformers at the end of training; bottom: the loss at the longest
    N' (and at N) along training, stochastic and fixed PE.  One column per N, largest d."""
    table = _core(table)
    df = table[(table["split"] == "eval") & (table["metric"] == LOSS) & ~_is_fcn(table)].copy()
    if df.empty:
        return _empty("no transformer evaluations in the table")
    df, which = _one_d(df)
    d = int(df["d"].iloc[0])
    df["N'/N"] = df["N_eval"] / df["N"]
    df, order, palette = _with_labels(df)
    projection = table[(table["split"] == "eval") & (table["metric"] == PROJECTION) & (table["d"] == d)]
    qs, Ns = sorted(df["q"].unique()), sorted(df["N"].unique())
    fig, axes = _grid([(q, r) for q in qs for r in ("end", "training")], Ns, height=3.6)
    for i, q in enumerate(qs):
        for j, N in enumerate(Ns):
            ax, sub = axes[2 * i, j], df[(df["q"] == q) & (df["N"] == N)]
            _lines(ax, sub, "N'/N", order, palette, spread=SPREAD)
            st = sub[sub["arch"] == paper_model()]
            note = ""
            if not st.empty:
                d_e = st["width"].max()
                proj = projection[(projection["q"] == q) & (projection["N"] == N) & (projection["width"] == d_e)]
                if not proj.empty:  # markers only, so the model's own line stays visible under them
                    mean = proj.groupby("N_eval")["value"].mean()
                    note += _oracle_line(ax, mean.index / N, mean.values,
                                         f"projection of {ARCHS[paper_model()].legend} d_e={int(d_e)}", color="black",
                                         ls="none", marker="x", markersize=9, mew=1.8, zorder=5)
                o = _oracle_at(oracle, q, N, d_e)
                if not o.empty:
                    note += _oracle_line(ax, o["N_eval"] / N, o[LOSS].values, f"oracle, d_e={int(d_e)}",
                                         **ORACLE_STYLE)
            ax.set(xscale="log", yscale="log", title=f"end of training: q={q}, N={N}{note}", xlabel="N'/N",
                   ylabel="loss at N'" if j == 0 else "")
            ticks = sorted(sub["N'/N"].unique())
            ax.set_xticks(ticks, [f"{x:g}" for x in ticks])
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
            _length_over_training(axes[2 * i + 1, j], table, sub, q, N, d, palette)
    return _finish(fig, axes, f"Length generalization: {', '.join(_archs(df))}, {which}")


def _length_over_training(ax, table, sub, q, N, d, palette):
    """The loss at the longest N' (solid) and at N (thin) against the step, for the largest d_e of each
    transformer, mean over seeds."""
    for arch in _archs(sub):
        a = sub[sub["arch"] == arch]
        if a.empty:
            continue
        sel = {"q": q, "N": N, "d": d, "width": int(a["width"].max()), "steps": int(a["steps"].max())}
        curves = length_curves(table, sel, arch)
        if curves.empty:
            continue
        mean = curves.groupby(level="step")[["at_N", "at_longest"]].mean()
        colour = palette[_label(arch, sel["width"])]
        longest = int(curves["longest"].iloc[0])
        ax.plot(mean.index, mean["at_longest"], color=colour, lw=2.4, marker=style_of(arch).marker,
                label=f"{_label(arch, sel['width'])} at N'={longest // N}N", gid=arch)
        ax.plot(mean.index, mean["at_N"], color=colour, lw=1.2, ls=":", label=f"{_label(arch, sel['width'])} at N",
                gid=arch)
    ax.set(yscale="log", title=f"over training: q={q}, N={N}", xlabel="training step", ylabel="loss")


def mechanism_figure(table: pd.DataFrame, oracle: pd.DataFrame, position_range=None):
    """(d) Attention on y (linear) and, as their distance from 1 on a log scale so that models near 1 stay
    apart, the evenness inside y and the ground-truth cosines, over training, per (q, N), largest d.
    A metric equal to 1 throughout (evenness at q <= 2: two selected tokens score alike) is left out."""
    df = _core(table)
    df = df[(df["split"] == "test") & df["metric"].isin(list(MECHANISM_METRICS))]
    if df.empty:
        return _empty("no transformer curves in the table")
    df, which = _one_d(df)
    metrics = [m for m in MECHANISM_METRICS if m in set(df["metric"])]
    flat = [m for m in metrics if m != "attn_mass_y" and (1 - df[df["metric"] == m]["value"]).max() < GAP_FLOOR]
    metrics = [m for m in metrics if m not in flat]
    gap = df["metric"] != "attn_mass_y"
    df = df.assign(value=np.where(gap, np.maximum(1 - df["value"], GAP_FLOOR), df["value"]))
    df, order, palette = _with_labels(df)
    groups = sorted(df.groupby(["q", "N"]).groups)
    fig, axes = plt.subplots(len(groups), len(metrics), figsize=(3.3 * len(metrics), 2.8 * len(groups) + 1.2),
                             squeeze=False)
    for i, (q, N) in enumerate(groups):
        for j, metric in enumerate(metrics):
            ax = axes[i, j]
            sub = df[(df["q"] == q) & (df["N"] == N) & (df["metric"] == metric)]
            _lines(ax, sub, "step", order, palette, markers=False, most=MOST_LINES)
            label = MECHANISM_METRICS[metric] if metric == "attn_mass_y" else f"1 - {MECHANISM_METRICS[metric]}"
            ax.set(title=f"{label}\nq={q}, N={N}" if i == 0 else f"q={q}, N={N}",
                   xlabel="training step" if i == len(groups) - 1 else "", ylabel="")  # the title names it
            if metric == "attn_mass_y":
                ax.set_ylim(0, 1.05)
            else:
                ax.set_yscale("log")
    note = f"mean over seeds, band = seed range; 1 - x drawn at {GAP_FLOOR:g} where below"
    if flat:
        note += "; not drawn, equal to 1 throughout: " + ", ".join(MECHANISM_METRICS[m] for m in flat)
    return _finish(fig, axes, f"Mechanism over training: attention on y and the ground-truth directions, {which}",
                   note)


def scaling_figure(table: pd.DataFrame, oracle: pd.DataFrame, position_range=None):
    """(e) The separation as measured widths: the critical width (stsq.width.critical) at loss EPSILON against
    N d for both archs, coloured by d, one marker per budget, the exact floor's m*(eps) and a slope-1
    guide (left); the transformer's d_e_eps against q log N (right).  Geometric mean over seeds, bar =
    seed range; a censored value is an open marker with an arrow towards where the true value lies."""
    crit = critical_widths(table)
    crit = crit[np.isclose(crit["epsilon"], EPSILON)]
    if crit.empty:
        return _empty("no evaluations in the table")
    s = summary(crit)
    ds = sorted(s["d"].unique())
    colour = dict(zip(ds, shades_of("viridis", len(ds) + 1)[:len(ds)]))
    with_tf = bool((s["arch"] == paper_model()).any())  # the right panel: the transformer against q log N
    fig, axes = plt.subplots(1, 1 + with_tf, figsize=(6.5 * (1 + with_tf), 7.2), squeeze=False)
    axes = axes[0]
    panels = [(axes[0], lambda g: g["N"] * g["d"], "N d")]
    if with_tf:
        panels.append((axes[1], lambda g: g["q"] * np.log(g["N"]), "q log N"))
    for ax, x_of, xlabel in panels:
        archs = [fcn_arch(), paper_model()] if xlabel == "N d" else [paper_model()]
        budgets = {a: sorted(s[s["arch"] == a]["steps"].unique()) for a in archs}
        several_q = s["q"].nunique() > 1
        for arch in archs:
            qs = sorted(s[s["arch"] == arch]["q"].unique())  # the marker: budget, then q, of this arch
            for k, steps in enumerate(budgets[arch]):
                for d in ds:
                    for j, q in enumerate(qs):  # one line per q: q log N does not collapse the q axis
                        g = s[(s["arch"] == arch) & (s["steps"] == steps) & (s["d"] == d) & (s["q"] == q)]
                        if g.empty:
                            continue
                        _critical_points(ax, g.assign(x=x_of(g)), colour[d], _marker(arch, k + j),
                                         f"{ARCHS[arch].legend} d={d}" + (f", q={q}" if several_q else "")
                                         + (f", {steps} steps" if len(budgets[arch]) > 1 else ""), arch)
        if xlabel == "N d" and (s["arch"] == fcn_arch()).any():
            f = s[s["arch"] == fcn_arch()].drop_duplicates(["q", "N", "d"])
            floor = [width_needed(int(r.N), int(r.d), int(r.q), EPSILON) for r in f.itertuples()]
            ax.scatter(f["N"] * f["d"], floor, marker="_", s=300, color="black", lw=2.2, zorder=4,
                       label=f"exact floor m*({EPSILON:g}) at each (N, d)")
            xs = np.geomspace((f["N"] * f["d"]).min(), (f["N"] * f["d"]).max(), 20)
            ax.plot(xs, xs, color="grey", ls=":", lw=1.5, label="m = N d (slope 1)")
        ax.set(xscale="log", yscale="log", xlabel=xlabel, ylabel=f"width needed for loss <= {EPSILON:g}",
               title=("FCN m_eps and transformer d_e_eps vs N d" if xlabel == "N d"
                      else f"{ARCHS[paper_model()].legend} d_e_eps vs q log N"))
        shown = s[s["arch"].isin(archs)]
        _plain_log_ticks(ax, sorted(set(np.round(x_of(shown).astype(float), 2))),
                         sorted(set(np.round(shown["width"], 0))) if xlabel != "N d" else None)
    _legend_below(fig, axes)  # one legend for both panels (a model on both is one entry)
    _title(fig, f"Scaling: the width each model needs to reach loss {EPSILON:g} (tables/critical.csv)",
           "geometric mean over seeds, bar = seed range; open marker and arrow = censored (a bound)")
    return fig


def encodings_figure(table: pd.DataFrame, oracle: pd.DataFrame, position_range=None):
    """(f) Loss against N'/N at the end of training for every transformer's encoding at one d_e (the width
    most of them share, the largest such), one column per N, the sweep's largest d and first q; the oracle
    at that d_e; L, the range of randomized positions, as a vertical line where it is within the axis.
    A length a model cannot take (N' > L) has no point."""
    df = table[(table["split"] == "eval") & (table["metric"] == LOSS) & (table["status"] == OK) & ~_is_fcn(table)]
    if df.empty:
        return _empty("no transformer evaluations in the table")
    df, which = _one_d(df)
    q = int(df["q"].min())
    df = df[df["q"] == q]
    shared = df.groupby("width")["arch"].nunique()
    d_e = int(shared[shared == shared.max()].index.max())
    selection = {"q": q, "d": int(df["d"].iloc[0]), "width": d_e}
    df = df[df["width"] == d_e].assign(**{"N'/N": lambda t: t["N_eval"] / t["N"]})
    df, order, palette = _with_labels(df)
    Ns = sorted(df["N"].unique())
    fig, axes = _grid([q], Ns, height=4.2)
    for j, N in enumerate(Ns):
        ax, sub = axes[0, j], df[df["N"] == N]
        _lines(ax, sub, "N'/N", order, palette, spread=SPREAD)
        o = _oracle_at(oracle, q, N, d_e)
        note = _oracle_line(ax, o["N_eval"] / N, o[LOSS].values, f"oracle, d_e={d_e}", **ORACLE_STYLE) if len(o) else ""
        ticks = sorted(sub["N'/N"].unique())
        right = ticks[-1]
        if position_range and ticks and position_range / N <= ticks[-1] * 1.5:
            ax.axvline(position_range / N, color="black", lw=1.6, ls=":",
                       label=f"L = {position_range} (positions' range)")
            right = max(right, position_range / N)
        ax.set_xlim(ticks[0] / 1.2, right * 1.2)  # L / N at the last length stays off the frame
        ax.set(xscale="log", yscale="log", title=f"q={q}, N={N}, d_e={d_e}{note}", xlabel="N'/N",
               ylabel="loss at N'" if j == 0 else "")
        ax.set_xticks(ticks, [f"{x:g}" for x in ticks])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    archs = ", ".join(_archs(df))
    fig = _finish(fig, axes, f"Positional encodings at unseen lengths: {archs}; {which}",
                  "mean over seeds, band = seed range; no point where a model cannot take N' (N' > L)")
    fig.stsq_selection = selection  # what its caption's ranking reads (stsq.report.pages.encodings_ranking)
    return fig


def reach_figure(table: pd.DataFrame, oracle: pd.DataFrame, position_range=None):
    """(g) How far the paper's model generalizes (stsq.width.reach): the worst seed's reach N'/N of the final models
    against d_e (left) and, at the largest d_e, against the training step (right); one line per (q, N, d),
    coloured by N, a marker per d; the bar spans the seeds; a censored reach (within the bound at the
    longest N' scored) is an open marker with an upward arrow."""
    from stsq.width.reach import cell_reach, needs_at_epsilon, reach_table

    reach = reach_table(table[table["arch"] == paper_model()], oracle, needs_at_epsilon(critical_widths(table)))
    if reach.empty:
        return _empty(f"no {paper_model()} scored at N' > N with its oracle in the table")
    reach = reach[reach["steps"] == reach["steps"].max()]
    cr = cell_reach(reach)
    shapes = list(cr[["q", "N", "d"]].drop_duplicates().sort_values(["q", "N", "d"]).itertuples(index=False))
    Ns, ds = sorted(cr["N"].unique()), sorted(cr["d"].unique())
    colour = dict(zip(Ns, shades_of("viridis", len(Ns) + 1)[:len(Ns)]))
    marker = {d: ["o", "s", "^", "D", "v", "P"][k % 6] for k, d in enumerate(ds)}
    fig, axes = plt.subplots(1, 2, figsize=(13.0, 5.6))
    steps = sorted(cr[~cr["final"].astype(bool)]["step"].unique())
    gap = (steps[1] - steps[0]) if len(steps) > 1 else 1
    for ax, final, x in ((axes[0], True, "width"), (axes[1], False, "step")):
        for k, (q, N, d) in enumerate(shapes):
            g = cr[(cr["q"] == q) & (cr["N"] == N) & (cr["d"] == d) & (cr["final"] == final)]
            if not final:
                g = g[g["width"] == g["width"].max()]
            if g.empty:
                continue
            # each (q, N, d) a little to the side of the next, so that equal reaches stay visible
            shift = k - (len(shapes) - 1) / 2
            g = g.sort_values(x).assign(**{x: g[x] * 1.04 ** shift if final else g[x] + 0.05 * gap * shift})
            label = f"q={q}, N={N}, d={d}"
            ax.plot(g[x], g["reach_factor"], color=colour[N], lw=1.6, alpha=0.8)
            ax.vlines(g[x], g["lo"], g["hi"], color=colour[N], lw=4, alpha=0.35)
            closed, open_ = g[~g["censored"]], g[g["censored"]]
            ax.scatter(closed[x], closed["reach_factor"], marker=marker[d], s=70, color=colour[N], edgecolor="black",
                       lw=0.6, zorder=3, label=label)
            ax.scatter(open_[x], open_["reach_factor"], marker=marker[d], s=70, facecolor="white",
                       edgecolor=colour[N], lw=1.8, zorder=3, label=label if closed.empty else None)
            for r in open_.itertuples():
                ax.annotate("", xy=(getattr(r, x), r.reach_factor * 1.5), xytext=(getattr(r, x), r.reach_factor),
                            arrowprops=dict(arrowstyle="->", color=colour[N], lw=1.6))
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}N"))
        ax.set(xlabel="d_e" if final else "training step", ylabel="reach N'/N (worst seed)" if final else "",
               title="final models, against d_e" if final else "largest d_e, along training")
        if final:
            ax.set_xscale("log", base=2)
            ws = sorted(cr["width"].unique())
            ax.set_xticks(ws, [f"{int(w)}" for w in ws])
        else:
            ax.set_xticks(steps, [f"{int(t)}" for t in steps])
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    return _finish(fig, axes, f"How far {ARCHS[paper_model()].legend} generalizes: the longest N' within the oracle "
                   f"(widest d_e) + {GENERALIZES_WITHIN:g} (tables/reach.csv)",
                   "worst seed's reach, bar = seed range; open marker and arrow = within the bound at the "
                   "longest N' scored")


def _plain_log_ticks(ax, xs, ys=None):
    """Major ticks at the measured sizes (and widths, if given), labelled as plain numbers, none within 25 %
    of the previous one (their labels would overlap); no minor labels."""
    kept = []
    for x in xs:
        if not kept or x > kept[-1] * 1.25:
            kept.append(x)
    xs = kept
    ax.set_xticks(xs, [f"{x:.3g}" for x in xs])
    if ys is not None:
        ax.set_yticks(ys, [f"{y:g}" for y in ys])
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_minor_formatter(matplotlib.ticker.NullFormatter())


SCALING_MARKERS = ("o", "s", "P", "v", "X", "^")  # a second budget or q of an arch: the next of these


def _marker(arch, k):
    """The arch's own marker (``Arch.style``) for its first budget and q, then markers no arch here owns."""
    owned = {style_of(a).marker for a in (paper_model(), fcn_arch())}
    markers = [style_of(arch).marker, *[m for m in SCALING_MARKERS if m not in owned]]
    return markers[k % len(markers)]


def _critical_points(ax, g, colour, marker, label, arch):
    """Measured critical widths filled, censored ones open with an arrow in the bound's direction (``arch``'s)."""
    g = g.sort_values("x")
    ax.plot(g["x"], g["width"], color=colour, lw=1, alpha=0.6)
    ax.vlines(g["x"], g["lo"], g["hi"], color=colour, lw=3, alpha=0.45)
    open_ = g["censored"].isin([ABOVE, BELOW, "mixed"])
    if (~open_).any():
        ax.plot(g["x"][~open_], g["width"][~open_], ls="none", marker=marker, ms=8.4, color=colour, mec="black",
                mew=0.6, zorder=3, label=label, gid=arch)
    for r in g[open_].itertuples():
        ax.plot([r.x], [r.width], ls="none", marker=marker, ms=8.4, color=colour, mfc="white", mec=colour, mew=1.8,
                zorder=3, label=label if (~open_).sum() == 0 else None, gid=arch)
        up = r.censored == ABOVE
        ax.annotate("", xy=(r.x, r.width * (1.8 if up else 1 / 1.8)), xytext=(r.x, r.width),
                    arrowprops=dict(arrowstyle="->", color=colour, lw=1.6))


def _drawable(draw, over=()):
    """``draw`` reading each role through its arch in the table (stsq.core.experiment.reading); given a table in which
    an axis beyond the shape varies (stsq.core.experiment.extra_axes) and the figure does not draw it (``over``, its
    record's), the figure says it cannot draw it (its lines, panels and bands are the shape's: it would average
    over that axis)."""

    @functools.wraps(draw)
    def drawn(table: pd.DataFrame, oracle: pd.DataFrame, position_range=None):
        varying = {k: sorted(table[k].unique()) for k in experiment.extra_axes()
                   if k in table.columns and table[k].nunique() > 1 and k not in over}
        if varying:
            return _empty("cannot draw: " + "; ".join(f"the axis {k} varies ({', '.join(map(str, v))})"
                                                      for k, v in varying.items())
                          + "\nand this figure has no line or panel for it:\ndraw one table per value of it")
        with experiment.reading(table["arch"].unique()):
            return draw(table, oracle, position_range=position_range)

    return drawn


class _Drawings(Mapping):
    """Figure name -> its drawing function, as its record in stsq.core.figure_catalog names it (``Figure.draw``), read
    through ``_drawable``.  Looked up by name, so that one figure's job depends on its own drawing only."""

    def __getitem__(self, name):
        module, function = CATALOG[name].draw.split(":")
        return _drawable(getattr(importlib.import_module(module), function), CATALOG[name].over)

    def __iter__(self):
        return iter(CATALOG)

    def __len__(self):
        return len(CATALOG)


FIGURES = _Drawings()




def needs_figure(table: pd.DataFrame, oracle: pd.DataFrame, position_range=None):
    """The width each family needs at EPSILON against N (index lookup, bounded Dyck): ``needs_panels`` of the sweep's
    critical widths."""
    return needs_panels(critical_widths(table))


def needs_panels(crit: pd.DataFrame):
    """The need against N from critical widths (stsq.width.critical), one panel per task side by side: per arch (and
    d, where d varies) the geometric mean over seeds at EPSILON, the seed range as a bar; an open marker with an arrow
    where a seed's need is only a bound.  Each N at its arch's largest budget there (a budget may grow with N)."""
    crit = experiment.at_largest_budget(crit[np.isclose(crit["epsilon"], EPSILON)])
    if crit.empty:
        return _empty("no arch has two widths at one N: no width needed")
    tasks = list(dict.fromkeys(ARCHS[a].task for a in crit["arch"].unique()))
    fig, axes = plt.subplots(1, len(tasks), figsize=(5.5 * len(tasks), 4.2), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        part = crit[crit["arch"].map(lambda a: ARCHS[a].task) == task]
        several_d = part["d"].nunique() > 1
        for (arch, d), g in part.groupby(["arch", "d"], sort=False):
            st = style_of(arch)
            colour = shades_of(st.colours, 3)[-1]
            s = summary(g).sort_values("N")
            bars = [(s["width"] - s["lo"]).clip(lower=0), (s["hi"] - s["width"]).clip(lower=0)]
            label = ARCHS[arch].legend + (f" d={d}" if several_d else "")
            ax.errorbar(s["N"], s["width"], yerr=bars, color=colour, ls="none", capsize=3, gid=arch)
            ax.plot(s["N"], s["width"], color=colour, ls=st.line, marker=st.marker, label=label, gid=arch)
            for _, r in s[s["censored"] != "none"].iterrows():
                up = r["censored"] in (ABOVE, "mixed")
                ax.plot(r["N"], r["width"], marker=st.marker, mfc="white", color=colour, ls="none", gid=arch)
                ax.annotate("", (r["N"], r["width"] * (1.5 if up else 1 / 1.5)), (r["N"], r["width"]),
                            arrowprops={"arrowstyle": "->", "color": colour})
        ax.set(xscale="log", yscale="log", xlabel="N", ylabel=f"width m needed (loss {EPSILON:g} x chance)")
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
            axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xticks(sorted(part["N"].unique()))
        low, high = ax.get_ylim()
        low, high = min(low, part["critical_width"].min() / 1.7), max(high, part["critical_width"].max() * 1.7)
        ax.set_yticks([2.0 ** k for k in range(math.floor(math.log2(low)), math.ceil(math.log2(high)) + 1)])
        ax.set_ylim(low, high)  # room for the arrows of the bounds
        ax.set_title(f"The width needed: {_task_name(task)}")
        ax.legend(loc="best")
    return fig


def _task_name(task: str) -> str:
    """How a figure names a task: its record's line, up to the first colon."""
    from stsq.core.tasks import TASKS
    return TASKS[task].about.split(":")[0]
