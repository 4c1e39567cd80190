"""The claims of sparse token retrieval (Mousavi-Hosseini, Sanford, Wu, Erdogdu, NeurIPS 2025; docs/retrieval.md),
measured from a samples sweep's table (stsq.samples.table).

Each is read at one threshold, ``AT`` (a test loss of 0.3 x the trivial loss), on the curve of samples against N
of its arch.  A scaling claim is a law held out at the largest N, as the width claims are (stsq.claims.rivals):
the law's constant fitted per seed on the smaller N, its prediction at the largest N with measured samples, one-sided,
with a margin from the seeds' spread (their range there plus the range of the per-seed predictions); beside it the
rival law the statement denies, whether the sweep tells it apart (else NOT TESTED), and the power scan: from which
exponent a the same test rejects N^a, each seed's curve moved to grow like it.  A seed stopped at the cap is a bound
(a lower bound on its samples), taken only on the side where it errs toward no FAIL.

The laws (docs/retrieval.md, "The claims as laws"):
- "almost independent of N" (polylogarithmic): ``LOG_N``, samples like log N or slower.  The paper names no power of
  the logarithm; log N is the growth of the codes' width d_e = 5 ln N that every model reads.  Rival: N^0.5.
- "at least about N" ("still require N samples"): ``LIKE_N``, samples like N or faster.  Rival: N^0.5.
- "N^Omega(1)": ``SQRT_N`` or faster (a power of N, the rival the simple mode's law).  Rival: log N.
The slope of log samples against log N, per seed and of the seeds' median, is reported beside each law.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from stsq.claims.rivals import ABOVE, AT_LEAST, NONE, OR_SLOWER, Law
from stsq.claims.rivals import law_row as rivals_law_row
from stsq.claims.rivals import power as rivals_power
from stsq.core.claim_records import OURS, Claim
from stsq.samples.table import curve, slope_row

AT = 0.3  # the threshold the claims read, relative to the trivial loss
# the laws (the module docstring); d plays no part: the points carry d = 1, so that "log(N d)" is log N
LOG_N = Law("log N", None)
SQRT_N = Law("N^0.5", 0.5)
LIKE_N = Law("N", 1.0)
TRANSFORMER, FFN, RNN = "qstr_transformer", "qstr_ffn", "qstr_rnn"


def _curve(table: pd.DataFrame, arch: str, q: int, mode: str, heads: int | None = None):
    g = table[(table["arch"] == arch) & (table["q"] == q) & (table["mode"] == mode) & (table["threshold"] == AT)]
    if heads is not None:
        g = g[g["heads"] == heads]
    return g


def _slope(g: pd.DataFrame) -> dict:
    first = g.iloc[0]
    return slope_row((first["arch"], first["q"], first["mode"], first["heads"], AT), g)


def _list(Ns: str) -> str:
    return Ns.replace(" ", ", ")


def _slope_text(s: dict) -> str:
    text = (f"slope {s['slope']:.2f} (seeds {s['slope_low']:.2f} to {s['slope_high']:.2f}) over N = {_list(s['Ns'])}"
            if _fit_points(s) >= 2 else f"reached at N = {_list(s['Ns']) or 'none'} only: no slope")
    if s["censored_Ns"]:
        first = s["censored_Ns"].split()[0]
        text += f"; a seed stopped at the cap at N = {_list(s['censored_Ns'])}"
        if not math.isnan(s["floor"]):
            text += f", so the growth up to N = {first} is at least {s['floor']:.2f}"
    return text


def _modes(table, arch, q=1):
    return [m for m in ("general", "simple") if not _curve(table, arch, q, m).empty]


def _fit_points(s: dict) -> int:
    return len(s["Ns"].split())


def _points(g: pd.DataFrame) -> pd.DataFrame:
    """One curve's samples as the held-out test reads needs (stsq.claims.rivals.held_out): per (N, seed), the
    samples as the need, a seed stopped at the cap a bound from below (ABOVE)."""
    return pd.DataFrame({"q": g["q"].to_numpy(), "N": g["N"].to_numpy(), "d": 1, "seed": g["seed"].to_numpy(),
                         "critical_width": g["samples"].to_numpy(dtype=float),
                         "censored": np.where(g["censored"].to_numpy(dtype=bool), ABOVE, NONE)})


def _limits(g: pd.DataFrame) -> pd.DataFrame:
    """Where a curve moved along a law becomes a bound: above the cap (its censored rows' samples; none: no cap in
    the table) and below one batch."""
    cap = float(g.loc[g["censored"].astype(bool), "samples"].max()) if g["censored"].astype(bool).any() else math.inf
    return pd.DataFrame({"q": g["q"].iloc[0], "N": sorted(g["N"].unique()), "d": 1, "lo": 1.0, "hi": cap})


def power(g: pd.DataFrame, theory: Law, rival: Law, side: str) -> float | None:
    """The power scan of one curve of samples (stsq.claims.rivals.power): the first exponent whose curve FAILs."""
    return rivals_power(_points(g), _limits(g), theory, rival, side)


def law_row(c: Claim, g: pd.DataFrame, theory: Law, rival: Law, side: str, cell: str, q=1) -> dict:
    """A row of a scaling claim on one curve of samples (stsq.claims.rivals.law_row), headed by its slope."""
    s = _slope(g)
    head = f"{cell}: {_slope_text(s)}" if cell else _slope_text(s)
    return rivals_law_row(c, _points(g), _limits(g), theory, rival, side, head, cell, q)


def measure_tf_small_power(c: Claim, table: pd.DataFrame) -> list[dict]:
    """Per mode: the one-head transformer's samples grow like log N or slower, held out at the largest N."""
    curves = {mode: _curve(table, TRANSFORMER, 1, mode, heads=1) for mode in _modes(table, TRANSFORMER)}
    return [law_row(c, g, LOG_N, SQRT_N, OR_SLOWER, mode) for mode, g in curves.items() if not g.empty]


def measure_ffn_like_n(c: Claim, table: pd.DataFrame) -> list[dict]:
    """Per mode: the FFN's samples grow like N or faster, held out at the largest N below the cap."""
    return [law_row(c, _curve(table, FFN, 1, mode), LIKE_N, SQRT_N, AT_LEAST, mode) for mode in _modes(table, FFN)]


def measure_rnn_modes(c: Claim, table: pd.DataFrame) -> list[dict]:
    """The GRU: on the general task its samples grow like N^0.5 or faster (a power of N), on the simple one like
    log N or slower; a row per mode, each its own law."""
    modes = _modes(table, RNN)
    rows = [law_row(c, _curve(table, RNN, 1, m), *((SQRT_N, LOG_N, AT_LEAST) if m == "general" else
                                                      (LOG_N, SQRT_N, OR_SLOWER)), m) for m in modes]
    missing = [m for m in ("general", "simple") if m not in modes]
    return rows + [c.untested(1, "all", "all", f"the sweep does not train the RNN on the {m} task", m)
                   for m in missing if modes]


def measure_heads(c: Claim, table: pd.DataFrame) -> list[dict]:
    at2 = table[(table["arch"] == TRANSFORMER) & (table["q"] == 2) & (table["threshold"] == AT)]
    if not {1, 2} <= set(at2["heads"]):
        return [c.untested(2, "all", "all", "the sweep trains no transformer with one and with two heads at q = 2")]
    rows = []
    for mode in _modes(table, TRANSFORMER, q=2):
        for N in sorted(set(at2[at2["mode"] == mode]["N"])):
            one, two = (curve(g[g["N"] == N]) for g in (_curve(table, TRANSFORMER, 2, mode, h) for h in (1, 2)))
            if one.empty or two.empty:
                continue
            one, two = one.iloc[0], two.iloc[0]
            if two["censored"]:
                rows.append(c.untested(2, N, int(at2["d"].iloc[0]), f"two heads: {two['censored']:.0f} of "
                                       f"{two['seeds']:.0f} seeds stopped at the cap ({two['high']:.0f} samples) "
                                       "short of the threshold", f"{mode} N={N}"))
                continue
            ok = one["censored"] == one["seeds"]
            reached = one["seeds"] - one["censored"]
            said = (f"one head: no seed reached it by the cap ({one['high']:.0f} samples)" if ok else
                    f"one head: {reached:.0f} of {one['seeds']:.0f} seeds reached it, the first after "
                    f"{one['low']:.0f} samples")
            rows.append(c.judged(2, N, int(at2["d"].iloc[0]), f"{mode} N={N}",
                                 f"{said}; two heads: every seed, median {two['median']:.0f} samples "
                                 f"[{two['low']:.0f}, {two['high']:.0f}]", one["low"] / two["high"], ok))
    return rows


_TASK = "qstr"
_THRESHOLD_WORDS = f"a test loss below {AT:g} x the trivial loss (predicting 0)"

tf_small_power = Claim(
    "qstr_tf_samples", 'On the general task, a one-layer transformer with at least q heads "achieves a sample '
    'complexity almost independent of N" (the paper; here q = 1)',
    f"the samples to {_THRESHOLD_WORDS}, against N, of the one-head transformer at q = 1 (one row per mode): log N "
    "fitted per seed below the largest N and held out there; N^0.5 beside it; the power scan; the slope of log "
    "samples against log N",
    "FAIL if the samples at the largest N lie above log N's prediction by more than the margin (the seeds' range "
    "there plus the per-seed predictions' range); NOT TESTED where the sweep cannot tell N^0.5 from log N; else PASS",
    "almost independent of N: polylogarithmic; the mildest form, log N, is the growth of the codes' width d_e "
    "= 5 ln N; N^0.5 is the nearest power law the statement denies; the power scan says from which a it rejects N^a",
    presupposes="measured samples at two N or more (the largest held out) with two seeds there, no seed at the cap",
    task=_TASK, tested_by=("qstr",), value="the samples at the held-out N over log N's prediction", scope="sweep",
    measure=measure_tf_small_power, figures=("samples",),
    ours=(("simple", "ours: the same on the simple task (the paper states the simple task's N-independence of the "
                     "RNN, not of the transformer)"),), at=AT)

ffn_like_n = Claim(
    "qstr_ffn_samples", 'On the simple task, "feedforward networks still require N samples" (the paper)',
    f"the samples to {_THRESHOLD_WORDS}, against N, of the FFN on the flattened sequence (one row per mode): N "
    "fitted per seed below the largest N with measured samples and held out there; N^0.5 beside it; the power scan; "
    "the slope of log samples against log N and, past the cap, the floor of the growth",
    "FAIL if the samples at the held-out N lie below N's prediction by more than the margin; NOT TESTED where the "
    "sweep cannot tell N^0.5 from N; else PASS",
    "the paper: N samples, a lower bound; N^0.5 is the slower growth it denies (N / log N, a log factor below N, "
    "cannot be told from N^0.5 at N <= 32: 1 - 1/ln N is 0.71 at N = 32)",
    presupposes="measured samples at two N or more with two seeds at the held-out one", task=_TASK, tested_by=("qstr",),
    value="the samples at the held-out N over N's prediction", scope="sweep", measure=measure_ffn_like_n,
    figures=("samples",),
    ours=(("general", "ours: at least about N samples on the general task too (the paper states it of the simple "
                      "task)"),), at=AT)

rnn_modes = Claim(
    "qstr_rnn_modes", 'On the general task "recurrent networks require N^Omega(1) samples"; on the simple one they '
    '"may achieve a complexity almost independent of N" (the paper)',
    f"the samples to {_THRESHOLD_WORDS}, against N, of the bidirectional GRU (one row per mode): on the general "
    "task N^0.5 held out at the largest N, log N beside it; on the simple task log N held out, N^0.5 beside it; the "
    "power scan; the slope of log samples against log N",
    "general: FAIL if the samples at the held-out N lie below N^0.5's prediction by more than the margin; simple: "
    "FAIL if they lie above log N's by more than the margin; NOT TESTED where the sweep cannot tell the rival apart; "
    "else PASS",
    "N^Omega(1): a power of N, here N^0.5, against the simple task's polylogarithmic law; almost independent of N: "
    "log N, as for the transformer",
    presupposes="measured samples at two N or more in each mode, two seeds at the held-out N",
    task=_TASK, tested_by=("qstr",), value="the samples at the held-out N over the law's prediction", scope="sweep",
    measure=measure_rnn_modes, figures=("samples",), at=AT)

heads = Claim(
    "qstr_heads", "ours: at q = 2 (this project's two-pointer target), one attention head does not reach the "
    'threshold where two heads do (the paper: a one-layer transformer learns qSTR "if and only if its number of '
    'attention heads is at least q")',
    f"at each N, how many seeds reach {_THRESHOLD_WORDS} within the cap with one head and with two",
    "PASS if no seed with one head reaches it within the cap; FAIL if one does",
    "one head returns one weighted average of the tokens: docs/retrieval.md shows its best loss is (1 - 1/N)/2 "
    "when its weights do not depend on the tokens' contents; a PASS means not within the cap",
    presupposes="every seed with two heads reached the threshold within the cap",
    task=_TASK, tested_by=("qstr",), value="one head's fewest samples (the cap) over two heads' most", scope="sweep",
    measure=measure_heads, figures=("samples",), kind=OURS, at=AT)
