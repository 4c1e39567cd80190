"""The claims logic on synthetic tables: a claim passes when the numbers say what the paper says,
fails when they contradict it, and is "not tested" when the sweep cannot test it."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from stsq import experiment as ex
from stsq.claims import evaluate_claims, growth_slopes, needed_widths
from stsq.theory import width_floor

D, Q, SEEDS = 16, 2, (0, 1)
FCN_WIDTHS, TF_WIDTHS = (64, 128, 256, 512, 1024), (8, 16, 32, 64)


def table(Ns=(4, 8, 16), fcn_loss=None, tf_loss=None, fixed_off=0.7, cos=(0.99, 0.95), factors=(1, 2, 4),
          above_floor=True):
    """Final losses (split eval) and a last curve point with the cosines (split test), per seed.

    fcn_loss(N, m) / tf_loss(N, d_e, N') give the loss; by default the FCN learns once m >= N d and the
    transformer once d_e >= 16 at any N, so the FCN's needed width grows like N d and the transformer's stays.
    """
    fcn_loss = fcn_loss or (lambda N, m: 0.05 if m >= N * D else 0.6)
    tf_loss = tf_loss or (lambda N, w, L: 0.005 if w >= 16 else 0.3)
    rows = []

    def add(arch, N, w, s, split, L, metric, value, step=1000):
        rows.append({"arch": arch, "q": Q, "N": N, "d": D, "width": w, "seed": s, "step": step, "split": split,
                     "N_eval": L, "metric": metric, "value": value, "status": ex.OK})

    for N, s in itertools.product(Ns, SEEDS):
        jitter = 1 + 0.01 * s
        for m in FCN_WIDTHS:
            loss = fcn_loss(N, m)
            if above_floor:
                loss = max(loss, width_floor(N, D, Q, m))
            add(ex.FCN_ARCH, N, m, s, "eval", N, ex.LOSS, loss * jitter)
        for w in TF_WIDTHS:
            for f in factors:
                add(ex.STOCHASTIC, N, w, s, "eval", f * N, ex.LOSS, tf_loss(N, w, f * N) * jitter)
                add(ex.STOCHASTIC, N, w, s, "eval", f * N, ex.PROJECTION, tf_loss(N, w, N))
            add(ex.STOCHASTIC, N, w, s, "test", N, "cos_V_ground_truth", cos[0])
            add(ex.STOCHASTIC, N, w, s, "test", N, "cos_W_pp_identity", cos[1])
        for f in factors:
            add(ex.FIXED, N, 64, s, "eval", f * N, ex.LOSS, 0.004 if f == 1 else fixed_off)
    return pd.DataFrame(rows, columns=ex.TABLE_COLUMNS)


def oracle(Ns=(4, 8, 16), value=0.0, factors=(1, 2, 4)):
    rows = [{"q": Q, "N": N, "d": D, "width": w, "N_eval": f * N, ex.LOSS: value, "standard_error": 1e-4,
             "c": 50.0, "v": 1.0, "samples": 1024} for N in Ns for w in TF_WIDTHS for f in factors]
    return pd.DataFrame(rows, columns=ex.ORACLE_COLUMNS)


def verdicts(claims: pd.DataFrame) -> dict:
    out = {}
    for r in claims.itertuples():
        out.setdefault(r.claim, set()).add(r.verdict)
    return out


def test_the_papers_picture_passes_every_claim():
    v = verdicts(evaluate_claims(table(), oracle()))
    assert set(v) == set(ex.CLAIMS)
    assert all(s == {ex.PASS} for s in v.values()), v


def test_swapping_the_archs_fails_both_scaling_claims():
    """The FCN's needed width flat, the transformer's growing like N d: the separation is reversed."""
    t = table(fcn_loss=lambda N, m: 0.05, tf_loss=lambda N, w, L: 0.005 if w >= 2 * N else 0.3, above_floor=False)
    v = verdicts(evaluate_claims(t, oracle()))
    assert v["fcn_scaling"] == {ex.FAIL} and v["tf_scaling"] == {ex.FAIL}


def test_the_needed_width_and_its_growth_are_measured_per_seed():
    need = needed_widths(table()[lambda t: t["split"] == "eval"], ex.FCN_ARCH)
    assert need.groupby("N")["width"].first().to_dict() == {4: 64, 8: 128, 16: 256}  # = N d
    slopes = growth_slopes(need)
    assert np.allclose(slopes["slope"], 1.0) and len(slopes) == len(SEEDS)


def test_one_N_leaves_the_scaling_claims_not_tested():
    claims = evaluate_claims(table(Ns=(8,)), oracle(Ns=(8,)))
    v = verdicts(claims)
    assert v["fcn_scaling"] == {ex.NOT_TESTED} and v["tf_scaling"] == {ex.NOT_TESTED}
    assert "one N" in claims[claims["claim"] == "fcn_scaling"]["measured"].iloc[0]
    assert v["learns"] == {ex.PASS}


def test_one_d_e_leaves_the_width_claim_not_tested():
    t = table()
    t = t[(t["arch"] != ex.STOCHASTIC) | (t["width"] == 64)]
    assert verdicts(evaluate_claims(t, oracle()))["wider_d_e"] == {ex.NOT_TESTED}


def test_a_censored_fcn_still_counts_as_growing_and_a_never_reaching_fcn_is_not_tested():
    # at N = 16 no width reaches the target: the largest width is a lower bound, the slope too
    grows = table(fcn_loss=lambda N, m: 0.05 if (m >= N * D and N < 16) else 0.6)
    assert verdicts(evaluate_claims(grows, oracle()))["fcn_scaling"] == {ex.PASS}
    never = table(fcn_loss=lambda N, m: 0.6)
    assert verdicts(evaluate_claims(never, oracle()))["fcn_scaling"] == {ex.NOT_TESTED}


@pytest.mark.parametrize("oracle_value,trained,verdict", [(0.0, 0.005, ex.PASS), (0.0, 0.02, ex.FAIL),
                                                          (0.07, 0.09, ex.PASS), (0.07, 0.12, ex.FAIL)])
def test_the_transformer_learns_when_it_reaches_the_oracle(oracle_value, trained, verdict):
    t = table(tf_loss=lambda N, w, L: trained if w >= 16 else 0.3)
    claims = evaluate_claims(t, oracle(value=oracle_value))
    assert verdicts(claims)["learns"] == {verdict}


def test_length_claims_fail_when_stochastic_pe_degrades_or_fixed_pe_generalizes():
    worse = table(tf_loss=lambda N, w, L: 0.005 if L == N else 0.2)
    assert verdicts(evaluate_claims(worse, oracle()))["length_stochastic"] == {ex.FAIL}
    fixed_ok = table(fixed_off=0.01)
    assert verdicts(evaluate_claims(fixed_ok, oracle()))["length_fixed"] == {ex.FAIL}


def test_directions_fail_when_the_cosines_are_low():
    assert verdicts(evaluate_claims(table(cos=(0.99, 0.2)), oracle()))["directions"] == {ex.FAIL}


def test_an_fcn_below_its_floor_fails():
    t = table()
    t.loc[(t["arch"] == ex.FCN_ARCH) & (t["width"] == 64) & (t["N"] == 16), "value"] = 0.01  # floor 0.73
    claims = evaluate_claims(t, oracle()).set_index(["claim", "N"])
    assert claims.loc[("fcn_floor", 16), "verdict"] == ex.FAIL
    assert claims.loc[("fcn_floor", 8), "verdict"] == ex.PASS
