"""The numbers docs/claims.md quotes come from a run's tables (stsq.report.quote): each sweep's section holds a
block its make target writes after the run, and no measured number outside it."""

import re
from pathlib import Path

import pandas as pd
import pytest
from stsq.core.errors import PipelineError
from stsq.report import quote
from stsq.sts.theory import width_needed

ROOT = Path(__file__).parents[1]
DOC = ROOT / "docs" / "claims.md"
# each sweep whose section docs/claims.md has, with the section's heading and what its make target writes
SECTIONS = {"separation": ("## Measured on the `separation` sweep", ["digest", "needs"]),
            "encodings": ("## The positional encodings, compared", ["digest", "losses"]),
            "budget": ("## Measured on the `budget` sweep", ["digest", "needs"]),
            "paper_fcn": ("## At paper scale: slices of the `paper` sweep", ["digest", "losses"]),
            "paper_q4": ("## At paper scale: slices of the `paper` sweep", ["digest", "losses"])}
# the files whose settings a section may name (a rate, a factor): not measured numbers
SETTINGS = ("config.yaml", "docs/paper-slices.yaml")


def _section(text, heading):
    body = text[text.index(heading):]
    end = body.find("\n## ", 1)
    return body if end < 0 else body[:end]  # to the next section, or the end of the doc


@pytest.mark.parametrize("sweep", sorted(SECTIONS))
def test_a_sweeps_section_quotes_numbers_only_inside_its_generated_block(sweep):
    """Outside the blocks, a decimal number in the section is a setting (config.yaml, docs/paper-slices.yaml),
    never a measured value typed in by hand; the block is the one `make docs` writes from the sweep's
    committed reference."""
    heading, parts = SECTIONS[sweep]
    section = _section(DOC.read_text(), heading)
    start, end = quote.markers(sweep)
    assert section.count(start) == 1 and section.count(end) == 1, f"{sweep}: its block is not in its section"
    outside = re.sub(r"<!-- (\w+) digest: start -->.*?<!-- \1 digest: end -->", "", section, flags=re.S)
    settings = set(re.findall(r"\d+\.\d+", "".join((ROOT / f).read_text() for f in SETTINGS)))
    typed = [x for x in re.findall(r"(?<![\w.])\d+\.\d+", outside) if x not in settings]
    assert typed == [], f"{sweep}'s section types measured numbers outside its block: {typed}"
    make = (ROOT / "Makefile").read_text()
    assert f"$(STSQ) quote --sweep {sweep} --tables reference/{sweep} --parts {' '.join(parts)}" in make


def _tables(tmp_path):
    t = tmp_path / "tables"
    t.mkdir()
    (t / "claims.md").write_text("| claim | verdicts |\n|---|---|\n| `fcn_scaling` | 1 PASS |\n")
    rows = [dict(arch="fcn", q=2, N=N, d=4, steps=2000, epsilon=0.1, seed=s, critical_width=w * (1 + 0.01 * s),
                 censored="none", width_below=w / 1.4, width_above=w * 1.4, bracket=2.0)
            for N, w in ((4, 16.6), (8, 49.2)) for s in range(3)]
    rows.append(dict(rows[-1], seed=3, censored="above", critical_width=128.0))
    pd.DataFrame(rows).to_csv(t / "critical.csv", index=False)
    return t


def test_the_block_is_written_from_the_tables_and_check_catches_a_stale_quote(tmp_path):
    t = _tables(tmp_path)
    doc = tmp_path / "claims.md"
    start, end = quote.markers("budget")
    doc.write_text(f"# doc\n\nprose before\n\n{start}\nold numbers 1.23\n{end}\n\nprose after\n")
    text = quote.block(t, ["digest", "needs"])
    assert quote.write(doc, "budget", text) is True
    written = doc.read_text()
    assert written.startswith("# doc\n\nprose before\n\n") and written.endswith("\n\nprose after\n")
    assert "old numbers" not in written and "| `fcn_scaling` | 1 PASS |" in written
    # the need is the seeds' geometric mean with their range; a seed no width reached is counted as a bound
    assert "16.8 [16.6, 16.9]" in written and "(1 seed > 128)" in written
    assert f"{width_needed(8, 4, 2, 0.1):.3g}" in written  # the exact floor beside the FCN's need
    assert quote.write(doc, "budget", text, check=True) is False  # the same run: nothing to change
    pd.read_csv(t / "critical.csv").assign(critical_width=lambda c: c["critical_width"] * 1.1).to_csv(
        t / "critical.csv", index=False)
    with pytest.raises(PipelineError, match="'budget' block differs"):
        quote.write(doc, "budget", quote.block(t, ["digest", "needs"]), check=True)
    assert doc.read_text() == written  # a check writes nothing


def test_a_missing_table_or_marker_is_named(tmp_path):
    with pytest.raises(PipelineError, match="critical.csv: missing"):
        quote.block(tmp_path, ["needs"])
    doc = tmp_path / "claims.md"
    doc.write_text("no markers\n")
    with pytest.raises(PipelineError, match="<!-- cpu digest: start -->"):
        quote.write(doc, "cpu", "x")
    with pytest.raises(PipelineError, match="unknown"):
        quote.block(tmp_path, ["figures"])
