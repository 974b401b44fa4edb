"""The pipeline tests: multijoin models built again and again, in Delta or Iceberg tables.

One pytest process per table format (`--table-format delta|iceberg`, see scripts/test.sh): a
session's spark_catalog holds one format, and the format runtimes are resolved when the JVM
starts. dbt runs in this process (dbtRunner) on the session method, so dbt-spark's
`SparkSession.builder.getOrCreate()` returns the session built here, and the tests change the
inputs with it between dbt runs.
"""

from __future__ import annotations

import pytest

from testkit.dbt import PipelineProject


def pytest_addoption(parser):
    parser.addoption("--table-format", choices=["delta", "iceberg"], default="delta",
                     help="the format of spark_catalog's tables in this run")


@pytest.fixture(scope="session")
def table_format(request) -> str:
    return request.config.getoption("--table-format")


@pytest.fixture(scope="session")
def spark(table_format, tmp_path_factory):
    from testkit.formats import DELTA_SESSION_CATALOG_CONFS, PIPELINE_EVALUATION_CONFS, build_format_session

    session = build_format_session(
        table_format, tmp_path_factory.mktemp("spark"), "dbt-multijoin-pipelines",
        {"spark.sql.shuffle.partitions": "4", "spark.driver.memory": "2g", **PIPELINE_EVALUATION_CONFS,
         **(DELTA_SESSION_CATALOG_CONFS if table_format == "delta" else {})},
    )
    yield session
    session.stop()


@pytest.fixture
def project(spark, table_format, tmp_path) -> PipelineProject:
    """A fresh dbt project and schema of its own."""
    return PipelineProject.create(spark, tmp_path, table_format)
