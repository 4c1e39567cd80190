"""Sparse token retrieval, the second task: its sampler and target, its families, the samples measurement, the
slopes, and its claims, each able to fail (docs/retrieval.md)."""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from helpers import ROOT, TINY, copy_workflow, snakemake, validated_config
from stsq.claims.judge import CLAIMS, evaluate_claims
from stsq.core import claim_records as cl
from stsq.core.claim_records import FAIL, NOT_TESTED, PASS
from stsq.core.seeds import generator
from stsq.retrieval import task as retrieval
from stsq.retrieval.cells import SampleCell, code_width, sample_cells
from stsq.samples.run import samples_to_thresholds
from stsq.samples.table import SAMPLE_COLUMNS, slopes
from stsq.sts.models import Model, build_model
from stsq.sts.task import power

QSTR_CLAIMS = [k for k, c in CLAIMS.items() if c.task == "qstr"]


def cell(**changes) -> SampleCell:
    base = SampleCell(arch="qstr_transformer", q=1, N=4, d=4, mode="general", heads=1, width=16,
                      d_e=code_width(4), codes="sign", test_mode="general", lr=1e-3, weight_decay=0.01,
                      batch_size=32, check_every=5, n_test=100, cap=3200, thresholds=(0.9, 0.5), log_every=100)
    return replace(base, **changes)


# -- the task ----------------------------------------------------------------------------------------
def test_the_target_is_what_each_position_retrieves_along_its_direction():
    g = generator(0)
    U = retrieval.directions(6, 2, seed=3)
    b = retrieval.sample_batch(5, 7, 2, 6, "general", U, g)
    for s in range(5):
        for i in range(7):
            expected = sum(float(b.X[s, b.t[s, i, k]] @ U[k]) for k in range(2))
            assert b.target[s, i].item() == pytest.approx(expected, abs=1e-5)


def test_the_directions_are_orthonormal_and_the_loss_divides_by_q():
    U = retrieval.directions(10, 3, seed=0)
    assert torch.allclose(U @ U.T, torch.eye(3), atol=1e-6)
    b = retrieval.sample_batch(20000, 6, 2, 10, "general", retrieval.directions(10, 2, 1), generator(1))
    # E[y_i^2] = q: predicting 0 scores 1, the trivial loss
    assert b.target.pow(2).mean().item() / power("qstr", 10, 2) == pytest.approx(1.0, abs=0.03)


def test_simple_pointers_are_shared_by_every_position_and_general_ones_are_not():
    simple = retrieval.pointers(50, 8, 2, "simple", generator(0))
    general = retrieval.pointers(50, 8, 2, "general", generator(0))
    assert (simple == simple[:, :1]).all()
    assert not (general == general[:, :1]).all()
    with pytest.raises(ValueError, match="mode"):
        retrieval.pointers(2, 4, 1, "sideways", generator(0))


def test_sign_codes_are_plus_minus_one_over_root_d_e_and_stochastic_ones_unit():
    E = retrieval.sign_codes(12, code_width(12), table_seed=0)
    assert code_width(12) == 12  # floor(5 ln 12)
    assert torch.allclose(E.abs(), torch.full_like(E, 1 / math.sqrt(12)))
    S = retrieval.stochastic_codes(3, 12, 5, generator(0))
    assert torch.allclose(S.norm(dim=-1), torch.ones(3, 12), atol=1e-6)


def test_one_average_of_the_two_pointed_tokens_leaves_half_the_trivial_loss():
    """docs/retrieval.md: with weights that do not depend on the contents, one head returns w = a x_a + (1-a) x_b,
    and the best predictor of <x_a, u_1> + <x_b, u_2> from w leaves 1/2 of the trivial loss, whatever a: measured
    by least squares on samples, independently of the derivation."""
    rng = np.random.default_rng(0)
    d, n = 6, 200000
    u = np.linalg.qr(rng.standard_normal((d, 2)))[0].T
    xa, xb = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    y = xa @ u[0] + xb @ u[1]
    for a in (0.5, 0.7, 0.9):
        w = a * xa + (1 - a) * xb
        coef, *_ = np.linalg.lstsq(w, y, rcond=None)
        assert np.mean((y - w @ coef) ** 2) / 2 == pytest.approx(0.5, abs=0.01)
    both = np.hstack([xa, xb])  # two heads: each token apart, and the target is linear in them
    coef, *_ = np.linalg.lstsq(both, y, rcond=None)
    assert np.mean((y - both @ coef) ** 2) / 2 < 1e-6


# -- the families --------------------------------------------------------------------------------------
@pytest.mark.parametrize("arch,heads", [("qstr_transformer", 2), ("qstr_ffn", 0), ("qstr_rnn", 0)])
@pytest.mark.parametrize("codes", ["sign", "stochastic"])
def test_each_family_implements_the_model_interface_and_predicts_every_position(arch, heads, codes):
    r = cell(arch=arch, heads=heads, q=2, codes=codes, d_e=code_width(4))
    model = build_model(r, seed=0)
    assert isinstance(model, Model)
    g = generator(1)
    b = retrieval.sample_batch(3, 4, 2, 4, "general", retrieval.directions(4, 2, 0), g)
    P = model.positions(3, 4, g)
    f, a = model(b.X, b.t, P)
    assert f.shape == (3, 4)
    assert (a is None) == (arch != "qstr_transformer")
    assert model.accepts_length(4) and not model.accepts_length(5)
    again, _ = build_model(r, seed=0)(b.X, b.t, P)
    assert torch.equal(f, again)  # a seed gives the same model
    other, _ = build_model(r, seed=1)(b.X, b.t, P)
    assert not torch.equal(f, other)


# -- the measurement -------------------------------------------------------------------------------------
def test_a_threshold_not_reached_by_the_cap_is_censored_at_the_cap():
    rows = samples_to_thresholds(cell(thresholds=(0.999, 1e-6), cap=640), seed=0, log=lambda s: None)
    easy, hard = rows
    assert not easy["censored"] and easy["samples"] == 5 * 32  # the first check is below 0.999
    assert hard["censored"] and hard["samples"] == 640 and hard["test_loss"] > 1e-6


@pytest.mark.parametrize("stop", [3, 17, 60])
def test_a_samples_run_stopped_anywhere_resumes_to_the_same_rows(tmp_path, stop):
    """A run stopped after ``stop`` steps (between checks, at a check, after the first threshold) and run again
    from its checkpoint gives the rows of the uninterrupted run, bit for bit."""
    r = cell(thresholds=(0.9, 0.5), cap=3200, checkpoint_every=2)
    whole = samples_to_thresholds(r, 0, log=lambda s: None)
    ck = tmp_path / "last.pt"
    assert samples_to_thresholds(r, 0, checkpoint=ck, stop_after=stop, log=lambda s: None) == []
    said = []
    resumed = samples_to_thresholds(r, 0, checkpoint=ck, log=said.append)
    assert any("resumed from checkpoint" in line for line in said)
    assert resumed == whole


def test_a_samples_checkpoint_of_another_cell_is_not_resumed(tmp_path):
    ck = tmp_path / "last.pt"
    samples_to_thresholds(cell(cap=3200), 0, checkpoint=ck, stop_after=20, log=lambda s: None)
    said = []
    samples_to_thresholds(cell(cap=3200, lr=2e-3), 0, checkpoint=ck, log=said.append)
    assert any("written for another configuration" in line for line in said)


def test_a_diverging_samples_run_names_the_cell_and_step():
    from stsq.core.errors import DivergenceError
    with pytest.raises(DivergenceError, match=r"arch~qstr_transformer.*seed 0 diverged.*at step \d+"):
        samples_to_thresholds(cell(lr=1e12, cap=3200), 0, log=lambda s: None)


def test_a_samples_cell_record_refuses_a_missing_and_an_unknown_key():
    from stsq.core.experiment import CellRecordError
    record = json.loads(cell().to_json())
    del record["cap"]
    record["caps"] = 10
    with pytest.raises(CellRecordError, match="unknown key.*caps.*missing key.*cap"):
        SampleCell.from_json(json.dumps(record))
    assert SampleCell.from_json(cell().to_json()) == cell()


def test_the_same_cell_and_seed_give_the_same_samples():
    r = cell(thresholds=(0.9, 0.5), cap=3200)
    assert samples_to_thresholds(r, 0, log=lambda s: None) == samples_to_thresholds(r, 0, log=lambda s: None)


# -- the slopes ------------------------------------------------------------------------------------------
def synthetic(arch, exponents, mode="general", q=1, heads=1, censor_from=math.inf, cap=10**6, base=1000,
              threshold=0.3, Ns=(4, 8, 16, 32)):
    """A samples table whose seeds grow like N^exponent (one exponent per seed), censored from ``censor_from``."""
    rows = []
    for seed, b in enumerate(exponents):
        for N in Ns:
            s = base * (N / Ns[0]) ** b
            cens = N >= censor_from
            rows.append({"arch": arch, "q": q, "N": N, "d": 10, "mode": mode, "heads": heads, "width": 100,
                         "codes": "sign", "test_mode": mode, "seed": seed, "threshold": threshold,
                         "samples": cap if cens else round(s), "censored": cens, "test_loss": 0.25, "steps": 1})
    return pd.DataFrame(rows, columns=SAMPLE_COLUMNS)


def test_the_slope_is_the_growth_in_log_n_and_a_censored_n_gives_a_floor_of_it():
    s = slopes(synthetic("qstr_ffn", [1.0, 1.1, 0.9])).iloc[0]
    assert (s["slope_low"], s["slope_high"]) == pytest.approx((0.9, 1.1), abs=0.01)
    assert s["slope"] == pytest.approx(1.0, abs=0.01) and math.isnan(s["floor"]) and s["censored_Ns"] == ""
    # censored at N = 32 with a cap of 10^5 samples, from 1000 at N = 4: the growth to 32 is at least
    # log(100) / log(8), whatever the samples past the cap
    c = slopes(synthetic("qstr_ffn", [1.0, 1.0, 1.0], censor_from=32, cap=10**5)).iloc[0]
    assert c["censored_Ns"] == "32" and c["Ns"] == "4 8 16" and c["slope"] == pytest.approx(1.0, abs=0.01)
    assert c["floor"] == pytest.approx(math.log(100) / math.log(8))


# -- the claims, each able to fail -----------------------------------------------------------------------
def verdicts(table) -> dict:
    claims = evaluate_claims(table, None, "qstr")
    assert set(claims["claim"]) <= set(QSTR_CLAIMS)
    return {(r.claim, r.cell): r.verdict for r in claims.itertuples()}


def lawful(arch, growth, mode="general", cap=None, seeds=3, Ns=(4, 8, 16, 32)):
    """A samples table whose seeds grow like ``growth(N)`` from 1000 samples at the smallest N, seed s x (1 + 0.02 s)
    (a spread the margin sees); where ``cap`` is given, samples past it are censored at it."""
    rows = []
    for seed in range(seeds):
        for N in Ns:
            s = 1000 * growth(N) / growth(Ns[0]) * (1 + 0.02 * seed)
            cens = cap is not None and s > cap
            rows.append({"arch": arch, "q": 1, "N": N, "d": 10, "mode": mode, "heads": 1, "width": 100,
                         "codes": "sign", "test_mode": mode, "seed": seed, "threshold": 0.3,
                         "samples": cap if cens else round(s), "censored": cens, "test_loss": 0.25, "steps": 1})
    return pd.DataFrame(rows, columns=SAMPLE_COLUMNS)


def power_law(a):
    return lambda N: N ** a


def test_the_transformer_claim_holds_log_n_out_and_fails_a_power_beyond_it():
    """log N held out at the largest N: a curve growing like log N PASSes (N^0.5 told apart), one like N^0.6
    FAILs, one whose seeds stopped at a cap below log N's prediction is only bounded (NOT TESTED)."""
    assert verdicts(lawful("qstr_transformer", math.log))[("qstr_tf_samples", "general")] == PASS
    assert verdicts(lawful("qstr_transformer", power_law(0.6)))[("qstr_tf_samples", "general")] == FAIL
    # log N from 1000 at N = 4 predicts 2500 at N = 32: a cap of 2200 there leaves a bound below it
    assert verdicts(lawful("qstr_transformer", math.log, cap=2200))[("qstr_tf_samples", "general")] == NOT_TESTED
    # a cap far below a steep growth: the bound alone lies above the prediction by more than the margin
    assert verdicts(lawful("qstr_transformer", power_law(1.0), cap=6000))[("qstr_tf_samples", "general")] == FAIL


def test_the_ffn_claim_holds_n_out_as_a_lower_bound_and_fails_a_slower_growth():
    assert verdicts(lawful("qstr_ffn", power_law(1.0), "simple"))[("qstr_ffn_samples", "simple")] == PASS
    assert verdicts(lawful("qstr_ffn", power_law(0.5), "simple"))[("qstr_ffn_samples", "simple")] == FAIL
    # at the cap from N = 16: held out at N = 8, the largest N with measured samples
    assert verdicts(lawful("qstr_ffn", power_law(2.0), cap=20000))[("qstr_ffn_samples", "general")] == PASS
    # measured at one N only: no held-out test
    assert verdicts(lawful("qstr_ffn", power_law(2.0), cap=3000))[("qstr_ffn_samples", "general")] == NOT_TESTED


def test_the_rnn_claim_needs_a_power_on_the_general_task_and_log_n_on_the_simple_one():
    def table(general, simple):
        return pd.concat([lawful("qstr_rnn", general, "general"), lawful("qstr_rnn", simple, "simple")])
    v = verdicts(table(power_law(1.0), math.log))
    assert v[("qstr_rnn_modes", "general")] == v[("qstr_rnn_modes", "simple")] == PASS
    v = verdicts(table(math.log, power_law(1.0)))
    assert v[("qstr_rnn_modes", "general")] == v[("qstr_rnn_modes", "simple")] == FAIL
    one = verdicts(lawful("qstr_rnn", power_law(1.0)))  # one mode only: the other's row says so
    assert one[("qstr_rnn_modes", "general")] == PASS and one[("qstr_rnn_modes", "simple")] == NOT_TESTED


@pytest.mark.parametrize("claim,arch,mode,law,side", [
    ("qstr_tf_samples", "qstr_transformer", "general", "LOG_N", "or slower"),
    ("qstr_ffn_samples", "qstr_ffn", "simple", "LIKE_N", "at least"),
])
def test_the_power_scan_names_the_first_exponent_whose_curve_fails(claim, arch, mode, law, side):
    """The exponent a row says it rejects: a curve grown like N^a FAILs from there on, and just short of it does
    not (one scan step, 0.01)."""
    import stsq.claims.retrieval as r
    base = lawful(arch, math.log if side == "or slower" else power_law(1.0), mode)
    a = r.power(base, getattr(r, law), r.SQRT_N if law != "SQRT_N" else r.LOG_N, side)
    assert a is not None
    step = 0.01 if side == "or slower" else -0.01
    v = verdicts
    assert v(lawful(arch, power_law(a + step), mode))[(claim, mode)] == FAIL
    assert v(lawful(arch, power_law(a - step), mode))[(claim, mode)] != FAIL
    assert f"rejects N^a for a {'>=' if side == 'or slower' else '<='} {a:.2f}" in \
        evaluate_claims(base, None, "qstr").set_index("cell").loc[mode, "measured"]


def test_the_heads_claim_fails_where_one_head_reaches_the_threshold():
    two = synthetic("qstr_transformer", [0.2] * 3, q=2, heads=2)
    never = synthetic("qstr_transformer", [0.2] * 3, q=2, heads=1, censor_from=4)
    sometimes = synthetic("qstr_transformer", [0.2] * 3, q=2, heads=1, censor_from=16)
    assert set(v for (k, _), v in verdicts(pd.concat([two, never])).items() if k == "qstr_heads") == {PASS}
    v = verdicts(pd.concat([two, sometimes]))
    assert v[("qstr_heads", "general N=4")] == FAIL and v[("qstr_heads", "general N=32")] == PASS
    short = synthetic("qstr_transformer", [0.2] * 3, q=2, heads=2, censor_from=32)
    assert verdicts(pd.concat([short, never]))[("qstr_heads", "general N=32")] == NOT_TESTED
    three = synthetic("qstr_transformer", [0.2] * 3, q=2, heads=3)
    assert set(verdicts(pd.concat([two, three])).values()) == {NOT_TESTED}  # no one-head curve: nothing to judge


def test_no_claim_vanishes_where_its_threshold_or_its_curves_are_missing():
    """A table without the claims' threshold: each claim one NOT TESTED row naming it, and the figure drawn at the
    nearest threshold, saying so.  A table without a family's curves: its claim one NOT TESTED row."""
    from stsq.report.figures_retrieval import samples_figure
    table = pd.concat([synthetic("qstr_transformer", [0.2] * 3, threshold=0.5),
                       synthetic("qstr_ffn", [1.0] * 3, "simple", threshold=0.2)])
    claims = evaluate_claims(table, None, "qstr")
    assert sorted(claims["claim"]) == sorted(QSTR_CLAIMS) and set(claims["verdict"]) == {NOT_TESTED}
    assert all("no row at the threshold 0.3" in m and "its thresholds: 0.2, 0.5" in m for m in claims["measured"])
    fig = samples_figure(table)
    assert "(0.3, the one asked for, is not in this table)" in fig.axes[0].get_ylabel()
    assert fig.axes[0].get_ylabel().startswith("samples to loss < 0.2")
    only_ffn = evaluate_claims(synthetic("qstr_ffn", [1.0] * 3, "simple"), None, "qstr")
    assert sorted(only_ffn["claim"]) == sorted(QSTR_CLAIMS)
    tf = only_ffn[only_ffn["claim"] == "qstr_tf_samples"].iloc[0]
    assert tf["verdict"] == NOT_TESTED and "none of the curves it reads" in tf["measured"]


def test_a_row_says_whether_it_tests_the_papers_statement_or_this_projects_extension():
    """The paper states the transformer's N-independence on the general task, the FFN's N samples on the simple
    one, the RNN's both modes; the transformer on the simple task, the FFN on the general one and the heads at
    this project's q = 2 target are ours."""
    table = pd.concat([synthetic("qstr_transformer", [0.2] * 3, mode) for mode in ("general", "simple")]
                      + [synthetic("qstr_ffn", [1.0] * 3, mode) for mode in ("general", "simple")]
                      + [synthetic("qstr_rnn", [1.0] * 3, mode) for mode in ("general", "simple")]
                      + [synthetic("qstr_transformer", [0.2] * 3, q=2, heads=h) for h in (1, 2)])
    claims = evaluate_claims(table, None, "qstr")
    kind = {(r.claim, r.cell): r.kind for r in claims.itertuples()}
    assert kind[("qstr_tf_samples", "general")] == kind[("qstr_ffn_samples", "simple")] == cl.PAPER
    assert kind[("qstr_rnn_modes", "general")] == kind[("qstr_rnn_modes", "simple")] == cl.PAPER
    assert kind[("qstr_tf_samples", "simple")] == kind[("qstr_ffn_samples", "general")] == cl.OURS
    assert {k for (c, _), k in kind.items() if c == "qstr_heads"} == {cl.OURS}
    ours = claims[claims["kind"] == cl.OURS]
    assert ours["statement"].str.startswith("ours:").all()
    paper = claims[claims["kind"] == cl.PAPER]
    assert paper["statement"].str.contains('"').all()  # in the paper's words, quoted


# -- the config and the workflow -----------------------------------------------------------------------
QSTR_TINY = ROOT / "tests" / "configs" / "qstr_tiny.yaml"


@pytest.mark.parametrize("path, value, fragment", [
    (("q",), [1, 5], "'sweeps.qstr_tiny.q': q=5 exceeds d=4"),
    (("N",), [1, 4], "'sweeps.qstr_tiny.N': N=1"),
    (("archs", "qstr_ffn", "N"), [4, 64], "'sweeps.qstr_tiny.archs.qstr_ffn.N': [64] not in the sweep's N"),
    (("archs", "tf_fixed"), {"width": 8}, "'sweeps.qstr_tiny.archs': 'tf_fixed' is not one of"),
    (("archs", "qstr_rnn", "widht"), 8, "'sweeps.qstr_tiny.archs.qstr_rnn.widht': unknown key"),
    (("thresholds",), [0.5, 1.5], "'sweeps.qstr_tiny.thresholds.1'"),
    (("cap",), 6401, "'sweeps.qstr_tiny.cap': 6401 is not a multiple of the batch_size 64"),
    (("thresholds",), [0.5, 0.2], "'sweeps.qstr_tiny.thresholds': [0.5, 0.2] lacks 0.3, the threshold the claims"),
])
def test_a_bad_retrieval_sweep_is_refused_naming_the_key(path, value, fragment):
    from stsq.config import ConfigError, validate_config
    config = yaml.safe_load(QSTR_TINY.read_text())
    node = config["sweeps"]["qstr_tiny"]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ConfigError) as e:
        validate_config(config, ROOT / "workflow" / "schemas" / "config.schema.yaml")
    assert fragment in str(e.value)


def test_a_retrieval_arch_in_an_sts_sweep_is_refused_naming_the_key():
    from stsq.config import ConfigError, validate_config
    config = yaml.safe_load(TINY.read_text())
    config["sweeps"]["tiny"]["archs"]["qstr_ffn"] = {"widths": [8], "steps": 10, "lr": 0.01}
    with pytest.raises(ConfigError, match=r"'sweeps.tiny.archs': 'qstr_ffn' is not one of"):
        validate_config(config, ROOT / "workflow" / "schemas" / "config.schema.yaml")


@pytest.mark.slow
def test_the_retrieval_sweep_runs_to_its_tables_claims_figure_and_report(tmp_path):
    work = copy_workflow(tmp_path / "work")
    snakemake(work, "--cores", "2", "--configfile", QSTR_TINY)
    root = work / "results" / "qstr_tiny"
    table = pd.read_csv(root / "tables" / "samples.csv")
    cells = yaml.safe_load(QSTR_TINY.read_text())["sweeps"]["qstr_tiny"]
    assert len(table) == 16 * len(cells["seeds"]) * len(cells["thresholds"])  # 16 cells
    assert len(sample_cells(validated_config(QSTR_TINY)["sweeps"]["qstr_tiny"])) == 16
    assert table["censored"].any() and not table["censored"].all()  # some reached, some bounded by the cap
    assert (table[table["censored"]]["samples"] == cells["cap"]).all()
    claims = pd.read_csv(root / "tables" / "claims.csv")
    assert set(claims["claim"]) == set(QSTR_CLAIMS)  # its task's claims, and no STS_q claim
    for name in ("samples.csv", "slopes.csv", "claims.csv"):
        assert json.loads((root / "tables" / name.replace(".csv", ".provenance.json")).read_text())["made_by"]
    assert (root / "figures" / "samples.png").stat().st_size > 10_000
    landing = (root / "report" / "landing.rst").read_text()
    assert "Result:" in landing
    # the claims table and the figure open inside the report, as a width sweep's do (a plain path would not resolve)
    assert "resultPath:'results/qstr_tiny/tables/claims.html'" in landing
    assert "resultPath:'results/qstr_tiny/figures/samples.png'" in landing
    assert "Nothing to be done" in snakemake(work, "-n", "--configfile", QSTR_TINY).stdout  # a second run: nothing
    snakemake(work, "--configfile", QSTR_TINY, "--report", "results/qstr_tiny/report.html")
    html = (root / "report.html").read_text()
    assert "qstr_heads" in html and "samples.png" in html


# -- each PASS against a real run in which its rival holds ------------------------------------------------
REFERENCE_SAMPLES = ROOT / "reference" / "qstr" / "samples.csv"


def _as(table, source, target, **changes):
    """The rows of ``source`` (arch and filters) relabelled as ``target``: a real curve read by another claim."""
    part = table[table["arch"] == source].assign(arch=target, **changes)
    return part


@pytest.mark.skipif(not REFERENCE_SAMPLES.exists(), reason="reference/qstr is written by `make reference`")
def test_each_claim_of_the_reference_fails_on_a_real_curve_where_its_rival_holds():
    table = pd.read_csv(REFERENCE_SAMPLES)
    ffn, tf = table[table["arch"] == "qstr_ffn"], table[(table["arch"] == "qstr_transformer") & (table["q"] == 1)]
    # the FFN's curve (growth like N) read as the transformer's: N^0.5 not rejected
    assert FAIL in set(evaluate_claims(_as(ffn, "qstr_ffn", "qstr_transformer", heads=1), None, "qstr")["verdict"])
    # the transformer's curve (almost flat) read as the FFN's: FAIL
    flat = evaluate_claims(_as(tf, "qstr_transformer", "qstr_ffn", heads=0), None, "qstr")
    assert set(flat[flat["claim"] == "qstr_ffn_samples"]["verdict"]) == {FAIL}
    # the transformer's curves read as the RNN's: no growth on the general task, FAIL
    rnn = evaluate_claims(_as(tf, "qstr_transformer", "qstr_rnn", heads=0), None, "qstr")
    assert set(rnn[rnn["claim"] == "qstr_rnn_modes"]["verdict"]) == {FAIL}
    # two heads read as one: one head reaches the threshold, FAIL at every N
    two = table[(table["q"] == 2) & (table["heads"] == 2)]
    doubled = pd.concat([two, two.assign(heads=1)])
    heads = evaluate_claims(doubled, None, "qstr")
    assert set(heads[heads["claim"] == "qstr_heads"]["verdict"]) == {FAIL}


def test_a_samples_job_killed_mid_run_and_rerun_writes_the_same_table(tmp_path):
    """`python -m stsq samples` SIGKILLed after its first checkpoint, then run again: its samples.csv is byte for
    byte that of a run never killed."""
    import os
    import signal
    import subprocess
    import sys
    import time
    e = {**os.environ, "PYTHONPATH": str(ROOT / "workflow" / "src")}
    record = cell(N=8, d_e=code_width(8), thresholds=(0.5, 0.1), cap=32 * 400, checkpoint_every=3).to_json()

    def command(out):
        return [sys.executable, "-m", "stsq", "samples", "--task", "qstr", "--cell", record, "--seeds", "0", "1",
                "--out", str(out / "samples.csv"), "--checkpoint-dir", str(out / "ck"), "--device", "cpu"]
    subprocess.run(command(tmp_path / "whole"), env=e, check=True, capture_output=True)
    killed = tmp_path / "killed"
    proc = subprocess.Popen(command(killed), env=e, stderr=subprocess.DEVNULL, start_new_session=True)
    t0 = time.perf_counter()
    while not (killed / "ck" / "seed~0" / "last.pt").exists():
        assert proc.poll() is None, "the job finished before its first checkpoint"
        assert time.perf_counter() - t0 < 120
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (killed / "samples.csv").exists()
    r = subprocess.run(command(killed), env=e, check=True, capture_output=True, text=True)
    assert "resumed from checkpoint" in r.stderr
    assert (killed / "samples.csv").read_bytes() == (tmp_path / "whole" / "samples.csv").read_bytes()


@pytest.mark.slow
def test_the_pilot_of_a_samples_sweep_times_every_cell_and_extrapolates_to_its_cap(tmp_path):
    """pilot=true on a samples sweep: every cell for a few checks of one seed, through the same rules; the pilot's
    table has a row per cell, its time extrapolated to the real cap and seeds, beside the estimate said up front."""
    work = copy_workflow(tmp_path / "work")
    config = yaml.safe_load(QSTR_TINY.read_text())  # every family and both head counts at one N and mode: 5 cells
    config["sweeps"]["qstr_tiny"].update({"N": [4], "modes": ["general"]})
    config["sweeps"]["qstr_tiny"]["archs"]["qstr_rnn"]["N"] = [4]
    (work / "pilot.yaml").write_text(yaml.safe_dump(config))
    snakemake(work, "--cores", "2", "--configfile", "pilot.yaml", "--config", "pilot=true")
    root = work / "results" / "qstr_tiny_pilot"
    pilot = pd.read_csv(root / "tables" / "pilot.csv")
    sweep = validated_config(work / "pilot.yaml")["sweeps"]["qstr_tiny"]
    assert len(sample_cells(sweep)) == 5
    assert list(pilot["rule"].unique()) == ["samples"] and len(pilot) == len(sample_cells(sweep))
    assert (pilot["measured_s"] > 0).all() and (pilot["extrapolated_s"] > pilot["measured_s"]).all()
    samples = pd.read_csv(root / "tables" / "samples.csv")
    assert set(samples["seed"]) == {sweep["seeds"][0]}
    assert (samples["steps"] <= 3 * int(sweep["check_every"])).all()  # three checks at most
    text = (root / "tables" / "pilot.txt").read_text()
    assert "3 checks of one seed" in text and "samples" in text and "estimated up front" in text


def test_the_authors_script_and_this_pipeline_are_set_side_by_side_at_one_grid_test_set_and_threshold(
        tmp_path, monkeypatch):
    """docs/retrieval.md's comparison: each (family, mode, threshold) their script ran at the sweep's grid is a row
    beside the sweep's own samples at the same N; a sample changed in their file changes that row's cell and
    slope; each changed setting gets its own table."""
    from stsq.report import quote
    ref = ROOT / "reference" / "qstr"
    theirs = pd.read_csv(quote.AUTHORS_OURS, comment="#")
    text = quote.authors_table(ref)
    base = theirs[(theirs["init"] == "torch") & (theirs["tables"] == "shared")]
    first = text.split("\n\n")[1]  # the table at the sweep's grid
    for (fam, mode, thr), g in base.groupby(["family", "mode", "threshold"]):
        row = next(line for line in first.splitlines() if line.startswith(f"| `{fam}` | {mode} | {thr:g} |"))
        for N in g["N"].unique():
            assert f"{N}: " in row, (fam, mode, thr, N)
    assert text.count("changed in one setting") == len(theirs.groupby(["init", "tables"])) - 1
    # plant: their transformer on the general task needs 10 x the samples at N = 32, every repeat
    at = (theirs["family"] == "qstr_transformer") & (theirs["mode"] == "general") & (theirs["N"] == 32) \
        & (theirs["threshold"] == 0.5) & (theirs["init"] == "torch") & (theirs["tables"] == "shared")
    planted = tmp_path / "theirs.csv"
    theirs.assign(samples=np.where(at, theirs["samples"] * 10, theirs["samples"])).to_csv(planted, index=False)
    monkeypatch.setattr(quote, "AUTHORS_OURS", planted)
    changed = quote.authors_table(ref)
    row = next(line for line in changed.splitlines() if line.startswith("| `qstr_transformer` | general | 0.5 |"))
    before = next(line for line in text.splitlines() if line.startswith("| `qstr_transformer` | general | 0.5 |"))
    assert row != before and "32: " + f"{int(base[at]['samples'].median() * 10):,}" in row


# -- every claim, PASS where its law holds and FAIL where its named rival does ----------------------------------
def _heads(one_head_reaches: bool, cap=20000, Ns=(4, 8)):
    """q = 2: two heads reach the threshold at 1000 samples; one head stops at the cap, or reaches it at 5000."""
    rows = []
    for seed, N, heads in itertools.product(range(3), Ns, (1, 2)):
        s = 1000 if heads == 2 else 5000 if one_head_reaches else cap
        rows.append({"arch": "qstr_transformer", "q": 2, "N": N, "d": 10, "mode": "general", "heads": heads,
                     "width": 100, "codes": "sign", "test_mode": "general", "seed": seed, "threshold": 0.3,
                     "samples": s, "censored": heads == 1 and not one_head_reaches, "test_loss": 0.25, "steps": 1})
    return pd.DataFrame(rows, columns=SAMPLE_COLUMNS)


RIVAL_CASES = {  # (claim, cell): (a table where its law holds, one where its named rival holds)
    ("qstr_tf_samples", "general"): lambda: (lawful("qstr_transformer", math.log),
                                             lawful("qstr_transformer", power_law(0.5))),
    ("qstr_tf_samples", "simple"): lambda: (lawful("qstr_transformer", math.log, "simple"),
                                            lawful("qstr_transformer", power_law(0.5), "simple")),
    ("qstr_ffn_samples", "general"): lambda: (lawful("qstr_ffn", power_law(1.0)), lawful("qstr_ffn", power_law(0.5))),
    ("qstr_ffn_samples", "simple"): lambda: (lawful("qstr_ffn", power_law(1.0), "simple"),
                                             lawful("qstr_ffn", power_law(0.5), "simple")),
    ("qstr_rnn_modes", "general"): lambda: (lawful("qstr_rnn", power_law(0.5)), lawful("qstr_rnn", math.log)),
    ("qstr_rnn_modes", "simple"): lambda: (lawful("qstr_rnn", math.log, "simple"),
                                           lawful("qstr_rnn", power_law(0.5), "simple")),
    ("qstr_heads", "general N=8"): lambda: (_heads(False), _heads(True)),
}


def test_every_claim_of_retrieval_has_a_table_where_its_law_holds_and_one_where_its_rival_does():
    assert {claim for claim, _ in RIVAL_CASES} == set(QSTR_CLAIMS)


@pytest.mark.parametrize("case", list(RIVAL_CASES), ids=lambda c: f"{c[0]}-{c[1]}")
def test_each_retrieval_claim_passes_where_its_law_holds_and_fails_where_its_named_rival_does(case):
    law, rival = RIVAL_CASES[case]()
    assert verdicts(law)[case] == PASS
    assert verdicts(rival)[case] == FAIL
