"""The claims of sparse token retrieval (Mousavi-Hosseini, Sanford, Wu, Erdogdu, NeurIPS 2025; docs/retrieval.md),
measured from a samples sweep's table (stsq.samples.table).

Each is read at one threshold, ``AT`` (a test loss of 0.3 x the trivial loss), on the curve of samples against N
of its arch: the slope of log samples against log N, per seed and of the seeds' median, over the N before the first
N where a seed stopped at the cap.  Past that N the growth is only bounded from below (``floor``, the lowest seed's
slope from the smallest N to that N with its samples at the cap): an "at least" claim may read it, an "at most"
claim may not.  The table at the other thresholds (tables/slopes.csv) shows whether the ordering hinges on this one.
"""

from __future__ import annotations

import math

import pandas as pd

from stsq.core.claim_records import Claim
from stsq.samples.table import curve, slope_row

AT = 0.3  # the threshold the claims read, relative to the trivial loss
SMALL_POWER = 0.5  # "almost independent of N": every seed's slope below this (N^0.5 and N rejected)
LIKE_N = 0.75  # "at least about N samples": every seed's growth at least this (N^0.5 rejected)
MUCH_LESS = 0.5  # "much less on the simple task": the general task's slope exceeds the simple one's by this
GROWS = 0.5  # "grows with N": every seed's growth at least this (N^0 rejected)
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


def _low(s: dict) -> float:
    """The lowest growth the curve shows: its lowest seed's fitted slope, or where an N was censored and fewer
    than two N were fitted, the floor up to that N."""
    return s["slope_low"] if _fit_points(s) >= 2 else s["floor"]


def _modes(table, arch, q=1):
    return [m for m in ("general", "simple") if not _curve(table, arch, q, m).empty]


def _fit_points(s: dict) -> int:
    return len(s["Ns"].split())


def measure_tf_small_power(c: Claim, table: pd.DataFrame) -> list[dict]:
    rows = []
    for mode in _modes(table, TRANSFORMER):
        g = _curve(table, TRANSFORMER, 1, mode, heads=1)
        if g.empty:
            continue
        s = _slope(g)
        if s["censored_Ns"] or _fit_points(s) < 3:
            rows.append(c.untested(1, "all", "all", f"{mode}: {_slope_text(s)}: the growth is not measured at three "
                                   "N with every seed below the cap, so it is not bounded from above", mode))
            continue
        ok = s["slope_high"] < SMALL_POWER
        rows.append(c.judged(1, "all", "all", mode, f"{mode}: {_slope_text(s)}; "
                             + ("rejects N^0.5 and N (every seed below 0.5)" if ok else
                                "a seed's slope is 0.5 or more: N^0.5 not rejected"), s["slope_high"], ok))
    return rows


def measure_ffn_like_n(c: Claim, table: pd.DataFrame) -> list[dict]:
    rows = []
    for mode in _modes(table, FFN):
        s = _slope(_curve(table, FFN, 1, mode))
        low = _low(s)
        if math.isnan(low):
            rows.append(c.untested(1, "all", "all", f"{mode}: {_slope_text(s)}: no growth measured or bounded", mode))
            continue
        ok = low >= LIKE_N
        rows.append(c.judged(1, "all", "all", mode, f"{mode}: {_slope_text(s)}; "
                             + (f"rejects N^0.5 (every seed's growth {LIKE_N:g} or more)" if ok else
                                f"a seed's growth is below {LIKE_N:g}: N^0.5 not rejected"), low, ok))
    return rows


def measure_rnn_modes(c: Claim, table: pd.DataFrame) -> list[dict]:
    modes = _modes(table, RNN)
    if modes != ["general", "simple"]:
        return [c.untested(1, "all", "all", "the sweep trains the RNN in one mode only")]
    general, simple = (_slope(_curve(table, RNN, 1, m)) for m in modes)
    if math.isnan(_low(general)) or _fit_points(simple) < 2 or simple["censored_Ns"]:
        return [c.untested(1, "all", "all", f"general: {_slope_text(general)}; simple: {_slope_text(simple)}: "
                           "the general task's growth is not measured, or the simple task's not at two N below the "
                           "cap")]
    gap = _low(general) - simple["slope_high"]
    ok = _low(general) >= GROWS and simple["slope_high"] < SMALL_POWER and gap >= MUCH_LESS
    return [c.judged(1, "all", "all", "", f"general: {_slope_text(general)}; simple: {_slope_text(simple)}; the "
                     f"general's lowest seed exceeds the simple's highest by {gap:.2f}"
                     + ("" if simple["slope_high"] < SMALL_POWER else
                        f"; the simple task's samples grow at N^{simple['slope_high']:.2f}, not almost flat"),
                     gap, ok)]


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
    "qstr_tf_samples", "A one-layer transformer learns 1STR with a number of samples almost independent of N",
    f"the samples to {_THRESHOLD_WORDS}, against N, of the one-head transformer at q = 1: the slope of log samples "
    "against log N per seed (one row per mode)",
    f"PASS if every seed's slope is below {SMALL_POWER:g}: the samples grow more slowly than N^0.5, so the FFN's "
    "law N and the small power N^0.5 are both rejected; FAIL otherwise",
    "the theorem gives samples polylogarithmic in N; N^0.5 is the nearest power law it denies",
    presupposes="every seed reached the threshold at three N or more", task=_TASK, tested_by=("qstr",),
    value="the highest seed's slope", scope="sweep", measure=measure_tf_small_power, figures=("samples",))

ffn_like_n = Claim(
    "qstr_ffn_samples", "A feed-forward net needs at least about N samples, even on the simple task",
    f"the samples to {_THRESHOLD_WORDS}, against N, of the FFN on the flattened sequence: the slope of log "
    "samples against log N per seed over the N below the cap (one row per mode); with fewer than two such N, the "
    "floor of the growth up to the first N at the cap",
    f"PASS if every seed's growth is at least {LIKE_N:g}: N^0.5 is rejected; FAIL otherwise",
    "the lower bound is Omega(N) samples; 0.75 lies between the small power 0.5 and N's 1",
    presupposes="a growth measured at two N, or bounded from below by the cap", task=_TASK, tested_by=("qstr",),
    value="the lowest seed's growth", scope="sweep", measure=measure_ffn_like_n, figures=("samples",))

rnn_modes = Claim(
    "qstr_rnn_modes", "A recurrent net needs N^Omega(1) samples on the general task, and on the simple one almost "
    "no more as N grows",
    f"the samples to {_THRESHOLD_WORDS}, against N, of the bidirectional GRU: its slope in each mode",
    f"PASS if every seed's growth on the general task is at least {GROWS:g} (N^0 rejected), every seed's slope on "
    f"the simple task is below {SMALL_POWER:g}, and the first exceeds the second by {MUCH_LESS:g} or more; FAIL "
    "otherwise",
    "the general task's lower bound is a power of N; on the simple task the RNN's samples are almost flat in N",
    presupposes="a growth on the general task measured or bounded by the cap; the simple task's at two N, none at "
    "the cap",
    task=_TASK, tested_by=("qstr",), value="the general's lowest slope minus the simple's highest", scope="sweep",
    measure=measure_rnn_modes, figures=("samples",))

heads = Claim(
    "qstr_heads", "At q = 2 (this project's two-pointer extension), one attention head does not reach the threshold "
    "where two heads do",
    f"at each N, how many seeds reach {_THRESHOLD_WORDS} within the cap with one head and with two",
    "PASS if no seed with one head reaches it within the cap; FAIL if one does",
    "one head returns one weighted average of the tokens: docs/retrieval.md shows its best loss is (1 - 1/N)/2 "
    "when its weights do not depend on the tokens' contents; a PASS means not within the cap",
    presupposes="every seed with two heads reached the threshold within the cap",
    task=_TASK, tested_by=("qstr",), value="one head's fewest samples (the cap) over two heads' most", scope="sweep",
    measure=measure_heads, figures=("samples",))
