"""Reproduced on another machine, shown on one: a small samples sweep and a small width sweep run twice, on the
default float path and on another (MKL's compatible code path and torch's plain kernels sum in another order, as
another CPU does).  `compare` says REPRODUCED where every verdict agrees and each number lies within its own
tolerance, and NOT REPRODUCED where a verdict is flipped or a number is moved beyond its tolerance by hand."""

import shutil

import pandas as pd
import pytest
import yaml
from helpers import QSTR_TINY, TINY, copy_workflow, snakemake
from stsq.report import reference
from stsq.report import tolerance as tol

# another float path on the same CPU: each setting alone changes the bits of a product (docs/reproducibility.md)
OTHER_PATH = {"MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "default"}
# the retrieval tests' sweep at q = 1 on the general task: two N, the transformer and the FFN (a minute on 2 cores)
SAMPLES = {"sweeps": {"qstr_tiny": {"q": [1], "modes": ["general"], "archs": {
    "qstr_transformer": {"width": 16, "heads": [1]}, "qstr_ffn": {"width": 32}}}}}
TABLE = {"tiny": "evaluation.csv", "qstr_tiny": "samples.csv"}  # the per-seed numbers of each sweep


def _run(folder, sweep: str, extra: dict):
    work = copy_workflow(folder / "wf")
    if sweep == "tiny":
        args = ("--configfile", TINY)
    else:
        base = yaml.safe_load(QSTR_TINY.read_text())
        base["sweeps"]["qstr_tiny"].update(SAMPLES["sweeps"]["qstr_tiny"])
        (work / "samples.yaml").write_text(yaml.safe_dump(base))
        args = ("--configfile", "samples.yaml")
    snakemake(work, "--cores", "2", *args, extra_env=extra, timeout=900)
    return work / "results" / sweep


@pytest.fixture(scope="module", params=sorted(TABLE))
def two_paths(request, tmp_path_factory, finished_tiny):
    """(the sweep, its run on the default path frozen as a reference, its run on the other path).  The width sweep's
    run on the default path is the session's finished tiny sweep."""
    sweep = request.param
    default = finished_tiny / "results" / "tiny" if sweep == "tiny" else \
        _run(tmp_path_factory.mktemp(f"{sweep}-default"), sweep, {})
    other = _run(tmp_path_factory.mktemp(f"{sweep}-other"), sweep, OTHER_PATH)
    ref = tmp_path_factory.mktemp(f"{sweep}-reference") / sweep
    reference.freeze(default, ref)
    return sweep, ref, other


def _numbers(run, ref, name) -> tuple[int, int]:
    """(numbers that differ between the two runs, numbers) of one table."""
    a, b = (reference._read(p, name) for p in (run, ref))
    spec = next(t for t in (*reference.TABLES, *reference.SAMPLES_TABLES) if t.name == name)
    keys = [k for k in spec.keys if k in a.columns]
    joined = a.merge(b, on=keys, suffixes=("", "@ref"))
    cols = [c for c in spec.numbers if c in a.columns]
    return sum(int((joined[c] != joined[f"{c}@ref"]).sum()) for c in cols), len(joined) * len(cols)


@pytest.mark.slow
@pytest.mark.workflow
def test_a_run_on_another_float_path_reproduces_the_reference_within_each_numbers_tolerance(two_paths):
    sweep, ref, other = two_paths
    table = TABLE[sweep]
    moved, n = _numbers(other, ref, table)
    print(f"\n[measured] {sweep}: {moved} of {n} numbers of {table} differ between the two float paths")
    assert moved, "the other float path gave the same bits: it tests nothing"
    c = reference.compare(other, ref)
    text = reference.summary(c, other, ref)
    print(text)
    assert c.verdicts[0] == c.verdicts[1] and c.ok, text
    assert "another machine" in text and "[MKL_CBWR=COMPATIBLE ATEN_CPU_CAPABILITY=default]" in text
    assert "code: the same in every stage; the machine alone moved the numbers" in text


@pytest.mark.slow
@pytest.mark.workflow
def test_a_flipped_verdict_or_a_number_moved_beyond_its_tolerance_is_not_reproduced(two_paths, tmp_path):
    sweep, ref, other = two_paths
    flipped = shutil.copytree(other, tmp_path / "flipped" / sweep)
    claims = pd.read_csv(flipped / "tables" / "claims.csv", dtype=str, keep_default_na=False)
    k = next(i for i, v in enumerate(claims["verdict"]) if v in ("PASS", "FAIL", "NOT TESTED"))
    was = claims.loc[k, "verdict"]
    claims.loc[k, "verdict"] = "FAIL" if was != "FAIL" else "PASS"
    claims.to_csv(flipped / "tables" / "claims.csv", index=False)
    c = reference.compare(flipped, ref)
    assert not c.ok and len(c.flipped) == 1 and f"{was} in the reference" in c.flipped[0]

    moved = shutil.copytree(other, tmp_path / "moved" / sweep)
    allowed = pd.read_csv(ref / tol.TOLERANCE, dtype=str, keep_default_na=False)
    name = TABLE[sweep]
    spec = next(t for t in (*reference.TABLES, *reference.SAMPLES_TABLES) if t.name == name)
    column = spec.numbers[0]
    df = reference._read(moved, name).reset_index(drop=True)
    keys = [k for k in spec.keys if k in df.columns]
    rows = allowed[(allowed["table"] == name) & (allowed["column"] == column)].set_index("row")
    i = next(i for i, r in enumerate(df.to_dict("records")) if tol.row_label(r, keys) in rows.index
             and r[column] not in ("", "nan"))
    label = tol.row_label(df.iloc[i].to_dict(), keys)
    row = rows.loc[label]
    df.loc[i, column] = repr(float(row["value"]) * float(row["factor"]) ** 2 if row["factor"]
                             else float(row["value"]) + 2 * float(row["tolerance"]))
    if name == "evaluation.csv":  # a run holds its evaluation rows in the tidy table
        metrics = pd.read_csv(moved / "tables" / "metrics.csv", dtype=str, keep_default_na=False)
        at = metrics[metrics["split"] == "eval"].index[i]
        metrics.loc[at, column] = df.loc[i, column]
        metrics.to_csv(moved / "tables" / "metrics.csv", index=False)
    else:
        df.to_csv(moved / "tables" / name, index=False)
    c = reference.compare(moved, ref)
    text = reference.summary(c, moved, ref)
    assert not c.ok and not c.flipped and f"{name} {label} {column}" in text and "NOT REPRODUCED" in text, text
