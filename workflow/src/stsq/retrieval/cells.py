"""The cells of a retrieval sweep (no torch: it runs at DAG-parse time; docs/retrieval.md).

A retrieval sweep (its task's ``measure`` is "samples": stsq.core.tasks) measures, per cell, the samples each model
needs until its test loss falls below each threshold.  A cell is (arch, q, N, d, mode, heads, width): heads is the
transformer's, 0 for a family without attention.  Its record (``SampleCell``) holds every setting, resolved, and
travels to its job as one JSON argument; like a width sweep's CellRecord (both are stsq.core.experiment.Record), it is
rebuilt there from exactly its keys, a missing or an unknown one named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from stsq.core.experiment import Record
from stsq.core.families import FAMILIES


def code_width(N: int) -> int:
    """The authors' d_e: floor(5 ln N), at least 1."""
    return max(1, int(5 * math.log(N)))


RETRIEVAL_AXES = ("arch", "q", "N", "d", "mode", "heads", "width")


@dataclass(frozen=True, kw_only=True)
class SampleCell(Record):
    arch: str
    q: int
    N: int
    d: int
    mode: str  # "general" or "simple" (stsq.retrieval.task.MODES)
    heads: int  # the transformer's attention heads; 0 for a family without attention
    width: int  # the MLP's width after attention, the FFN's last hidden width, the GRU's state
    d_e: int  # the codes' width
    codes: str  # "sign" or "stochastic" (stsq.retrieval.task.CODES)
    test_mode: str  # the mode the test set is drawn in
    lr: float
    weight_decay: float
    batch_size: int
    check_every: int  # steps between two test losses
    n_test: int
    cap: int  # the samples at which training stops short of the lowest threshold (a censored value)
    thresholds: tuple[float, ...]  # test losses, relative to the trivial loss 1, highest first
    log_every: int  # checks between two progress lines
    checkpoint_every: int = 50  # checks between two checkpoints (stsq.samples.run), and one at the end
    task: str = "qstr"  # its task (the sweep's `task`: stsq.core.tasks.TASKS)

    @property
    def path(self) -> str:
        return "/".join(f"{k}~{getattr(self, k)}" for k in RETRIEVAL_AXES)

    def axes(self) -> dict:
        return {k: getattr(self, k) for k in RETRIEVAL_AXES}


def sample_cells(sweep: dict) -> list[SampleCell]:
    """Every cell of a retrieval sweep, in the config's order: arch, q, N, mode, heads."""
    from stsq.core.experiment import ARCHS
    from stsq.core.sweep import as_list

    cells = []
    for arch, a in sweep["archs"].items():
        attention = FAMILIES[ARCHS[arch].family].attention
        for q in as_list(a.get("q", sweep["q"])):
            for N in as_list(a.get("N", sweep["N"])):
                for mode in as_list(a.get("modes", sweep["modes"])):
                    for heads in (as_list(a.get("heads", [1])) if attention else [0]):
                        axes = {"q": q, "N": N, "mode": mode, "heads": heads}
                        if any(all(axes.get(k) == v for k, v in e.items()) for e in a.get("exclude", [])):
                            continue
                        cells.append(SampleCell(
                            arch=arch, q=int(q), N=int(N), d=int(sweep["d"]), mode=mode, heads=int(heads),
                            width=int(a["width"]), d_e=code_width(int(N)), codes=sweep["codes"],
                            test_mode=sweep["test_mode"] or mode, lr=float(a.get("lr", sweep["lr"])),
                            weight_decay=float(sweep["weight_decay"]), batch_size=int(sweep["batch_size"]),
                            check_every=int(a.get("check_every", sweep["check_every"])), n_test=int(sweep["n_test"]),
                            cap=int(a.get("cap", sweep["cap"])),
                            thresholds=tuple(sorted((float(x) for x in sweep["thresholds"]), reverse=True)),
                            log_every=int(sweep["log_every"]), task=sweep["task"]))
    return cells
