"""A pytest plugin (loaded by pyproject.toml's addopts) that stops a test run at the deadline
scripts/test.sh gives every run of CI: `MULTIJOIN_TEST_DEADLINE`, in seconds since the epoch. No
test starts after it; the run ends as an interrupted session does, its fixtures torn down (the
Thrift servers and Spark applications its tests started are stopped by pid), its summary, slowest
tests and JUnit XML written. So a CI run that crawls on a slow machine ends with what it ran and
what it did not, rather than being cut off with nothing printed. Without the variable (a run by
hand) there is no deadline.

A test that hangs never reaches the check: pyproject.toml's `faulthandler_timeout` prints the
stack of every thread of a test that runs longer than any test should, so its log says where."""

from __future__ import annotations

import os
import time

import pytest

# The exit status of a run stopped at the deadline (pytest's "interrupted"): scripts/test.sh
# reports it as such.
STOPPED_AT_THE_DEADLINE = 2


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    deadline = os.environ.get("MULTIJOIN_TEST_DEADLINE")
    if deadline and time.time() > float(deadline):
        pytest.exit(f"stopped at the CI deadline: {item.nodeid} and every test after it did not run",
                    returncode=STOPPED_AT_THE_DEADLINE)
