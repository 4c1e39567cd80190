"""docs/extending.md's new encoding is the whole change: its code blocks, appended to the two files they
name in a copy of the workflow, give an arch that trains, is scored at every N', and appears in the
encodings table, the encodings figure and the claims table, with no other file edited.  The same small
sweep shows randomized positions beyond their range L as not applicable, everywhere."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pandas as pd
import pytest
import yaml
from helpers import ROOT, copy_workflow, snakemake

DOC = ROOT / "docs" / "extending.md"
BLOCK = re.compile(r"<!-- extending: (\S+) -->\n```python\n(.*?)```", re.S)


def doc_change() -> dict[str, str]:
    """{file: code} of every block docs/extending.md says to append."""
    return {path: code for path, code in BLOCK.findall(DOC.read_text())}


def test_the_documented_change_is_two_files_and_as_many_lines_as_it_says():
    change = doc_change()
    assert set(change) == {"workflow/src/stsq/positions.py", "workflow/src/stsq/experiment.py"}
    lines = sum(len(code.splitlines()) for code in change.values())
    said = re.search(r"That is all the code: (\d+) files, (\d+) lines", DOC.read_text())
    assert said and (int(said.group(1)), int(said.group(2))) == (len(change), lines)


@pytest.mark.slow
def test_a_new_encoding_from_the_docs_runs_through_figures_and_claims(tmp_path):
    work = copy_workflow(tmp_path / "wf")
    before = {p.relative_to(work): p.read_bytes() for p in (work / "workflow").rglob("*") if p.is_file()}
    for path, code in doc_change().items():
        with open(work / path, "a") as fh:
            fh.write("\n\n" + code)
    changed = sorted(str(p) for p, b in before.items() if (work / p).read_bytes() != b)
    assert changed == ["workflow/src/stsq/experiment.py", "workflow/src/stsq/positions.py"]

    # beside it, randomized positions from L = 16 rows: N' = 32 is beyond them
    config = {"sweep": "ext", "sweeps": {"ext": {
        "d": 4, "N": [8], "q": [2], "seeds": [0, 1], "eval_length_factors": [1, 2, 4], "n_eval": 64,
        "batch_size": 32, "log_every": 40, "checkpoint_every": 80, "query": "sum", "position_range": 16,
        "archs": {"tf_stochastic": {"widths": [16], "steps": 160, "lr": 0.02},
                  "tf_hypercube": {"widths": [16], "steps": 160, "lr": 0.02},
                  "tf_randomized": {"widths": [16], "steps": 160, "lr": 0.02}}}}}
    (work / "ext.yaml").write_text(yaml.safe_dump(config))
    snakemake(work, "--cores", "2", "--configfile", "ext.yaml")

    root = work / "results" / "ext"
    enc = pd.read_csv(root / "tables" / "encodings.csv")
    hyper = enc[enc["arch"] == "tf_hypercube"]
    assert hyper["encoding"].eq("hypercube").all() and sorted(hyper["N_eval"]) == [8, 16, 32]
    assert hyper["loss_mean"].notna().all() and (hyper["seeds"] == 2).all()
    claims = pd.read_csv(root / "tables" / "claims.csv")
    row = claims[(claims["claim"] == "length_fixed") & claims["cell"].str.startswith("tf_hypercube")]
    assert len(row) == 1 and row.iloc[0]["verdict"] in ("PASS", "FAIL", "NOT TESTED")
    assert (root / "figures" / "encodings.png").stat().st_size > 10_000

    # randomized positions beyond their range: not applicable in the tidy table, the encodings table and
    # the claim, never a number (and not scored along training either)
    metrics = pd.read_csv(root / "tables" / "metrics.csv")
    rz = metrics[(metrics["arch"] == "tf_randomized") & (metrics["metric"] == "normalized_loss")]
    ev = rz[rz["split"] == "eval"]
    na, ok = ev[ev["status"] == "not_applicable"], ev[ev["status"] == "ok"]
    assert set(na["N_eval"]) == {32} and set(ok["N_eval"]) == {8, 16} and na["value"].isna().all()
    assert 32 not in set(rz[rz["split"] == "test"]["N_eval"])
    row = enc[(enc["arch"] == "tf_randomized") & (enc["N_eval"] == 32)].iloc[0]
    assert row["status"] == "not_applicable" and pd.isna(row["loss_mean"]) and row["position_range"] == 16
    claim = claims[claims["claim"] == "length_randomized"].iloc[0]
    assert "not applicable: [32]" in claim["measured"]
    # the figure draws it: its legend, from the copy's own code
    legend = subprocess.run(
        [sys.executable, "-c", "import sys; from stsq.figures import encodings_figure; "
         "from stsq.tables import read_metrics_table, read_oracle_table; "
         "fig = encodings_figure(read_metrics_table(sys.argv[1]), read_oracle_table(sys.argv[2])); "
         "print([t.get_text() for leg in fig.legends for t in leg.get_texts()])",
         str(root / "tables" / "metrics.csv"), str(root / "tables" / "oracle.csv")],
        env={**os.environ, "PYTHONPATH": str(work / "workflow" / "src")}, capture_output=True, text=True, timeout=120)
    assert "tf_hypercube d_e=16" in legend.stdout, legend.stderr[-2000:]
