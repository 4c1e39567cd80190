"""The committed reference of a sweep, and whether a run reproduces it.

``reference/<sweep>/`` holds a clean run's small tables (``TABLES``: the claims, critical widths, reach,
encodings, oracle, and the evaluation rows of the tidy table), its ``provenance.json`` and ``tolerance.csv``: how
far each of its numbers may move on another machine (stsq.report.tolerance).  ``freeze`` writes it from
``results/<sweep>``; ``compare`` reads a run beside it and says:

- the verdicts that agree (every claims row, k of n): verdicts must agree, whatever the machine;
- the numbers within tolerance (k of n), and the largest differences with the tolerance each broke;
- the provenance of both sides: the code versions and the machines, and which stages' code differs.

The same code on the same CPU model (and float path) gives the same bits (docs/robustness.md): there the
tolerance is 0.  Elsewhere each number has its own, from its seeds' noise in the reference.
"""

from __future__ import annotations

import io
import json
import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from stsq.core.errors import PipelineError
from stsq.core.experiment import model_keys
from stsq.core.files import atomic_write_text
from stsq.provenance.sidecars import brief
from stsq.report import tolerance as tol
from stsq.retrieval.cells import RETRIEVAL_AXES
from stsq.samples.table import GROUP, slopes


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
        written = _freeze_samples(results, reference)
    else:
        written = _freeze_widths(results, reference)
    written.append(write_tolerances(reference))
    return written


def _freeze_widths(results: Path, reference: Path) -> list[Path]:
    tables = _tables(results)
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


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    """A table read as text, read again with its types (as the pipeline reads it)."""
    return pd.read_csv(io.StringIO(df.to_csv(index=False)))


def _task_of(claims: pd.DataFrame) -> str | None:
    """The task whose claims a claims table holds."""
    from stsq.claims.judge import claims_of
    from stsq.core.tasks import TASKS
    names = set(claims["claim"])
    best = max(TASKS, key=lambda t: len(names & set(claims_of(t))))
    return best if names & set(claims_of(best)) else None


def _recompute(fn):
    """``fn(seed)`` as text (None where it fails): a table recomputed without one seed."""
    def run(seed):
        try:
            return fn(seed).astype(str)
        except Exception:  # a table without a seed may lack what a derived number needs: it has no jackknife
            return None
    return run


def tolerances(folder) -> pd.DataFrame:
    """Every number ``compare`` reads in a reference (or a run) folder, with how far it may move on another machine
    (stsq.report.tolerance): per seed from its seeds' spread; derived numbers (slopes, claims' values) by the
    jackknife over seeds, recomputed from the folder's own per-seed table."""
    from stsq.claims.judge import evaluate_claims
    folder = Path(folder)
    samples = (folder / SAMPLES).exists() or (_tables(folder) / SAMPLES).exists()
    claims = _read(folder, "claims.csv")
    task = _task_of(claims)
    if samples:
        per_seed, oracle = _typed(_read(folder, SAMPLES)), None
    else:
        per_seed = _typed(_read(folder, "evaluation.csv")).assign(split="eval")
        per_seed["step"] = per_seed["steps"]
        oracle = _typed(_read(folder, "oracle.csv"))
    seeds = sorted(per_seed["seed"].unique())

    def without(seed):
        """The per-seed table without ``seed``; with two seeds, the other seed twice (relabelled ``seed``), so that a
        number read over two seeds (a margin from their range) is still defined."""
        if seed is None:
            return per_seed
        rest = per_seed[per_seed["seed"] != seed]
        if len(seeds) != 2:
            return rest
        return pd.concat([rest, rest.assign(seed=seed)], ignore_index=True)
    derive = {"claims.csv": _recompute(lambda s: evaluate_claims(without(s), oracle, task)) if task else None,
              "slopes.csv": _recompute(lambda s: slopes(without(s)))}
    rows = []
    for t in SAMPLES_TABLES if samples else TABLES:
        ref = _read(folder, t.name)
        keys = [k for k in t.keys if k in ref.columns]
        rows += tol.table_tolerances(t.name, keys, t.numbers, ref, recompute=derive.get(t.name), seeds=seeds)
    return pd.DataFrame(rows, columns=tol.COLUMNS)


def write_tolerances(reference) -> Path:
    """Write ``tolerance.csv`` into a reference folder from its own tables."""
    out = Path(reference) / tol.TOLERANCE
    atomic_write_text(out, tolerances(reference).to_csv(index=False))
    return out


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


def _stage_codes(prov: dict) -> dict[str, set[str]]:
    """Each stage's code versions ('<commit>, code <hash>') in a run's provenance."""
    stages = (prov.get("rows_from") or {}).get("stages", {})
    return {s: {c["version"] for c in v.get("code", [])} for s, v in stages.items()}


def code_changes(run: dict, ref: dict) -> list[str]:
    """The stages whose code hash differs between the reference and a run, each with both versions: where only the
    commit differs, the code each stage ran is the same (a change elsewhere in the project)."""
    a, b = _stage_codes(run), _stage_codes(ref)
    lines = []
    for stage in sorted(set(a) | set(b)):
        here, there = a.get(stage, set()), b.get(stage, set())
        if _hashes(here) != _hashes(there):
            lines.append(f"{stage}: {'; '.join(sorted(there)) or 'none'} in the reference, "
                         f"{'; '.join(sorted(here)) or 'none'} here")
    return lines


def tolerance(run: dict, ref: dict) -> tuple[bool, str]:
    """(exact, why): exact where both sides ran the same code (the code hash of every stage that made rows) on one
    CPU model and float path; else each number has its own tolerance (``tolerance.csv``)."""
    (run_codes, run_devices), (_, ref_devices) = _origins(run), _origins(ref)
    same_code = not code_changes(run, ref) and len(_hashes(run_codes)) <= 2
    same_device = run_devices == ref_devices and len(run_devices) == 1
    if same_code and same_device:
        return True, "the same code on the same CPU model: bit for bit"
    why = [w for w, same in (("other code", same_code), ("another machine", same_device)) if not same]
    return False, f"{' and '.join(why)}: each number within its own tolerance, from its seeds' noise"


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _close(a: str, b: str, allowed: float, factor: float | None = None) -> tuple[bool, float]:
    """Whether two table entries agree within ``allowed`` (an amount) or ``factor`` (where the number moves by a
    factor), and how far they are over that tolerance (1: at it; inf where one is not a number)."""
    if a == b:
        return True, 0.0
    x, y = _number(a), _number(b)
    if x is None or y is None:
        return (a == b), math.inf
    if math.isnan(x) and math.isnan(y):
        return True, 0.0
    if math.isnan(x) or math.isnan(y):
        return False, math.inf
    over = abs(x - y) / allowed if allowed else math.inf
    if factor and x > 0 and y > 0:
        over = min(over, abs(math.log(x / y)) / math.log(factor))
    return over <= 1, over


@dataclass
class Comparison:
    verdicts: tuple[int, int]  # equal, of
    numbers: tuple[int, int]  # within tolerance, of
    flipped: list[str]  # each claims row whose verdict differs
    largest: list[tuple[float, str]]  # the differences beyond tolerance, largest over their tolerance first
    missing: list[str]  # rows on one side only
    tolerance: str
    run_provenance: list[str]
    reference_provenance: list[str]
    changed: list[str] = field(default_factory=list)  # the stages whose code differs, with both versions
    identical: bool = False  # every number the same bits

    @property
    def ok(self) -> bool:
        return not self.flipped and not self.missing and self.numbers[0] == self.numbers[1]


def _allowed(reference: Path) -> dict[tuple[str, str, str], tuple[float, float | None, str]]:
    """(table, row, column) -> (tolerance, factor or None, its rule), from the reference's ``tolerance.csv`` (computed
    from its tables where it has none)."""
    path = reference / tol.TOLERANCE
    df = pd.read_csv(path, dtype=str, keep_default_na=False) if path.exists() else tolerances(reference).astype(str)
    return {(r["table"], r["row"], r["column"]): (float(r["tolerance"]), float(r["factor"]) if r["factor"] else None,
                                                  r["rule"]) for r in df.to_dict("records")}


def compare(run, reference, top: int = 5) -> Comparison:
    """A run (results/<sweep>) against a reference folder (reference/<sweep>)."""
    run, reference = Path(run), Path(reference)
    run_prov, ref_prov = _provenance(run), _provenance(reference)
    exact, why = tolerance(run_prov, ref_prov)
    allowed = {} if exact else _allowed(reference)
    flipped, beyond, missing = [], [], []
    n_verdicts = equal_verdicts = n_numbers = close_numbers = same_bits = 0
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
                        same_bits += 1
                    else:
                        beyond.append((math.inf, f"{where} {col}: {r[col]} (reference {r[f'{col}@ref']})"))
            for col in t.numbers:
                n_numbers += 1
                same_bits += r[col] == r[f"{col}@ref"]
                limit, factor, rule = allowed.get((t.name, _row(r, keys), col), (0.0, None, "none recorded"))
                ok, over = _close(r[col], r[f"{col}@ref"], limit, factor)
                if ok:
                    close_numbers += 1
                else:
                    said = (f"tolerance {limit:.3g}" + (f" or a factor {factor:.3g}" if factor else "") + f", {rule}"
                            if limit else "bit for bit")
                    beyond.append((over, f"{where} {col}: {r[col]} (reference {r[f'{col}@ref']}; {said})"))
    beyond.sort(key=lambda x: -x[0])
    return Comparison((equal_verdicts, n_verdicts), (close_numbers, n_numbers), flipped, beyond[:top], missing, why,
                      brief(run_prov), brief(ref_prov), code_changes(run_prov, ref_prov),
                      same_bits == n_numbers and not missing)


def _row(r: dict, keys) -> str:
    return tol.row_label(r, keys)


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
        lines += [f"    {text}" + (f" ({gap:.3g}x its tolerance)" if math.isfinite(gap) else "")
                  for gap, text in c.largest]
    if c.missing:
        lines.append(f"  rows on one side only: {len(c.missing)}")
        lines += [f"    {m}" for m in c.missing[:5]]
    if c.changed:
        lines.append("  stages whose code differs:")
        lines += [f"    {line}" for line in c.changed]
        if c.identical:
            lines.append("    every number is the same bits: the change moved none")
    elif "another machine" in c.tolerance:
        lines.append("  code: the same in every stage; the machine alone moved the numbers")
    for side, said in (("this run", c.run_provenance), ("the reference", c.reference_provenance)):
        lines.append(f"  {side}:")
        lines += [f"    {line}" for line in said]
    lines.append("  REPRODUCED" if c.ok else "  NOT REPRODUCED")
    return "\n".join(lines)
