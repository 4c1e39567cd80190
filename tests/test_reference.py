"""The committed reference (reference/<sweep>/) and `python -m stsq compare`: a run that reproduces it says so, a
planted difference is named, the tolerance follows where the two runs came from, and docs/claims.md quotes the
reference, not the last run."""

import json
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest
from conftest import ROOT
from stsq.report import reference
from stsq.report import tolerance as tol

REFERENCE = ROOT / "reference"
SWEEPS = sorted(p.name for p in REFERENCE.iterdir() if p.is_dir())


def stsq(*args):
    return subprocess.run([sys.executable, "-m", "stsq", *map(str, args)], capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT / "workflow" / "src"), "PATH": "/usr/bin:/bin"}, cwd=ROOT)


def as_run(tmp_path, sweep="cpu"):
    """A finished run's folder (results/<sweep>: tables/ and provenance.json) holding the reference's tables."""
    run = tmp_path / "results" / sweep
    (run / "tables").mkdir(parents=True)
    for f in (REFERENCE / sweep).iterdir():
        shutil.copy(f, run / ("tables" if f.suffix in (".csv", ".md") else "") / f.name)
    return run


def test_every_sweep_the_readme_runs_has_a_reference_with_its_provenance():
    assert {"cpu", "budget", "encodings", "separation"} <= set(SWEEPS)
    for sweep in SWEEPS:
        samples = (REFERENCE / sweep / reference.SAMPLES).exists()  # a samples sweep's reference (qstr)
        for t in reference.SAMPLES_TABLES if samples else reference.TABLES:
            assert (REFERENCE / sweep / t.name).exists(), (sweep, t.name)
        prov = json.loads((REFERENCE / sweep / "provenance.json").read_text())
        made = [m for m in prov["tables"].values() if m]
        assert made and all(m["code"]["commit"] and m["code"]["dirty"] is False for m in made), sweep
        assert not prov["rows_from"]["mixed"], sweep


def test_a_run_with_the_references_numbers_reproduces_it_bit_for_bit(tmp_path):
    run = as_run(tmp_path)
    r = stsq("compare", run, REFERENCE / "cpu")
    print(r.stdout)
    assert r.returncode == 0 and "REPRODUCED" in r.stdout and "bit for bit" in r.stdout
    n = len(pd.read_csv(REFERENCE / "cpu" / "claims.csv"))
    assert f"verdicts equal: {n} of {n}" in r.stdout


def test_a_planted_number_and_a_flipped_verdict_are_both_named(tmp_path):
    run = as_run(tmp_path)
    critical = pd.read_csv(run / "tables" / "critical.csv", dtype=str, keep_default_na=False)
    k = next(i for i, w in enumerate(critical["critical_width"]) if w not in ("", "nan"))
    row = critical.iloc[k]
    critical.loc[k, "critical_width"] = str(float(row["critical_width"]) * 1.5)
    critical.to_csv(run / "tables" / "critical.csv", index=False)
    claims = pd.read_csv(run / "tables" / "claims.csv", dtype=str, keep_default_na=False)
    j = next(i for i, v in enumerate(claims["verdict"]) if v == "PASS")
    claims.loc[j, "verdict"] = "FAIL"
    claims.to_csv(run / "tables" / "claims.csv", index=False)
    r = stsq("compare", run, REFERENCE / "cpu")
    print(r.stdout)
    assert r.returncode == 1 and "NOT REPRODUCED" in r.stdout
    assert f"claim={claims.loc[j, 'claim']}" in r.stdout and "PASS in the reference, FAIL here" in r.stdout
    assert f"arch={row['arch']}" in r.stdout and f"seed={row['seed']}" in r.stdout and "critical_width" in r.stdout


def _machine(run, name):
    prov = json.loads((run / "provenance.json").read_text())
    for stage in prov["rows_from"]["stages"].values():
        for m in stage["machines"]:
            m["machine"] = name + m["machine"][m["machine"].index(","):]
    (run / "provenance.json").write_text(json.dumps(prov))


def _allowed(sweep: str) -> pd.DataFrame:
    return pd.read_csv(REFERENCE / sweep / tol.TOLERANCE, dtype=str, keep_default_na=False)


def moved(row: dict, times: float) -> float:
    """A reference number moved up by ``times`` its tolerance: its factor to that power where it moves by a factor,
    else its amount ``times`` over."""
    value = float(row["value"])
    return value * float(row["factor"]) ** times if row["factor"] else value + times * float(row["tolerance"])


def _move(run, sweep: str, table: str, column: str, rule: str, times: float) -> str:
    """Move the first number of ``table`` whose tolerance comes from ``rule`` by ``times`` its own tolerance; its
    row in words."""
    allowed = _allowed(sweep)
    pick = allowed[(allowed["table"] == table) & (allowed["column"] == column) & allowed["rule"].str.startswith(rule)]
    row = pick.iloc[0]
    spec = next(t for t in (*reference.TABLES, *reference.SAMPLES_TABLES) if t.name == table)
    df = pd.read_csv(run / "tables" / table, dtype=str, keep_default_na=False)
    keys = [k for k in spec.keys if k in df.columns]
    k = next(i for i, r in enumerate(df.to_dict("records")) if tol.row_label(r, keys) == row["row"])
    df.loc[k, column] = repr(moved(row, times))
    df.to_csv(run / "tables" / table, index=False)
    return row["row"]


@pytest.mark.parametrize("machine, times, reproduced", [
    ("same", 0.5, False),  # the same code on the same CPU: any difference is one
    ("other", 0.5, True),  # another CPU: within the number's own tolerance
    ("other", 1.5, False),  # beyond it
])
def test_the_tolerance_is_zero_on_the_same_machine_and_each_numbers_own_elsewhere(tmp_path, machine, times,
                                                                                  reproduced):
    run = as_run(tmp_path)
    if machine == "other":
        _machine(run, "cpu: Another CPU")
    row = _move(run, "cpu", "critical.csv", "critical_width", "per seed", times)
    c = reference.compare(run, REFERENCE / "cpu")
    text = reference.summary(c, run, "reference/cpu")
    assert c.ok == reproduced, text
    if machine == "other" and not reproduced:
        assert f"critical.csv {row} critical_width" in text and tol.PER_SEED_LOG in text


@pytest.mark.parametrize("table, column, rule", [
    ("samples.csv", "samples", "per seed"), ("slopes.csv", "slope", "derived"), ("claims.csv", "value", "derived")])
def test_a_samples_sweeps_count_slope_and_claim_each_move_within_their_own_tolerance_and_not_beyond(
        tmp_path, table, column, rule):
    for times, ok in ((0.9, True), (1.1, False)):
        run = as_run(tmp_path / str(times), "qstr")
        _machine(run, "cpu: Another CPU")
        row = _move(run, "qstr", table, column, rule, times)
        c = reference.compare(run, REFERENCE / "qstr")
        text = reference.summary(c, run, "reference/qstr")
        assert c.ok == ok, text
        assert ok or f"{table} {row} {column}" in text


def test_each_references_tolerances_cover_every_number_compare_reads_at_least_the_floor():
    for sweep in SWEEPS:
        allowed = _allowed(sweep)
        samples = (REFERENCE / sweep / reference.SAMPLES).exists()
        n = 0
        for t in reference.SAMPLES_TABLES if samples else reference.TABLES:
            df = pd.read_csv(REFERENCE / sweep / t.name, dtype=str, keep_default_na=False)
            n += len(df) * len([c for c in t.numbers if c in df.columns])
        assert len(allowed) == n, sweep
        values = pd.to_numeric(allowed["value"], errors="coerce")
        floor = values.abs().mul(tol.RELATIVE).clip(lower=tol.ABSOLUTE).fillna(tol.ABSOLUTE)
        assert (pd.to_numeric(allowed["tolerance"]) >= floor - 1e-12).all(), sweep


@pytest.mark.parametrize("sweep", ["lookup", "dyck", "paper_q4", "qstr_theirs"])
def test_a_references_tolerances_are_those_its_own_tables_give(sweep):
    """tolerance.csv is written by `freeze` from the reference's tables: recomputed, it is the same."""
    again = reference.tolerances(REFERENCE / sweep).astype(str)
    pd.testing.assert_frame_equal(again.reset_index(drop=True), _allowed(sweep), check_dtype=False)


def test_where_the_code_differs_compare_names_the_stages_and_whether_a_number_moved(tmp_path):
    run = as_run(tmp_path)
    prov = json.loads((run / "provenance.json").read_text())
    for c in prov["rows_from"]["stages"]["train"]["code"]:
        c["version"] = "0123456789ab, code feedfacefeedface"
    (run / "provenance.json").write_text(json.dumps(prov))
    c = reference.compare(run, REFERENCE / "cpu")
    text = reference.summary(c, run, "reference/cpu")
    assert c.ok and "other code" in text, text
    assert "stages whose code differs:\n    train: " in text and "here" in text and "code feedfacefeedface" in text
    assert "every number is the same bits: the change moved none" in text
    assert "evaluate:" not in text.split("stages whose code differs")[1].split("this run")[0]


def test_a_missing_provenance_is_named(tmp_path):
    run = as_run(tmp_path)
    (run / "provenance.json").unlink()
    r = stsq("compare", run, REFERENCE / "cpu")
    assert r.returncode != 0 and "provenance.json: missing" in r.stdout + r.stderr


def docs_commands():
    """The Makefile's `docs` target: one `quote` per sweep, from its reference."""
    text = (ROOT / "Makefile").read_text()
    block = text[text.index("\ndocs:"):]
    return [re.sub(r"^\t\$\(STSQ\) ", "", line).split() for line in block.splitlines()[1:] if "quote" in line]


@pytest.mark.parametrize("command", docs_commands(), ids=lambda c: c[2])
def test_docs_claims_md_quotes_the_committed_reference(command):
    r = stsq(*command, "--check")
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_samples_sweeps_reference_compares_its_samples_and_slopes(tmp_path):
    """reference/qstr: a run with its numbers reproduces it; a planted count of samples is named."""
    run = as_run(tmp_path, "qstr")
    r = stsq("compare", run, REFERENCE / "qstr")
    assert r.returncode == 0 and "REPRODUCED" in r.stdout, r.stdout + r.stderr
    samples = pd.read_csv(run / "tables" / "samples.csv", dtype=str, keep_default_na=False)
    samples.loc[0, "samples"] = str(int(samples.loc[0, "samples"]) * 2)
    samples.to_csv(run / "tables" / "samples.csv", index=False)
    r = stsq("compare", run, REFERENCE / "qstr")
    assert r.returncode == 1 and "samples.csv" in r.stdout and "NOT REPRODUCED" in r.stdout
    pd.read_csv(run / "tables" / "slopes.csv").drop(columns="floor").to_csv(run / "tables" / "slopes.csv", index=False)
    r = stsq("compare", run, REFERENCE / "qstr")  # a table of another layout: named, not a traceback
    assert r.returncode == 1 and "slopes.csv: the column floor only in the reference" in r.stdout
