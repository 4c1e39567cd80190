"""The paper's claims at the `cpu` sweep's scale, with real training: the `cpu` sweep of config.yaml
runs through Snakemake (what `make run` does); every claim of its claims table is tested and passes,
and its critical widths agree with a second computation from metrics.csv alone.

Run with -s to see the claims table.
"""

import csv
import math
import time
from collections import defaultdict

import pandas as pd
import pytest
from helpers import copy_workflow, snakemake
from stsq import experiment as ex

pytestmark = [pytest.mark.slow, pytest.mark.workflow]


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory):
    work = copy_workflow(tmp_path_factory.mktemp("cpu") / "wf")
    t0 = time.perf_counter()
    snakemake(work, "--cores", "2", "--config", "sweep=cpu", timeout=1500)
    table = pd.read_csv(work / ex.Layout("cpu").claims("csv"))
    with pd.option_context("display.width", 250, "display.max_colwidth", 120):
        print(f"\n[measured] the cpu sweep in {time.perf_counter() - t0:.0f}s:\n"
              f"{table[['claim', 'q', 'N', 'd', 'measured', 'verdict']]}")
    return work, table


@pytest.fixture(scope="module")
def claims(cpu_run):
    return cpu_run[1]


# two budgets: the `budget` sweep (make budget); randomized positions: the `encodings` sweep (make encodings)
NOT_IN_CPU = {"fcn_budget", "length_randomized"}
# the encodings the cpu sweep does not train (make encodings does): one NOT TESTED row each, saying so
ELSEWHERE = {"tf_learned", "tf_randomized"}


def _in_cpu(claims):
    """The rows about what the cpu sweep trains (not the one-row notes on the archs it lacks)."""
    absent = claims["measured"].str.startswith("not tested: the sweep has no")
    assert set(claims[absent]["cell"]) <= ELSEWHERE, claims[absent][["claim", "cell"]]
    return claims[~absent]


def test_every_claim_of_the_paper_is_tested_by_the_cpu_sweep(claims):
    expected = set(ex.CLAIMS) - NOT_IN_CPU
    assert set(claims["claim"]) == set(ex.CLAIMS)
    rows = _in_cpu(claims)
    untested = rows[(rows["verdict"] == ex.NOT_TESTED) & rows["claim"].isin(expected)]
    assert untested.empty, untested[["claim", "N", "d", "measured"]].to_string()


# What the cpu sweep measures (docs/claims.md, "Measured on the cpu sweep"): every claim it can test holds,
# but one: at 2,000 steps the FCN's need grows like N^1.8 d^1.1, not through N d alone.
MEASURED_FAIL = {"fcn_product"}


@pytest.mark.parametrize("key", sorted(set(ex.CLAIMS) - NOT_IN_CPU))
def test_claim_verdict_at_cpu_scale(claims, key):
    rows = _in_cpu(claims)
    rows = rows[rows["claim"] == key]
    expected = ex.FAIL if key in MEASURED_FAIL else ex.PASS
    other = rows[rows["verdict"] != expected]
    assert len(rows) and other.empty, other[["claim", "q", "N", "d", "cell", "measured", "threshold",
                                             "verdict"]].to_string()


def independent_critical_widths(metrics_csv, eps):
    """The critical widths recomputed from metrics.csv with the csv module and math alone: per model family
    and seed, the first width whose final loss at N' = N is <= eps, log-log interpolated with the width
    before it; None where the value is censored."""
    losses = defaultdict(dict)
    with open(metrics_csv) as fh:
        for r in csv.DictReader(fh):
            if r["split"] == "eval" and r["metric"] == "normalized_loss" and r["status"] == "ok" \
                    and r["N_eval"] == r["N"]:
                key = (r["arch"], int(r["q"]), int(r["N"]), int(r["d"]), int(r["steps"]), int(r["seed"]))
                losses[key][int(r["width"])] = float(r["value"])
    out = {}
    for key, by_width in losses.items():
        widths = sorted(by_width)
        out[key] = None
        for lo, hi in zip(widths, widths[1:]):
            if by_width[lo] > eps >= by_width[hi]:
                t = (math.log(eps) - math.log(by_width[lo])) / (math.log(by_width[hi]) - math.log(by_width[lo]))
                out[key] = math.exp(math.log(lo) + t * (math.log(hi) - math.log(lo)))
                break
            if by_width[lo] <= eps:
                break
    return out


def test_the_critical_widths_agree_with_a_second_computation_from_metrics_csv(cpu_run):
    work, _ = cpu_run
    layout = ex.Layout("cpu")
    table = pd.read_csv(work / layout.critical)
    for eps in ex.EPSILONS:
        ours = independent_critical_widths(work / layout.table, eps)
        t = table[table["epsilon"] == eps]
        assert len(t) == len(ours)
        for r in t.itertuples():
            mine = ours[(r.arch, r.q, r.N, r.d, r.steps, r.seed)]
            if r.censored == "none":
                assert mine == pytest.approx(r.critical_width, rel=1e-9), r
            else:
                assert mine is None, r
    measured = table[(table["epsilon"] == ex.EPSILON) & (table["censored"] == "none")]
    print(f"\n[measured] {len(measured)} of {len(table[table['epsilon'] == ex.EPSILON])} critical widths at "
          f"eps {ex.EPSILON} measured (not censored)")
    # the archs swept over several widths (the FCN, the paper's model): most of their widths are measured
    swept = table[(table["epsilon"] == ex.EPSILON) & table["arch"].isin([ex.fcn_arch(), ex.paper_model()])]
    assert len(measured) > len(swept) / 2 and set(measured["arch"]) == {ex.fcn_arch(), ex.paper_model()}
