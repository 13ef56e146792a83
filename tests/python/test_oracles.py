"""The oracles (tests/python/oracles/): generated programs, regraft applied in-process, CPython
as the judge. A few hundred cases here, derandomized so CI is repeatable; ``bench/oracles.py``
runs thousands with a seed and prints the figures the docs quote.
``REGRAFT_ORACLE_CASES`` raises the count per oracle."""

import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracles import Drawn, derive, matching, names, outline, rewrites, statements, validity

ORACLES = {"derive": derive, "matching": matching, "names": names, "outline": outline,
           "rewrites": rewrites, "statements": statements, "validity": validity}

CASES = int(os.environ.get("REGRAFT_ORACLE_CASES", "300"))
ORACLE = settings(max_examples=CASES, derandomize=True, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_oracle(name):
    if name == "matching" and sys.version_info < (3, 12):
        pytest.skip("the reference matcher reads f-strings through CPython 3.12's tokenizer")
    oracle = ORACLES[name]

    @ORACLE
    @given(st.data())
    def check(data):
        case = oracle.case(Drawn(data))
        failure = oracle.judge(case)
        assert failure is None, f"rule:\n{case.rule}\n{failure}"

    check()
