"""The figures, drawn from the tidy metrics table and the oracle table (seaborn; PDF and PNG).

Every line is the mean over seeds and its band spans the seeds (min to max).  A line's colour is its
arch, its shade its width (darker = wider), so every legend entry is one model; the oracle (the best
loss of the ground-truth family, stsq.oracle) is drawn dashed where a transformer's loss is shown.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from . import experiment  # noqa: E402
from .claims import needed_widths, scale_of  # noqa: E402
from .experiment import ARCHS, EPSILON, FCN_ARCH, LOSS, MECHANISM_METRICS, OK, PROJECTION, STOCHASTIC  # noqa: E402
from .files import atomic_write_bytes  # noqa: E402
from .theory import width_floor, width_needed  # noqa: E402

BAND = ("pi", 100)  # min-to-max over seeds
COLOURS = dict(zip(ARCHS, ["Blues", "Oranges", "Greens", "Reds"]))  # a colour map per arch: shade = width
MARKERS = dict(zip(ARCHS, ["o", "s", "^", "D"]))
ORACLE_STYLE = dict(color="black", ls="--", lw=1.2)
sns.set_theme(context="paper", style="whitegrid", font_scale=1.2)


def _archs(df):
    return [a for a in ARCHS if a in set(df["arch"])]


def _is_fcn(df):
    return df["arch"] == FCN_ARCH


def _label(arch, width) -> str:
    return f"{arch} {experiment.width_name(arch)}={int(width)}"


def _with_labels(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str], dict]:
    """df with a "model" column (arch and width), the models in order, and a shade for each."""
    df = df.assign(model=[_label(a, w) for a, w in zip(df["arch"], df["width"])])
    order, palette = [], {}
    for arch in _archs(df):
        widths = sorted(df[df["arch"] == arch]["width"].unique())
        shades = sns.color_palette(COLOURS[arch], len(widths) + 2)[2:]  # skip the palest shades
        for w, shade in zip(widths, shades):
            order.append(_label(arch, w))
            palette[_label(arch, w)] = shade
    return df, order, palette


DASHES = {STOCHASTIC: "", FCN_ARCH: ""}  # the others dashed, so a line on top of another still shows


def _lines(ax, sub, x, order, palette, legend, markers=True, **kw):
    """Mean over seeds with a min-max band, one line per model (arch and width).  The stochastic-PE
    transformer is drawn first and solid; the others dashed on top of it, so where two lines coincide
    both colours show."""
    present = [m for m in order if m in set(sub["model"])]
    arch = {m: m.split()[0] for m in present}
    sns.lineplot(sub, x=x, y="value", hue="model", hue_order=present, palette=palette, style="model",
                 style_order=present, markers={m: MARKERS[a] for m, a in arch.items()} if markers else False,
                 dashes={m: DASHES.get(a, (4, 2)) for m, a in arch.items()}, errorbar=BAND, ax=ax, legend=legend,
                 markersize=5, lw=1.6, **kw)


def _legend_right(fig, axes):
    """One legend for the figure, right of the panels, from every panel's lines (no duplicates)."""
    handles = {}
    for ax in np.ravel(axes):
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if handles:
        fig.legend(handles.values(), handles.keys(), loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=9,
                   frameon=False)


def _grid(df, width=4.2, height=3.3):
    qs, Ns = sorted(df["q"].unique()), sorted(df["N"].unique())
    fig, axes = plt.subplots(len(qs), len(Ns), figsize=(width * len(Ns), height * len(qs) + 0.8),
                             squeeze=False)
    return fig, axes, qs, Ns


def _panels(axes, df, qs, Ns):
    """(q, N, axis, rows of (q, N)) of every panel of the (q, N) grid."""
    for i, q in enumerate(qs):
        for j, N in enumerate(Ns):
            yield q, N, axes[i, j], df[(df["q"] == q) & (df["N"] == N)]


def _title(fig, text, note="mean over seeds, band = seed range"):
    fig.suptitle(f"{text}\n({note})")


def _oracle_line(ax, x, loss, label, **style):
    """The oracle on a log axis: drawn where it is above 1e-4, otherwise said in the legend."""
    loss = pd.Series(loss, dtype=float)
    if (loss > 1e-4).any():
        ax.plot(x, loss.clip(lower=1e-4), label=label, **style)
    else:
        ax.plot([], [], label=f"{label}: below 1e-4", **style)


def _finish(fig, axes, title):
    """One legend right of the panels, and the title."""
    _legend_right(fig, axes)
    _title(fig, title)
    return fig


def _empty(message):
    fig, ax = plt.subplots(figsize=(5, 2))
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center")
    return fig


def _oracle_at(oracle, q, N, d_e):
    o = oracle[(oracle["q"] == q) & (oracle["N"] == N) & (oracle["width"] == d_e)]
    return o.sort_values("N_eval")


def training_figure(table: pd.DataFrame, oracle: pd.DataFrame):
    """(a) Normalized test loss vs step, per model, one panel per (q, N); the oracle of the largest d_e."""
    df = table[(table["split"] == "test") & (table["metric"] == LOSS)]
    if df.empty:
        return _empty("no training curves in the table")
    df, order, palette = _with_labels(df)
    fig, axes, qs, Ns = _grid(df)
    for q, N, ax, sub in _panels(axes, df, qs, Ns):
        _lines(ax, sub, "step", order, palette, legend=True, markers=False)
        st = sub[sub["arch"] == STOCHASTIC]
        if not st.empty:
            o = _oracle_at(oracle, q, N, st["width"].max())
            o = o[o["N_eval"] == N]
            if not o.empty:
                steps = sorted(sub["step"].unique())
                _oracle_line(ax, [steps[0], steps[-1]], [float(o[LOSS].iloc[0])] * 2,
                             f"oracle, d_e={int(st['width'].max())}", **ORACLE_STYLE)
        ax.set(yscale="log", title=f"q={q}, N={N}", xlabel="training step", ylabel="normalized test loss")
    return _finish(fig, axes, "Training: normalized test loss vs step")


def separation_figure(table: pd.DataFrame, oracle: pd.DataFrame):
    """(b) Final loss vs width (FCN: m; transformer: d + d_e) per (q, N), with the FCN's exact width floor."""
    df = table[(table["split"] == "eval") & (table["metric"] == LOSS) & (table["status"] == OK)
               & (table["N_eval"] == table["N"])].copy()
    if df.empty:
        return _empty("no in-distribution evaluations in the table")
    df["model width"] = np.where(_is_fcn(df), df["width"], df["d"] + df["width"])
    fig, axes, qs, Ns = _grid(df)
    for q, N, ax, sub in _panels(axes, df, qs, Ns):
        for arch in _archs(sub):
            a = sub[sub["arch"] == arch]
            colour = sns.color_palette(COLOURS[arch], 4)[-1]
            sns.lineplot(a, x="model width", y="value", errorbar=BAND, marker=MARKERS[arch], color=colour, ax=ax,
                         label=arch)
        if (_is_fcn(sub)).any():
            d = int(sub["d"].iloc[0])
            m = np.unique(np.geomspace(1, max(sub["model width"].max(), N * d) * 2, 200).astype(int))
            ax.plot(m, [width_floor(N, d, q, int(k)) for k in m], color="black", lw=1.2,
                    label="FCN width floor (exact)")
            ax.axvline(N * d, color="grey", lw=0.8, ls=":", label="m = N d")
        ax.set(xscale="log", title=f"q={q}, N={N}", xlabel="width (FCN: m, transformer: d + d_e)",
               ylabel="normalized loss", ylim=(-0.03, 1.1))
    return _finish(fig, axes, "Separation: final normalized loss vs width, and the FCN's exact width floor")


def length_figure(table: pd.DataFrame, oracle: pd.DataFrame):
    """(c) Normalized loss vs N'/N for the transformers, one panel per (q, N); the oracle at each N'."""
    df = table[(table["split"] == "eval") & (table["metric"] == LOSS) & ~_is_fcn(table)].copy()
    if df.empty:
        return _empty("no transformer evaluations in the table")
    df["N'/N"] = df["N_eval"] / df["N"]
    df, order, palette = _with_labels(df)
    projection = table[(table["split"] == "eval") & (table["metric"] == PROJECTION) & (table["arch"] == STOCHASTIC)]
    fig, axes, qs, Ns = _grid(df)
    for q, N, ax, sub in _panels(axes, df, qs, Ns):
        _lines(ax, sub, "N'/N", order, palette, legend=True, alpha=0.9)
        st = sub[sub["arch"] == STOCHASTIC]
        if not st.empty:
            d_e = st["width"].max()
            proj = projection[(projection["q"] == q) & (projection["N"] == N) & (projection["width"] == d_e)]
            if not proj.empty:
                mean = proj.groupby("N_eval")["value"].mean()
                _oracle_line(ax, mean.index / N, mean.values, f"its ground-truth projection, d_e={int(d_e)}",
                             **ORACLE_STYLE)
            o = _oracle_at(oracle, q, N, d_e)
            if not o.empty:
                _oracle_line(ax, o["N_eval"] / N, o[LOSS].values, f"oracle at each N', d_e={int(d_e)}",
                             color="grey", ls=":", lw=1.5)
        ax.set(xscale="log", yscale="log", title=f"q={q}, trained at N={N}", ylabel="normalized loss")
        ticks = sorted(sub["N'/N"].unique())
        ax.set_xticks(ticks, [f"{x:g}" for x in ticks])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    return _finish(fig, axes, "Length generalization: loss at N' = N x factor, stochastic vs fixed PE")


def mechanism_figure(table: pd.DataFrame, oracle: pd.DataFrame):
    """(d) Attention on y, evenness inside y and the ground-truth cosines over training, per (q, N)."""
    df = table[(table["split"] == "test") & table["metric"].isin(list(MECHANISM_METRICS))]
    if df.empty:
        return _empty("no transformer curves in the table")
    df, order, palette = _with_labels(df)
    groups = sorted(df.groupby(["q", "N"]).groups)
    metrics = [m for m in MECHANISM_METRICS if m in set(df["metric"])]
    fig, axes = plt.subplots(len(groups), len(metrics), figsize=(3.0 * len(metrics), 2.6 * len(groups) + 0.8),
                             squeeze=False)
    for i, (q, N) in enumerate(groups):
        for j, metric in enumerate(metrics):
            ax = axes[i, j]
            sub = df[(df["q"] == q) & (df["N"] == N) & (df["metric"] == metric)]
            _lines(ax, sub, "step", order, palette, legend=True, markers=False)
            label = MECHANISM_METRICS[metric]
            ax.set(title=f"q={q}, N={N}", xlabel="training step" if i == len(groups) - 1 else "",
                   ylabel=label if j == 0 else "", ylim=(-0.05 if metric.startswith("cos") else 0, 1.05))
            if i == 0:
                ax.set_title(f"{label}\nq={q}, N={N}")
    return _finish(fig, axes, "Mechanism over training: attention on y, its evenness, and the ground-truth directions")


def scaling_figure(table: pd.DataFrame, oracle: pd.DataFrame):
    """(e) The separation as scaling: the width needed to reach loss EPSILON against N d (FCN, with the
    exact floor's m*(eps)) and against q log N (transformer), log-log, censored points open; and the
    transformer's loss against d_e beside its oracle."""
    ev = table[(table["split"] == "eval") & (table["metric"] == LOSS) & (table["status"] == OK)]
    if ev.empty:
        return _empty("no evaluations in the table")
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    for ax, arch, xlabel in ((axes[0], FCN_ARCH, "N d"), (axes[1], STOCHASTIC, "q log N")):
        need = needed_widths(ev, arch)
        colour = sns.color_palette(COLOURS[arch], 4)[-1]
        for q, g in need.groupby("q"):
            g = g.assign(x=scale_of(arch, g["q"], g["N"], g["d"]))
            med = g.groupby(["N", "x"], as_index=False).agg(width=("width", "median"), censored=("censored", "all"),
                                                            lo=("width", "min"), hi=("width", "max"))
            ax.plot(med["x"], med["width"], color=colour, lw=1, alpha=0.7)
            ax.vlines(med["x"], med["lo"], med["hi"], color=colour, lw=3, alpha=0.35)
            for c, face in ((False, colour), (True, "white")):
                pts = med[med["censored"] == c]
                if len(pts):
                    ax.scatter(pts["x"], pts["width"], marker=MARKERS[arch], s=45, facecolor=face, edgecolor=colour,
                               zorder=3, label=f"q={q}" + (" (not reached: > largest width)" if c else ""))
            x0, w0 = float(med["x"].iloc[0]), float(med["width"].iloc[0])
            xs = np.geomspace(med["x"].min(), med["x"].max(), 20)
            ax.plot(xs, w0 * xs / x0, color="grey", ls=":", lw=1, label=f"proportional to {xlabel}")
            if arch == FCN_ARCH:
                N_grid = np.unique(np.geomspace(g["N"].min(), g["N"].max(), 50))
                d = int(g["d"].iloc[0])
                ax.plot(N_grid * d, [width_needed(N, d, q, EPSILON) for N in N_grid], color="black", lw=1.2,
                        label=f"exact floor m*({EPSILON:g}), q={q}")
        ax.set(xscale="log", yscale="log", xlabel=xlabel,
               ylabel=f"{experiment.width_name(arch)} needed for loss <= {EPSILON:g}",
               title=f"{arch}: width needed vs {xlabel}")
        if not need.empty:  # ticks at the measured points: the N of the sweep, the widths of the grid
            xs = sorted(set(scale_of(arch, need["q"], need["N"], need["d"]).round(3)))
            ax.set_xticks(xs, [f"{x:.3g}" for x in xs])
            ws = sorted(set(need["width"]))
            ax.set_yticks(ws, [str(int(w)) for w in ws])
            for axis in (ax.xaxis, ax.yaxis):
                axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.legend(fontsize=8, loc="upper left")
    ax = axes[2]
    st = ev[(ev["arch"] == STOCHASTIC) & (ev["N_eval"] == ev["N"])]
    if not st.empty:
        st = st.assign(group=[f"q={q}, N={N}" for q, N in zip(st["q"], st["N"])])
        groups = sorted(st["group"].unique(), key=lambda s: tuple(int(x.split("=")[1]) for x in s.split(", ")))
        palette = dict(zip(groups, sns.color_palette("viridis", len(groups))))
        sns.lineplot(st, x="width", y="value", hue="group", hue_order=groups, palette=palette, marker="o",
                     errorbar=BAND, ax=ax)
        for grp in groups:
            q, N = (int(x.split("=")[1]) for x in grp.split(", "))
            o = oracle[(oracle["q"] == q) & (oracle["N"] == N) & (oracle["N_eval"] == N)].sort_values("width")
            if not o.empty:
                ax.plot(o["width"], o[LOSS].clip(lower=1e-4), color=palette[grp], ls="--", lw=1)
        ax.plot([], [], label="oracle (dashed; drawn at 1e-4 where below)", **ORACLE_STYLE)
        ax.legend(fontsize=8)
        ax.set(xscale="log", yscale="log", xlabel="d_e", ylabel="normalized loss at N' = N",
               title="tf_stochastic: loss vs d_e, and its oracle")
        widths = sorted(st["width"].unique())
        ax.set_xticks(widths, [str(int(w)) for w in widths])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    _title(fig, "Scaling: the FCN needs width ~ N d, the transformer ~ q log N",
           note="needed width: median over seeds, bar = seed range; right: mean loss, band = seed range")
    return fig


# One drawing function per figure of stsq.experiment.FIGURES.
FIGURES = {"training": training_figure, "separation": separation_figure, "length": length_figure,
           "mechanism": mechanism_figure, "scaling": scaling_figure}
assert FIGURES.keys() == experiment.FIGURES.keys(), "every figure of stsq.experiment has a drawing"


def save_figure(fig, paths) -> None:
    """Write the figure to every path (format from the suffix), atomically; close it."""
    import io
    fig.tight_layout()
    for p in paths:
        buf = io.BytesIO()
        fig.savefig(buf, format=Path(p).suffix.lstrip("."), dpi=130, metadata=_fixed_metadata(p),
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
