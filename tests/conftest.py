"""One real SparkSession for the test run: local[2], the real extension jar, small shuffles.

The extension's log goes to a file (tests/log4j2-test.properties) so that tests can assert on
the warnings a fallback prints.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import testkit.properties  # noqa: F401  (loads the suite's hypothesis profile)

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


def extension_conf_keys(session) -> list[str]:
    """Every conf the extension registers with Spark, as `SET -v` lists them."""
    keys = [row.key for row in session.sql("SET -v").collect() if row.key.startswith("spark.multijoin.")]
    assert len(keys) >= 10, f"the extension registered only {keys}: is it loaded?"
    return keys


def explicitly_set(session) -> dict[str, str]:
    """The session's confs that were set explicitly (what `SET` lists), by key."""
    return {row.key: row.value for row in session.sql("SET").collect()}


@pytest.fixture(scope="session")
def _session_defaults(spark) -> tuple[list[str], dict[str, str]]:
    return extension_conf_keys(spark), explicitly_set(spark)


@pytest.fixture(autouse=True)
def _reset_confs(request):
    """Every test starts from the session's confs as built: each conf of the extension unset
    (back to its default), every other conf a test set put back or unset, and every conf the
    session was built with that a test unset set again (`spark.conf.unset` drops a built conf to
    Spark's default, not to the session's: shuffle partitions 200 rather than 3, which made every
    later test of the process several times slower)."""
    if "spark" not in request.fixturenames:
        yield
        return
    session = request.getfixturevalue("spark")
    extension_keys, defaults = request.getfixturevalue("_session_defaults")
    yield
    for key in extension_keys:
        session.conf.unset(key)
    now = explicitly_set(session)
    for key in now.keys() - defaults.keys():
        session.conf.unset(key)
    for key, value in defaults.items():
        if now.get(key) != value:
            session.conf.set(key, value)
