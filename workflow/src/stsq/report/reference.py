"""The committed reference of a sweep, and whether a run reproduces it.

``reference/<sweep>/`` holds a clean run's small tables (``TABLES``: the claims, critical widths, reach,
encodings, oracle, and the evaluation rows of the tidy table) and its ``provenance.json``.  ``freeze`` writes
it from ``results/<sweep>``; ``compare`` reads a run beside it and says:

- the verdicts that agree (every claims row, k of n): verdicts must agree, whatever the machine;
- the numbers within tolerance (k of n), and the largest differences with their rows;
- the provenance of both sides: the code versions and the machines.

The tolerance depends on where the two runs came from (``tolerance``).  The same code on the same CPU model
gives the same bits (docs/robustness.md), so there it is 0.  Elsewhere a number may differ by ``RELATIVE``
of its size, or by ``ABSOLUTE``: another CPU's BLAS sums in another order, and the difference grows along
training (the values below).
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from stsq.core.errors import PipelineError
from stsq.core.experiment import model_keys
from stsq.core.files import atomic_write_text
from stsq.provenance.sidecars import brief
from stsq.retrieval.cells import RETRIEVAL_AXES
from stsq.samples.table import GROUP

# Across CPUs or code versions (docs/reproducibility.md): between two CPUs the quoted numbers above 0.01 differed by
# at most 1.4 % (an interpolated width ratio, 3.59 against 3.54), and losses by at most 0.0024 (an FCN's gap to its
# floor, 0.0198 against 0.0222); a tiny loss by 12 % (8.9e-6 against 1.01e-5).
RELATIVE = 0.05  # a number may differ by this fraction of its size (3.5x the 1.4 %) ...
ABSOLUTE = 0.005  # ... or by this much (2x the 0.0024), which covers the losses near 0


@dataclass(frozen=True)
class Table:
    """One table of the reference: its file, the columns that name a row, the numbers compared."""

    name: str
    keys: tuple[str, ...]
    numbers: tuple[str, ...]
    words: tuple[str, ...] = ()  # compared exactly (a verdict, a censoring)


TABLES = (  # a row's keys from the vocabulary (stsq.core.experiment.model_keys), not spelled here
    Table("claims.csv", ("claim", "q", "N", "d", "cell"), ("value",), ("verdict",)),
    Table("critical.csv", (*model_keys("width"), "epsilon"), ("critical_width",), ("censored",)),
    Table("reach.csv", (*model_keys(), "step", "final"), ("reach_factor", "loss_at_N"), ("censored",)),
    Table("encodings.csv", (*model_keys("seed"), "N_eval"), ("loss_mean", "loss_min", "loss_max"), ("status",)),
    Table("oracle.csv", ("q", "N", "width", "N_eval"), ("normalized_loss",)),
    Table("evaluation.csv", (*model_keys(), "N_eval", "metric"), ("value",), ("status",)),
)
# A samples sweep's reference (its task measures samples: docs/retrieval.md): the claims, every (cell, seed,
# threshold)'s samples with its censoring, and the slopes.
SAMPLES_TABLES = (
    TABLES[0],
    Table("samples.csv", (*RETRIEVAL_AXES, "seed", "threshold"), ("samples", "test_loss"), ("censored",)),
    Table("slopes.csv", tuple(GROUP), ("slope", "slope_low", "slope_high", "floor"), ("censored_Ns", "Ns")),
)
SAMPLES = "samples.csv"  # the table only a samples sweep has
DIGEST = "claims.md"  # the claims table's digest, which docs/claims.md quotes (stsq.report.quote)
PROVENANCE = "provenance.json"
HEADLINE = "scaling.png"  # the separation, as the README shows it (from reference/cpu)


def _tables(results: Path) -> Path:
    return results / "tables"


def freeze(results, reference) -> list[Path]:
    """Write ``reference`` (a folder) from a finished run ``results`` (results/<sweep>)."""
    results, reference = Path(results), Path(reference)
    tables = _tables(results)
    if (tables / SAMPLES).exists():
        return _freeze_samples(results, reference)
    for name in ("metrics.csv", *(t.name for t in TABLES if t.name != "evaluation.csv"), DIGEST):
        if not (tables / name).exists():
            raise PipelineError(f"{tables / name}: missing; run the sweep to its end first")
    if not (results / PROVENANCE).exists():
        raise PipelineError(f"{results / PROVENANCE}: missing; run the sweep to its end first")
    reference.mkdir(parents=True, exist_ok=True)
    written = []
    for name in (*(t.name for t in TABLES if t.name != "evaluation.csv"), DIGEST):
        shutil.copyfile(tables / name, reference / name)
        written.append(reference / name)
    metrics = pd.read_csv(tables / "metrics.csv", dtype=str, keep_default_na=False)
    evaluation = metrics[metrics["split"] == "eval"].drop(columns=["split", "step"])
    atomic_write_text(reference / "evaluation.csv", evaluation.to_csv(index=False))
    written.append(reference / "evaluation.csv")
    shutil.copyfile(results / PROVENANCE, reference / PROVENANCE)
    written.append(reference / PROVENANCE)
    if (results / "figures" / HEADLINE).exists():  # the picture the README shows
        shutil.copyfile(results / "figures" / HEADLINE, reference / HEADLINE)
        written.append(reference / HEADLINE)
    return written


def _freeze_samples(results: Path, reference: Path) -> list[Path]:
    names = [*(t.name for t in SAMPLES_TABLES), DIGEST]
    for path in [_tables(results) / n for n in names] + [results / PROVENANCE]:
        if not path.exists():
            raise PipelineError(f"{path}: missing; run the sweep to its end first")
    reference.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copyfile(_tables(results) / name, reference / name)
    shutil.copyfile(results / PROVENANCE, reference / PROVENANCE)
    return [reference / n for n in [*names, PROVENANCE]]


def _read(folder: Path, name: str) -> pd.DataFrame:
    if name == "evaluation.csv" and not (folder / name).exists() and (folder / "tables" / "metrics.csv").exists():
        m = pd.read_csv(folder / "tables" / "metrics.csv", dtype=str, keep_default_na=False)
        return m[m["split"] == "eval"].drop(columns=["split", "step"])
    path = folder / name if (folder / name).exists() else folder / "tables" / name
    if not path.exists():
        raise PipelineError(f"{path}: missing")
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _provenance(folder: Path) -> dict:
    path = folder / PROVENANCE
    if not path.exists():
        raise PipelineError(f"{path}: missing; a run writes it at its end (rule landing)")
    return json.loads(path.read_text())


def _origins(prov: dict) -> tuple[set[str], set[str]]:
    """The code versions (commit and code hash of training and evaluation) and the devices of a run's results."""
    stages = (prov.get("rows_from") or {}).get("stages", {})
    codes = {c["version"] for s in ("train", "evaluate", "samples") for c in stages.get(s, {}).get("code", [])}
    devices = {m["machine"].split(",")[0] for s in stages.values() for m in s.get("machines", [])}
    return codes, devices


def _hashes(codes: set[str]) -> set[str]:
    return {c.rsplit("code ", 1)[-1] for c in codes}


def tolerance(run: dict, ref: dict) -> tuple[float, float, str]:
    """(relative, absolute, why): 0 where both sides ran the same code (the code hash of training and evaluation, or of
    a samples sweep's measurement) on
    one CPU model, else ``RELATIVE`` and ``ABSOLUTE``."""
    (run_codes, run_devices), (ref_codes, ref_devices) = _origins(run), _origins(ref)
    same_code = _hashes(run_codes) == _hashes(ref_codes) and len(_hashes(run_codes)) <= 2
    same_device = run_devices == ref_devices and len(run_devices) == 1
    if same_code and same_device:
        return 0.0, 0.0, "the same code on the same CPU model: bit for bit"
    why = [w for w, same in (("other code", same_code), ("another machine", same_device)) if not same]
    return RELATIVE, ABSOLUTE, f"{' and '.join(why)}: within {RELATIVE:g} relative or {ABSOLUTE:g} absolute"


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _close(a: str, b: str, rel: float, abs_: float) -> tuple[bool, float]:
    """Whether two table entries agree, and their relative difference (inf where one is not a number)."""
    if a == b:
        return True, 0.0
    x, y = _number(a), _number(b)
    if x is None or y is None:
        return (a == b), math.inf
    if math.isnan(x) and math.isnan(y):
        return True, 0.0
    gap = abs(x - y)
    scale = max(abs(x), abs(y))
    relative = gap / scale if scale else 0.0
    return (gap <= abs_ or relative <= rel), relative


@dataclass
class Comparison:
    verdicts: tuple[int, int]  # equal, of
    numbers: tuple[int, int]  # within tolerance, of
    flipped: list[str]  # each claims row whose verdict differs
    largest: list[tuple[float, str]]  # the largest relative differences beyond tolerance, with their rows
    missing: list[str]  # rows on one side only
    tolerance: str
    run_provenance: list[str]
    reference_provenance: list[str]

    @property
    def ok(self) -> bool:
        return not self.flipped and not self.missing and self.numbers[0] == self.numbers[1]


def compare(run, reference, top: int = 5) -> Comparison:
    """A run (results/<sweep>) against a reference folder (reference/<sweep>)."""
    run, reference = Path(run), Path(reference)
    run_prov, ref_prov = _provenance(run), _provenance(reference)
    rel, abs_, why = tolerance(run_prov, ref_prov)
    flipped, beyond, missing = [], [], []
    n_verdicts = equal_verdicts = n_numbers = close_numbers = 0
    for t in SAMPLES_TABLES if (reference / SAMPLES).exists() else TABLES:
        a, b = _read(run, t.name), _read(reference, t.name)
        keys = [k for k in t.keys if k in a.columns and k in b.columns]
        if a.duplicated(keys).any() or b.duplicated(keys).any():
            raise PipelineError(f"{t.name}: rows not unique on {', '.join(keys)}")
        for col in [c for c in (*t.numbers, *t.words) if (c in a.columns) != (c in b.columns)]:
            missing.append(f"{t.name}: the column {col} only in {'the run' if col in a.columns else 'the reference'}")
        shared = [c for c in (*t.numbers, *t.words) if c in a.columns and c in b.columns]
        t = Table(t.name, t.keys, tuple(c for c in t.numbers if c in shared), tuple(c for c in t.words if c in shared))
        joined = a.merge(b, on=keys, how="outer", suffixes=("", "@ref"), indicator=True)
        for r in joined[joined["_merge"] != "both"].to_dict("records"):
            side = "the run" if r["_merge"] == "left_only" else "the reference"
            missing.append(f"{t.name} {_row(r, keys)}: only in {side}")
        both = joined[joined["_merge"] == "both"].to_dict("records")
        for r in both:
            where = f"{t.name} {_row(r, keys)}"
            for col in t.words:
                if t.name == "claims.csv" and col == "verdict":
                    n_verdicts += 1
                    if r[col] == r[f"{col}@ref"]:
                        equal_verdicts += 1
                    else:
                        flipped.append(f"{where}: {r[f'{col}@ref']} in the reference, {r[col]} here")
                else:
                    n_numbers += 1
                    if r[col] == r[f"{col}@ref"]:
                        close_numbers += 1
                    else:
                        beyond.append((math.inf, f"{where} {col}: {r[col]} (reference {r[f'{col}@ref']})"))
            for col in t.numbers:
                n_numbers += 1
                ok, gap = _close(r[col], r[f"{col}@ref"], rel, abs_)
                if ok:
                    close_numbers += 1
                else:
                    beyond.append((gap, f"{where} {col}: {r[col]} (reference {r[f'{col}@ref']})"))
    beyond.sort(key=lambda x: -x[0])
    return Comparison((equal_verdicts, n_verdicts), (close_numbers, n_numbers), flipped, beyond[:top], missing, why,
                      brief(run_prov), brief(ref_prov))


def _row(r: dict, keys) -> str:
    return "(" + ", ".join(f"{k}={r[k]}" for k in keys if r.get(k) not in ("", None)) + ")"


def summary(c: Comparison, run, reference) -> str:
    """The short report ``python -m stsq compare`` prints."""
    lines = [f"compare {run} with {reference}:",
             f"  verdicts equal: {c.verdicts[0]} of {c.verdicts[1]}",
             f"  numbers within tolerance: {c.numbers[0]} of {c.numbers[1]} ({c.tolerance})"]
    if c.flipped:
        lines.append("  verdicts that differ:")
        lines += [f"    {f}" for f in c.flipped]
    if c.largest:
        lines.append("  the largest differences beyond tolerance:")
        lines += [f"    {text}" + (f" ({gap:.3g} relative)" if math.isfinite(gap) else "") for gap, text in c.largest]
    if c.missing:
        lines.append(f"  rows on one side only: {len(c.missing)}")
        lines += [f"    {m}" for m in c.missing[:5]]
    for side, said in (("this run", c.run_provenance), ("the reference", c.reference_provenance)):
        lines.append(f"  {side}:")
        lines += [f"    {line}" for line in said]
    lines.append("  REPRODUCED" if c.ok else "  NOT REPRODUCED")
    return "\n".join(lines)
