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


@pytest.mark.parametrize("machine, factor, reproduced", [
    ("same", 1.01, False),  # the same code on the same CPU: any difference is one
    ("other", 1.01, True),  # another CPU: within RELATIVE
    ("other", 1.0 + 2 * reference.RELATIVE, False),
])
def test_the_tolerance_is_zero_on_the_same_machine_and_stated_elsewhere(tmp_path, machine, factor, reproduced):
    run = as_run(tmp_path)
    if machine == "other":
        _machine(run, "cpu: Another CPU")
    oracle = pd.read_csv(run / "tables" / "oracle.csv", dtype=str, keep_default_na=False)
    k = int(pd.to_numeric(oracle["normalized_loss"]).idxmax())  # far from 0: the relative tolerance decides
    oracle.loc[k, "normalized_loss"] = repr(float(oracle.loc[k, "normalized_loss"]) * factor)
    oracle.to_csv(run / "tables" / "oracle.csv", index=False)
    c = reference.compare(run, REFERENCE / "cpu")
    assert c.ok == reproduced, reference.summary(c, run, "reference/cpu")


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
