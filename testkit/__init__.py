"""Helpers shared by the tests and the benchmarks, not shipped in the wheel (no test module
imports another: what two tests share lives here), and the repository's own facts, each read
from its one home:
- `session`: a SparkSession with the extension loaded; `frames`: inputs built in the JVM;
- `plans`: a walker over physical plans and their SQL metrics;
- `chains`: the vanilla join chains (and hinted ones) the tests and benchmarks compare;
- `differential`, `properties`: the differential property tests' inputs and hypothesis profile;
- `dbt`: the one dbt harness (projects, runs, a Thrift server for them);
- `formats`, `input_changes`: Delta and Iceberg sessions, and random changes to their tables;
- `processes`, `thrift_client`: processes and a Thrift server's clients;
- `deadline`: the pytest plugin that stops a CI run at its deadline."""

from __future__ import annotations

from pathlib import Path

from buildtools import versions

# The checkout: testkit/ sits at its top.
REPO = Path(__file__).resolve().parent.parent
# The supported Spark versions (their tested patches) have one home: spark-versions.toml.
SPARK_VERSIONS = [minor.patch for minor in versions.load()]


def extension_jar() -> Path:
    """The extension jar the tests load: `DBT_MULTIJOIN_TEST_JAR` when set (a prebuilt jar, e.g. a
    release's, or one built from another checkout), else the checkout's own, built if needed."""
    import os

    from buildtools.jar_build import ensure_jar

    prebuilt = os.environ.get("DBT_MULTIJOIN_TEST_JAR")
    return Path(prebuilt) if prebuilt else ensure_jar()
