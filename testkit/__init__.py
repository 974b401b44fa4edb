"""Helpers shared by the tests and the benchmarks, not shipped in the wheel: a SparkSession with
the extension loaded (`testkit.session`) and a walker over physical plans and their SQL metrics
(`testkit.plans`); and the repository's own facts, each read from its one home."""

from __future__ import annotations

import re
from pathlib import Path

# The checkout: testkit/ sits at its top.
REPO = Path(__file__).resolve().parent.parent
# The supported Spark versions have one home: scripts/spark-versions.sh.
SPARK_VERSIONS = re.search(
    r"^SPARK_VERSIONS=\((.*)\)$", (REPO / "scripts" / "spark-versions.sh").read_text(), re.M
)[1].split()
