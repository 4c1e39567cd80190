"""The report says what it measured: each caption's results come from the sweep's claims table (a flipped
verdict changes it), its style words are the drawn artists' style (a planted mismatch is caught), a figure
is drawn only where the sweep has something for it, and each sweep's front page tells its own result.

The figures of a real run are checked the same way in tests/test_claims_cpu.py (the cpu sweep) and here
(a reduced `encodings` sweep, run through the workflow), with their report opened in headless Chromium."""

from __future__ import annotations

import html
import re
import time

import matplotlib.pyplot as plt
import pandas as pd
import pytest
import yaml
from helpers import ROOT, copy_workflow, snakemake
from report_checks import (
    PLANS,
    check_displayed_text,
    covered_entries,
    empty_panels,
    is_empty,
    needs_chromium,
    run_figure_problems,
    style_mismatches,
)
from stsq.claims.judge import CLAIMS, evaluate_claims, figure_claims
from stsq.claims.table import claims_html
from stsq.core import claim_records as cl
from stsq.core import experiment as ex
from stsq.core import figure_catalog as catalog
from stsq.core.sweep import cells
from stsq.report import pages as report
from stsq.report.figures import FIGURES
from stsq.report.legibility import make_legible
from test_claims import oracle as synthetic_oracle
from test_claims import table as synthetic_table  # the paper's picture, every arch

CONFIG = yaml.safe_load((ROOT / "config.yaml").read_text())


def with_mechanism_curves(table):
    """The synthetic table with the paper's model's mechanism metrics over training, apart by width (the
    synthetic picture has their last point only, every width alike)."""
    mech = table[(table["split"] == "test") & table["metric"].isin(list(ex.MECHANISM_METRICS))
                 & (table["arch"] == ex.paper_model())]
    rows = [mech.assign(step=s, value=1 - (1 - mech["value"]) * (2000 / s) * (64 / mech["width"]) ** 0.5)
            for s in (500, 1000, 2000)]
    return pd.concat([table.drop(mech.index), *rows], ignore_index=True)


@pytest.fixture(scope="module")
def drawn():
    """Every figure of the synthetic paper's picture (two N: fewer panels to lay out), and its claims."""
    table = synthetic_table(Ns=(4, 16))
    oracle = synthetic_oracle(Ns=(4, 16), value=0.02)
    ev = table[(table["split"] == "eval") & (table["metric"] == ex.LOSS) & (table["N_eval"] == table["N"])]
    ev = ev[ev["arch"] != ex.paper_model()]  # the other models' training curves (the paper's model has its own)
    table = with_mechanism_curves(pd.concat([table, *[ev.assign(split="test", step=s, value=ev["value"] * 2000 / s)
                                                      for s in (500, 1000, 2000)]], ignore_index=True))
    claims = evaluate_claims(table, oracle)
    figs = {}
    for name in catalog.figures_of("width", "sts"):
        fig = FIGURES[name](table, oracle, position_range=64)
        make_legible(fig)
        figs[name] = fig
    yield figs, claims
    for fig in figs.values():
        plt.close(fig)


@pytest.mark.parametrize("name", [n for n in catalog.figures_of("width", "sts") if figure_claims(n)])
def test_a_flipped_verdict_in_the_claims_table_changes_the_caption(drawn, name):
    figs, claims = drawn
    before = report.caption(name, figs[name], claims, "cpu")
    key = next(c.key for c in figure_claims(name) if (claims["claim"] == c.key).any())
    flipped = claims.copy()
    row = flipped.index[flipped["claim"] == key][0]
    old = flipped.at[row, "verdict"]
    flipped.at[row, "verdict"] = cl.FAIL if old != cl.FAIL else cl.PASS
    flipped.at[row, "measured"] = "a planted measurement"
    after = report.caption(name, figs[name], flipped, "cpu")
    assert after != before
    said = next(line for line in after.splitlines() if f"**{key}**" in line)
    assert (cl.FAIL in said) if old != cl.FAIL else (cl.PASS in said), said


@pytest.mark.parametrize("name", catalog.figures_of("width", "sts"))
def test_the_caption_says_the_style_each_drawn_arch_is_drawn_with(drawn, name):
    figs, claims = drawn
    fig = figs[name]
    assert style_mismatches(name, fig, report.caption(name, fig, claims, "cpu")) == []


def test_a_figure_drawn_otherwise_than_its_caption_says_is_caught(drawn):
    figs, claims = drawn
    fig = figs["separation"]
    text = report.caption("separation", fig, claims, "cpu")
    line = next(a for ax in fig.axes for a in ax.lines if a.get_label() == ex.ARCHS[ex.fcn_arch()].legend)
    face, marker = line.get_markerfacecolor(), line.get_marker()
    try:
        line.set_markerfacecolor(line.get_color())  # the FCN's diamonds drawn filled, the record says hollow
        assert any("filled" in m for m in style_mismatches("separation", fig, text))
        line.set_markerfacecolor(face)
        line.set_marker("o")
        assert any("marker 'o'" in m for m in style_mismatches("separation", fig, text))
    finally:
        line.set_markerfacecolor(face)
        line.set_marker(marker)
    # and a caption written from another style record than the one drawn
    swapped = text.replace(report.style_words("tf_fixed", catalog.FIGURES["separation"].style), "blue, solid line")
    assert any("tf_fixed" in m for m in style_mismatches("separation", fig, swapped))


@pytest.mark.parametrize("name", catalog.figures_of("width", "sts"))
def test_every_legend_entry_of_the_synthetic_figures_is_seen(drawn, name):
    fig = drawn[0][name]
    assert not is_empty(fig) and empty_panels(fig) == []
    assert covered_entries(fig) == []


def test_a_covered_legend_entry_is_caught(drawn):
    fig = drawn[0]["separation"]
    label = ex.ARCHS[ex.paper_model()].legend
    line = next(a for ax in fig.axes for a in ax.lines if a.get_label() == label)
    ax = line.axes
    cover = ax.fill_between(ax.get_xlim(), *ax.get_ylim(), color="white", zorder=10)  # a panel painted over
    others = [a for a in fig.axes if a is not ax]
    hidden = [(a, ln) for a in others for ln in a.lines if ln.get_label() == label]
    try:
        for _, ln in hidden:
            ln.set_visible(False)
        assert label in covered_entries(fig)
    finally:
        cover.remove()
        for _, ln in hidden:
            ln.set_visible(True)




@pytest.mark.parametrize("sweep", list(PLANS))
def test_each_sweep_draws_only_the_figures_its_grid_has_something_for(sweep):
    s = CONFIG["sweeps"][sweep]
    plan = report.figure_plan(s)
    assert {n for n, why in plan.items() if why} == PLANS[sweep]
    for name in PLANS[sweep]:  # each says why, and which command draws it
        assert "draws it" in plan[name] and "`make " in plan[name], plan[name]


def test_each_sweep_has_a_make_target_and_every_claim_names_one_that_tests_it():
    makefile = (ROOT / "Makefile").read_text()
    for sweep in cl.MAKE_SWEEPS:
        target = "run" if sweep == "cpu" else sweep
        assert f"\n{target}: " in makefile and sweep in CONFIG["sweeps"], sweep
    for claim in CLAIMS.values():
        assert set(claim.tested_by) <= set(cl.MAKE_SWEEPS), claim.key


@pytest.mark.parametrize("key, length", [("length_fixed", ex.TRAINING_LENGTH),
                                         ("length_randomized", ex.POSITION_RANGE)])
def test_a_sweep_without_an_arch_is_pointed_to_a_sweep_that_trains_it(key, length):
    """A per-arch length claim NOT TESTED for want of its arch (the separation sweep has none of them) names
    a command whose sweep trains that arch: the first sweep of its tested_by trains every arch it reads."""
    first = CLAIMS[key].tested_by[0]
    assert set(ex.with_length(length)) <= set(CONFIG["sweeps"][first]["archs"]), (key, first)
    for arch in ex.with_length(length):
        row = pd.DataFrame([{"claim": key, "kind": cl.PAPER, "statement": "", "q": "all", "N": "all", "d": "all",
                             "cell": arch, "measured": f"not tested: the sweep has no {arch}",
                             "value": float("nan"), "threshold": "", "verdict": cl.NOT_TESTED}])
        assert f"`{report.make_target(first)}` tests it" in report.claim_sentence(row, key, "separation")


def _claim_rows(key, verdicts, across=False, values=None):
    values = values or [0.5] * len(verdicts)
    q, N, d = ("all",) * 3 if across else (2, 1, 4)
    return pd.DataFrame([{"claim": key, "kind": cl.PAPER, "statement": "", "q": q, "N": N, "d": d, "cell": "c",
                          "measured": "not tested: the sweep has no tf_learned" if v == cl.NOT_TESTED else "m",
                          "value": x, "threshold": "", "verdict": v} for v, x in zip(verdicts, values)])


def test_every_claim_names_the_number_its_rows_are_judged_on_and_the_captions_say_it():
    """A caption's "PASS values 2 to 8" is a reach factor for one claim and a loss for another: each claim
    names its value, and the caption and the claims page carry the name beside the numbers."""
    for key, claim in CLAIMS.items():
        assert claim.value, key
        rows = _claim_rows(key, [cl.PASS, cl.PASS], values=[2.0, 8.0])
        assert f"PASS values ({claim.value}) 2 to 8 against" in report.claim_sentence(rows, key, "cpu"), key
        assert f"value ({html.escape(claim.value)}) 2 to 8 over the rows" in claims_html(rows), key


def test_a_row_judged_across_sizes_is_said_to_be_so_not_placed_at_a_size():
    rows = _claim_rows("length_fixed", [cl.PASS, cl.NOT_TESTED], across=True)
    text = report.claim_sentence(rows, "length_fixed", "cpu")
    assert "NOT TESTED across sizes: the sweep has no tf_learned" in text and "at across" not in text
    sized = report.claim_sentence(_claim_rows("length_fixed", [cl.PASS, cl.NOT_TESTED]), "length_fixed", "cpu")
    assert "NOT TESTED at q=2, N=1, d=4:" in sized


def test_the_landing_page_tells_each_sweeps_own_result(drawn):
    claims = drawn[1].copy()
    # the synthetic picture passes every claim: one row planted as a FAIL, so that the page's FAIL list is read
    k = claims.index[(claims["verdict"] == cl.PASS) & (claims["kind"] != cl.CHECK)][0]
    claims.loc[k, ["verdict", "measured"]] = [cl.FAIL, "a FAIL planted in the fixture, in its own words"]
    pages = {}
    for sweep in ("cpu", "encodings"):
        s = CONFIG["sweeps"][sweep]
        grid = cells(s)
        pages[sweep] = report.landing(sweep, s, grid, claims, report.figure_plan(s))
    assert pages["cpu"] != pages["encodings"]
    assert "``tf_randomized``" in pages["encodings"] and "``tf_randomized``" not in pages["cpu"].split("**Result")[0]
    counts = claims[claims["kind"] != cl.CHECK]["verdict"].value_counts()
    for v in (cl.PASS, cl.FAIL, cl.NOT_TESTED):
        if v in counts:
            assert f"{counts[v]} {v}" in pages["cpu"]
    # every FAIL is listed with its words, every NOT TESTED claim with what tests it
    assert (claims["verdict"] == cl.FAIL).any()
    for r in claims[claims["verdict"] == cl.FAIL].itertuples():
        assert r.measured in pages["cpu"]
    for key, g in claims[claims["verdict"] == cl.NOT_TESTED].groupby("claim"):  # "1 row", "3 rows"
        assert f"``{key}`` ({CLAIMS[key].statement}), {len(g)} row{'' if len(g) == 1 else 's'}: " in pages["cpu"]
    assert "Not drawn for this sweep" in pages["cpu"] and "- encodings:" in pages["cpu"]


def test_a_not_tested_claim_names_the_command_that_tests_it():
    claims = pd.DataFrame([{"claim": "tf_scaling", "kind": cl.PAPER, "statement": "", "q": "all", "N": "all",
                            "d": "all", "cell": "", "measured": "not tested: N spans x4", "value": float("nan"),
                            "threshold": "", "verdict": cl.NOT_TESTED}])
    assert "`make separation` tests it" in report.claim_sentence(claims, "tf_scaling", "cpu")
    assert "tests it" not in report.claim_sentence(claims, "tf_scaling", "separation")


# -- a real run of the encodings sweep, reduced, and its report as a reader sees it -------------------
REDUCED = {"sweeps": {"encodings": {"N": [4, 8], "seeds": [0, 1],
                                    "archs": {a: {"steps": 800} for a in CONFIG["sweeps"]["encodings"]["archs"]}}}}


@pytest.fixture(scope="module")
def encodings_run(tmp_path_factory):
    work = copy_workflow(tmp_path_factory.mktemp("enc") / "wf")
    (work / "reduced.yaml").write_text(yaml.safe_dump(REDUCED))
    t0 = time.perf_counter()
    args = ("--configfile", "config.yaml", "reduced.yaml", "--config", "sweep=encodings")
    snakemake(work, "--cores", "2", *args, timeout=900)
    snakemake(work, *args, "--report", "results/encodings/report.html")
    print(f"\n[measured] the reduced encodings sweep and its report in {time.perf_counter() - t0:.0f}s")
    return work


@pytest.mark.slow
@pytest.mark.workflow
def test_the_encodings_report_holds_only_what_its_sweep_draws_and_says_so(encodings_run):
    root = encodings_run / "results" / "encodings"
    drawn = sorted(p.stem for p in (root / "figures").glob("*.png"))
    assert drawn == sorted(set(catalog.figures_of("width", "sts")) - PLANS["encodings"])
    landing = (root / "report" / "landing.rst").read_text()
    assert "- separation:" in landing and "- scaling:" in landing  # left out, with why
    claims = pd.read_csv(root / "tables" / "claims.csv")
    paper = claims[claims["kind"] != cl.CHECK]
    assert f"**Result: {(paper['verdict'] == cl.PASS).sum()} {cl.PASS}" in landing
    caption = (root / "report" / "encodings.rst").read_text()
    assert caption.startswith("**Lowest loss at the longest length every encoding takes**")
    # the ranking names every encoding; the encodings not learned even at N' = N are named as such, and only they
    enc = pd.read_csv(root / "tables" / "encodings.csv")
    enc = enc[enc["status"] == "ok"]
    at_N = enc[enc["N_eval"] == enc["N"]].groupby("arch")["loss_max"].min()
    never = sorted(a for a in at_N.index if at_N[a] > cl.LEARNED_BELOW)
    ranking, _, unlearned = caption.partition("Not learned even at N' = N")
    assert all(f"``{a}``" in ranking for a in enc["arch"].unique())
    assert sorted(re.findall(r"``(\w+)`` \(", unlearned)) == never, (never, unlearned)


@pytest.mark.slow
@pytest.mark.workflow
@pytest.mark.parametrize("name", sorted(set(catalog.figures_of("width", "sts")) - PLANS["encodings"]))
def test_every_legend_entry_of_the_encodings_reports_figures_is_seen(encodings_run, name):
    assert run_figure_problems(encodings_run, "encodings", name, position_range=64) == []


@pytest.mark.slow
@pytest.mark.workflow
@needs_chromium
def test_the_encodings_report_as_displayed_has_text_of_page_size_and_opens_on_each_pages_top(encodings_run, tmp_path):
    drawn = sorted(set(catalog.figures_of("width", "sts")) - PLANS["encodings"])
    check_displayed_text(encodings_run, "encodings", drawn, tmp_path)
