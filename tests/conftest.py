"""One real SparkSession for the test run: local[2], the real extension jar, small shuffles.

The extension's log goes to a file (tests/log4j2-test.properties) so that tests can assert on
the warnings a fallback prints.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent


class ExtensionLog:
    """The extension's log file; `since(mark)` returns what was logged after `mark()`."""

    def __init__(self, path: Path):
        self.path = path

    def mark(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def since(self, mark: int) -> str:
        if not self.path.exists():
            return ""
        with open(self.path, "rb") as log:
            log.seek(mark)
            return log.read().decode("utf-8", "replace")


@pytest.fixture(scope="session")
def extension_log(tmp_path_factory) -> ExtensionLog:
    return ExtensionLog(tmp_path_factory.mktemp("logs") / "multijoin.log")


@pytest.fixture(scope="session")
def spark(extension_log, tmp_path_factory):
    from testkit.session import build_session

    java_options = (
        f"-Dlog4j.configurationFile=file:{TESTS_DIR / 'log4j2-test.properties'} "
        f"-Dmultijoin.test.log={extension_log.path}"
    )
    session = build_session(
        app_name="dbt-multijoin-tests",
        conf={
            "spark.driver.extraJavaOptions": java_options,
            "spark.sql.shuffle.partitions": "3",
            "spark.sql.autoBroadcastJoinThreshold": "-1",
            "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("warehouse")),
            "spark.driver.memory": "2g",
        },
    )
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _reset_confs(request):
    """Every test starts from the session's default confs for the keys tests change."""
    yield
    if "spark" in request.fixturenames:
        session = request.getfixturevalue("spark")
        for key in (
            "spark.multijoin.enabled",
            "spark.multijoin.failOnFallback",
            "spark.multijoin.buffer.inMemoryThreshold",
            "spark.multijoin.buffer.spillThreshold",
            "spark.multijoin.bloomFilter.enabled",
            "spark.multijoin.bloomFilter.minSizeRatio",
            "spark.multijoin.bloomFilter.fpp",
            "spark.multijoin.bloomFilter.maxNumBits",
            "spark.sql.adaptive.enabled",
            "spark.sql.ansi.enabled",
            "spark.sql.shuffle.spreadNullJoinKeys.enabled",
            "spark.sql.legacy.bucketedTableScan.outputOrdering",
        ):
            session.conf.unset(key)
