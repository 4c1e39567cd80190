"""The experiment grid of one sweep of config.yaml: its cells, each a ``CellRecord`` with every setting resolved.

A sweep trains every (arch, q, N, d, steps, width) cell for every seed; width is d_e for a transformer and
the hidden width m for the FCN.  ``cell_records`` builds each cell's record once (the learning rate after
its width scaling, the position range, the sweep's batch and logging settings); the workflow hands it
whole to the cell's training job.  No torch here: this runs at DAG-parse time.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import fields

import pandas as pd

from stsq.core.experiment import AXES, DEFAULTS, CellRecord, eval_factors, extra_axes

__all__ = ["as_list", "cell_records", "cells", "oracle_widths", "position_range"]


def position_range(sweep: dict) -> int:
    """L, the range randomized positions are drawn from: the sweep's ``position_range``, by default its
    largest evaluation length N' (largest N x largest factor)."""
    if sweep.get("position_range"):
        return int(sweep["position_range"])
    return max(sweep["N"]) * max(eval_factors(sweep["eval_length_factors"]))


def cell_lr(arch: dict, width: int) -> float:
    """The learning rate of a cell: the arch's lr, scaled down as (reference / width)^exponent for widths
    above ``lr_reference_width`` (``lr_width_exponent``, 0 by default: the same lr at every width)."""
    exponent = arch.get("lr_width_exponent", DEFAULTS["lr_width_exponent"])
    reference = arch.get("lr_reference_width", DEFAULTS["lr_reference_width"])
    return float(arch["lr"]) * min(1.0, reference / width) ** exponent


def as_list(value) -> list:
    """A grid axis given as one number or a list of them."""
    return list(value) if isinstance(value, list | tuple) else [value]


def problem_size(relative_to: str, q: int, N: int, d: int) -> float:
    """The size a relative width is a multiple of: N d (the FCN's floor), or q log N (the transformer's
    near-orthogonal encodings)."""
    return N * d if relative_to == "N d" else q * math.log(N)


def at_N(a: dict, key: str, N: int, default):
    """What an arch's per-N setting (``widths_by_N``, ``steps_by_N``) names at N, else ``default``.  Its keys may be
    text: a sweep passed to a command as JSON (``--sweep-json``) names N as a string."""
    return {int(k): v for k, v in a.get(key, {}).items()}.get(int(N), default)


def arch_widths(a: dict, q: int, N: int, d: int) -> list[int]:
    """The widths of an arch at one (q, N, d): the list ``widths_by_N`` names at N, else ``widths``: the absolute
    list, or ``factors`` (those of ``factors_by_q`` at a q it names) x its problem size (``relative_to``), rounded,
    at least 1, without repeats."""
    w = at_N(a, "widths_by_N", N, a["widths"])
    if isinstance(w, list):
        return [int(x) for x in w]
    size = problem_size(w["relative_to"], q, N, d)
    factors = w.get("factors_by_q", {}).get(q, w["factors"])
    return sorted({max(1, round(f * size)) for f in factors})


def arch_steps(a: dict, N: int) -> list[int]:
    """The budgets (steps) of an arch at one N: those ``steps_by_N`` names there, else ``steps``."""
    return as_list(at_N(a, "steps_by_N", N, a["steps"]))


ARCH_AXES = ("q", "N", "d")  # the shape axes an arch may restrict to a subset of the sweep's


def arch_axis(sweep: dict, arch: str, axis: str) -> list:
    """The values of ``axis`` (q, N or d) an arch trains at: its own list where it has one (a subset of
    the sweep's), else the sweep's."""
    return as_list(sweep["archs"][arch].get(axis, sweep[axis]))


def arch_shapes(sweep: dict, arch: str) -> list[tuple[int, int, int]]:
    """The (q, N, d) an arch trains at: the product of its axes (``arch_axis``), less the shapes matching an
    entry of its ``exclude`` (a partial (q, N, d))."""
    out = []
    for shape in itertools.product(*(arch_axis(sweep, arch, k) for k in ARCH_AXES)):
        named = dict(zip(ARCH_AXES, shape))
        if not any(all(named[k] == v for k, v in e.items()) for e in sweep["archs"][arch].get("exclude", [])):
            out.append(shape)
    return out


DERIVED = ("lr", "position_range")  # settings computed from the config, not copied from it


def cell_records(sweep: dict) -> list[CellRecord]:
    """Every cell of the sweep, each with every setting resolved, in the grid's order (arch, then q, N, d,
    steps, width, then any further axis).

    The shape: an arch's q, N and d (its own lists, or the sweep's), its budgets at each N (``arch_steps``) and
    its widths at each (q, N, d) (``arch_widths``).  Any other field of ``CellRecord`` is read from the arch's
    entry, else from the sweep, else it keeps its default; a further axis (a field marked ``AXIS``) may be a list
    there, one cell per value.  Derived: the learning rate after its width scaling (``cell_lr``), and the position
    range L of an arch that draws positions from one (``position_range``; else 0)."""
    from stsq.core.experiment import uses_position_range

    defaults = {f.name: f.default for f in fields(CellRecord)}
    extra = extra_axes()
    settings = [k for k in CellRecord.keys() if k not in AXES and k not in DERIVED]
    records = []
    for arch, a in sweep["archs"].items():
        def read(key, a=a):
            return a.get(key, sweep.get(key, defaults[key]))

        fixed = {k: read(k) for k in settings}
        L = position_range(sweep) if uses_position_range(arch) else 0
        for q, N, d in arch_shapes(sweep, arch):
            for steps, width in ((s, w) for s in arch_steps(a, N) for w in arch_widths(a, q, N, d)):
                for more in itertools.product(*(as_list(read(k)) for k in extra)):
                    records.append(CellRecord.from_dict(
                        {"arch": arch, "q": q, "N": N, "d": d, "steps": steps, "width": width,
                         **dict(zip(extra, more)), **fixed, "lr": cell_lr(a, int(width)), "position_range": L},
                        f"sweep cell {arch} q={q} N={N} d={d} steps={steps} width={width}"))
    return records


def cells(sweep: dict) -> pd.DataFrame:
    """The grid as a table of its axes, one row per cell (for ``snakemake.utils.Paramspace``)."""
    return pd.DataFrame([r.axes() for r in cell_records(sweep)], columns=list(AXES))


def samples(sweep: dict, key: str) -> int:
    """Monte Carlo samples per N' of the oracle (``oracle_samples``) or of a model's projection
    (``projection_samples``): the defaults, fewer in a pilot (stsq.cluster.pilot.pilot_sweep)."""
    return int(sweep.get(key, DEFAULTS[key]))


def oracle_widths(sweep: dict) -> dict[tuple[int, int], list[int]]:
    """The d_e the oracle is computed at for each (q, N): those of the archs whose claims read it (the
    paper's model, and positions drawn from a range); one oracle job per (q, N)."""
    from stsq.core.experiment import paper_model, reading, uses_position_range

    out: dict = {}
    with reading(sweep["archs"]):
        paper = paper_model()
    for r in cells(sweep).itertuples():
        if r.arch == paper or uses_position_range(r.arch):
            out.setdefault((int(r.q), int(r.N)), set()).add(int(r.width))
    return {k: sorted(v) for k, v in out.items()}
