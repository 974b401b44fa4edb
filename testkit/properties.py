"""The one hypothesis profile of the test suites, and the example budgets derived from it.

`MULTIJOIN_DIFFERENTIAL_EXAMPLES` (default 150) is the budget of the main differential property;
the other properties take a share of it (`examples(share)`), never fewer than 10. The smoke runs
on the Spark minors between the whole-suite lines lower it (scripts/test.sh); a deep search
raises it. No deadline: an example runs Spark jobs whose time depends on the machine, not on
the example. The Spark session is a session-scoped fixture shared by every example, which is
what the function_scoped_fixture health check warns about.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

EXAMPLES = int(os.environ.get("MULTIJOIN_DIFFERENTIAL_EXAMPLES", "150"))

settings.register_profile(
    "multijoin",
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile("multijoin")


# The pipeline properties (a dbt project built again and again over Delta or Iceberg tables,
# minutes an example) draw this many random examples besides their pinned ones (scripts/test.sh
# sets the number for CI, and on which lines and formats each property runs).
PIPELINE_EXAMPLES = int(os.environ.get("MULTIJOIN_PIPELINE_EXAMPLES", "4"))
# What their examples share: no deadline, every health check off (an example is a sequence of
# dbt runs), no example database (each example creates its own schema and tables).
PIPELINE_SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck), database=None)


def examples(share: float) -> int:
    """A property's budget: `share` of the main one, at least 10 examples."""
    return max(int(EXAMPLES * share), 10)
