"""The figures, drawn from the tidy metrics table (seaborn; PDF and PNG).

Every line is the mean over seeds and its band spans the seeds (min to max).
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
from .experiment import ARCHS, FCN_ARCH, LOSS, MECHANISM_METRICS, OK  # noqa: E402
from .files import atomic_write_bytes  # noqa: E402
from .theory import width_floor  # noqa: E402

BAND = ("pi", 100)  # min-to-max over seeds
PALETTE = dict(zip(ARCHS, ["tab:blue", "tab:orange", "tab:green", "tab:red"]))
sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)


def _archs(df):
    return [a for a in ARCHS if a in set(df["arch"])]


def _is_fcn(df):
    return df["arch"] == FCN_ARCH


def _size(df: pd.DataFrame) -> pd.Series:
    """The width as a label: d_e for a transformer, m for the FCN."""
    return pd.Series(np.where(_is_fcn(df), "m=", "d_e="), index=df.index) + df["width"].astype(str)


def _size_order(df):
    keys = df[["arch", "width", "size"]].drop_duplicates()
    keys = keys.assign(fcn=_is_fcn(keys)).sort_values(["fcn", "width"])
    return list(dict.fromkeys(keys["size"]))


def _lines(ax, sub, x, legend, **kw):
    """Mean over seeds with a min-max band; colour = arch, dash = width."""
    sns.lineplot(sub, x=x, y="value", hue="arch", hue_order=_archs(sub), palette=PALETTE, style="size",
                 style_order=_size_order(sub), errorbar=BAND, ax=ax, legend=legend, **kw)
    if legend and ax.get_legend() is not None:
        sns.move_legend(ax, "upper left", bbox_to_anchor=(1.02, 1), fontsize=8, title=None)


def _grid(df, n_extra_cols=0, width=4.0, height=3.2):
    qs, Ns = sorted(df["q"].unique()), sorted(df["N"].unique())
    cols = len(Ns) + n_extra_cols
    fig, axes = plt.subplots(len(qs), cols, figsize=(max(8.0, width * cols + 2), height * len(qs) + 0.6),
                             squeeze=False)
    return fig, axes, qs, Ns


def _panels(axes, df, qs, Ns):
    """(i, j, q, N, axis, rows of (q, N)) of every panel of the (q, N) grid."""
    for i, q in enumerate(qs):
        for j, N in enumerate(Ns):
            yield i, j, q, N, axes[i, j], df[(df["q"] == q) & (df["N"] == N)]


def _title(fig, text):
    fig.suptitle(f"{text}\n(mean over seeds, band = seed range)")


def _empty(message):
    fig, ax = plt.subplots(figsize=(5, 2))
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center")
    return fig


def training_figure(table: pd.DataFrame):
    """(a) Normalized test loss vs step, per arch and width, one panel per (q, N)."""
    df = table[(table["split"] == "test") & (table["metric"] == LOSS)].copy()
    if df.empty:
        return _empty("no training curves in the table")
    df["size"] = _size(df)
    fig, axes, qs, Ns = _grid(df)
    for i, j, q, N, ax, sub in _panels(axes, df, qs, Ns):
        _lines(ax, sub, "step", legend=(i == 0 and j == len(Ns) - 1))
        ax.set(yscale="log", title=f"q={q}, N={N}", xlabel="training step", ylabel="normalized test loss")
    _title(fig, "Training: normalized test loss vs step")
    return fig


def separation_figure(table: pd.DataFrame):
    """(b) Normalized loss vs model width (FCN: m, transformer: d + d_e), FCN width floor drawn;
    last column: loss vs N d."""
    df = table[(table["split"] == "eval") & (table["metric"] == LOSS) & (table["status"] == OK)
               & (table["N_eval"] == table["N"])].copy()
    if df.empty:
        return _empty("no in-distribution evaluations in the table")
    df["model width"] = np.where(_is_fcn(df), df["width"], df["d"] + df["width"])
    fig, axes, qs, Ns = _grid(df, n_extra_cols=1)
    for i, q in enumerate(qs):
        for j, N in enumerate(Ns):
            ax, sub = axes[i, j], df[(df["q"] == q) & (df["N"] == N)]
            sns.lineplot(sub, x="model width", y="value", hue="arch", hue_order=_archs(sub), palette=PALETTE,
                         errorbar=BAND, marker="o", ax=ax, legend=(i == 0 and j == 0), alpha=0.85)
            fcn = sub[_is_fcn(sub)]
            if not fcn.empty:
                d = int(fcn["d"].iloc[0])
                m = np.unique(np.geomspace(1, max(fcn["width"].max(), N * d) * 2, 200).astype(int))
                ax.plot(m, [width_floor(N, d, q, int(k)) for k in m], "k--", lw=1, label="FCN width floor")
                ax.axvline(N * d, color="grey", lw=0.8, ls=":")
            if i == 0 and j == 0:
                ax.legend(fontsize=8, loc="lower left")
            ax.set(xscale="log", title=f"q={q}, N={N} (dotted: m = N d)", ylabel="normalized loss", ylim=(-0.03, 1.1))
        ax = axes[i, -1]
        best = (df[df["q"] == q].groupby(["arch", "N", "d", "width", "model width"], as_index=False)["value"].mean())
        best = best.loc[best.groupby(["arch", "N"])["value"].idxmin()]
        best["N d"] = best["N"] * best["d"]
        sns.lineplot(best, x="N d", y="value", hue="arch", hue_order=_archs(best), palette=PALETTE, marker="o",
                     ax=ax, legend=False)
        ax.set(xscale="log", title=f"q={q}: best width per arch vs N d", ylabel="normalized loss", ylim=(-0.03, 1.1))
    _title(fig, "Separation: final normalized loss vs width (FCN: m; transformer: d + d_e)")
    return fig


def length_figure(table: pd.DataFrame):
    """(c) Normalized loss vs N'/N for the transformers, one panel per (q, N)."""
    df = table[(table["split"] == "eval") & (table["metric"] == LOSS) & ~_is_fcn(table)].copy()
    if df.empty:
        return _empty("no transformer evaluations in the table")
    df["N'/N"] = df["N_eval"] / df["N"]
    df["size"] = _size(df)
    fig, axes, qs, Ns = _grid(df)
    for i, j, q, N, ax, sub in _panels(axes, df, qs, Ns):
        _lines(ax, sub, "N'/N", legend=(i == 0 and j == len(Ns) - 1), marker="o")
        ax.set(xscale="log", yscale="log", title=f"q={q}, trained at N={N}", ylabel="normalized loss")
        ticks = sorted(sub["N'/N"].unique())
        ax.set_xticks(ticks, [f"{x:g}" for x in ticks])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    _title(fig, "Length generalization: loss at N' = N x factor, stochastic vs fixed PE")
    return fig


def mechanism_figure(table: pd.DataFrame):
    """(d) Attention on y, evenness inside y and the ground-truth cosines over training."""
    df = table[(table["split"] == "test") & table["metric"].isin(list(MECHANISM_METRICS))].copy()
    if df.empty:
        return _empty("no transformer curves in the table")
    df["size"] = _size(df)
    groups = sorted(df.groupby(["q", "N"]).groups)
    metrics = [m for m in MECHANISM_METRICS if m in set(df["metric"])]
    fig, axes = plt.subplots(len(groups), len(metrics), figsize=(4 * len(metrics) + 2, 3.2 * len(groups) + 0.6),
                             squeeze=False)
    for i, (q, N) in enumerate(groups):
        for j, metric in enumerate(metrics):
            ax = axes[i, j]
            sub = df[(df["q"] == q) & (df["N"] == N) & (df["metric"] == metric)]
            _lines(ax, sub, "step", legend=(i == 0 and j == len(metrics) - 1))
            label = MECHANISM_METRICS[metric]
            ax.set(title=f"q={q}, N={N}: {label}", xlabel="training step", ylabel=label,
                   ylim=(-0.05 if metric.startswith("cos") else 0, 1.05))
    _title(fig, "Mechanism over training: attention on y, its evenness, and the ground-truth directions")
    return fig


# One drawing function per figure of stsq.experiment.FIGURES.
FIGURES = {"training": training_figure, "separation": separation_figure, "length": length_figure,
           "mechanism": mechanism_figure}
assert FIGURES.keys() == experiment.FIGURES.keys(), "every figure of stsq.experiment has a drawing"


def save_figure(fig, paths) -> None:
    """Write the figure to every path (format from the suffix), atomically; close it."""
    import io
    fig.tight_layout()
    for p in paths:
        buf = io.BytesIO()
        fig.savefig(buf, format=Path(p).suffix.lstrip("."), dpi=150, metadata=_fixed_metadata(p))
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
