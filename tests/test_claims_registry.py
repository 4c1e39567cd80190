"""Every registered claim, of every task, can fail: each has a table where its law holds (PASS) and one where its
rival holds (FAIL), in the test module of its task.  A claim registered with neither fails the suite, named."""

from stsq.claims.judge import CLAIMS


def falsified() -> dict[str, str]:
    """Each claim with a table where its rival holds -> the test module that holds both tables."""
    from test_claims import FALSIFIED  # STS_q: the paper's picture passes every claim; each case fails one
    from test_retrieval import RIVAL_CASES
    from test_separations import CASES
    found = {k.split(":")[0]: "test_claims.py" for k in FALSIFIED}
    found |= {k: "test_separations.py" for k in CASES}
    found |= {k: "test_retrieval.py" for k, _ in RIVAL_CASES}
    return found


def test_every_registered_claim_has_a_table_where_its_law_holds_and_one_where_its_rival_does():
    missing = sorted(set(CLAIMS) - set(falsified()))
    assert not missing, (f"claims with no table where their rival holds (a PASS that cannot fail): {missing}; "
                         "add one where the law holds and one where the rival holds (docs/extending.md)")


def test_no_case_names_a_claim_that_is_not_registered():
    assert set(falsified()) <= set(CLAIMS)
