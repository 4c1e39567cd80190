"""The paper's claims at the `cpu` sweep's scale, with real training: the `cpu` sweep of config.yaml
runs through Snakemake (what `make run` does) and every claim of its claims table is tested and passes.

Run with -s to see the claims table.
"""

import time

import pandas as pd
import pytest
from helpers import copy_workflow, snakemake
from stsq import experiment as ex

pytestmark = [pytest.mark.slow, pytest.mark.workflow]


@pytest.fixture(scope="module")
def claims(tmp_path_factory):
    work = copy_workflow(tmp_path_factory.mktemp("cpu") / "wf")
    t0 = time.perf_counter()
    snakemake(work, "--cores", "2", "--config", "sweep=cpu", timeout=1200)
    table = pd.read_csv(work / ex.Layout("cpu").claims("csv"))
    with pd.option_context("display.width", 250, "display.max_colwidth", 90):
        print(f"\n[measured] the cpu sweep in {time.perf_counter() - t0:.0f}s:\n"
              f"{table[['claim', 'q', 'N', 'measured', 'verdict']]}")
    return table


def test_every_claim_of_the_paper_is_tested_by_the_cpu_sweep(claims):
    assert set(claims["claim"]) == set(ex.CLAIMS)
    untested = claims[claims["verdict"] == ex.NOT_TESTED]
    assert untested.empty, untested[["claim", "N", "measured"]].to_string()


@pytest.mark.parametrize("key", list(ex.CLAIMS))
def test_claim_holds_at_cpu_scale(claims, key):
    rows = claims[claims["claim"] == key]
    failed = rows[rows["verdict"] != ex.PASS]
    assert failed.empty, failed[["claim", "q", "N", "cell", "measured", "threshold", "verdict"]].to_string()
