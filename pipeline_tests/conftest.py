"""The pipeline tests: multijoin models built again and again, in Delta or Iceberg tables.

One pytest process per table format (`--table-format delta|iceberg`, see scripts/test.sh): a
session's spark_catalog holds one format, and the format runtimes are resolved when the JVM
starts. dbt runs in this process (dbtRunner) on the session method, so dbt-spark's
`SparkSession.builder.getOrCreate()` returns the session built here, and the tests change the
inputs with it between dbt runs.
"""

from __future__ import annotations

import pytest

from testkit.dbt_project import PipelineProject


def pytest_addoption(parser):
    parser.addoption("--table-format", choices=["delta", "iceberg"], default="delta",
                     help="the format of spark_catalog's tables in this run")


@pytest.fixture(scope="session")
def table_format(request) -> str:
    return request.config.getoption("--table-format")


@pytest.fixture(scope="session")
def spark(table_format, tmp_path_factory):
    import pyspark
    from pyspark.sql import SparkSession

    from dbt_multijoin.jar import ensure_jar
    from testkit.formats import table_format_confs

    state = tmp_path_factory.mktemp("spark")
    confs = table_format_confs(table_format, pyspark.__version__, ensure_jar(), state)
    confs.update({
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.driver.memory": "2g",
        "spark.ui.showConsoleProgress": "false",
        # Delta reads its log with 50 tasks by default: tiny test tables need 2.
        "spark.databricks.delta.snapshotPartitions": "2",
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={state}/metastore_db;create=true",
    })
    builder = SparkSession.builder.master("local[2]").appName("dbt-multijoin-pipelines").enableHiveSupport()
    for key, value in confs.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    yield session
    session.stop()


@pytest.fixture
def project(spark, table_format, tmp_path) -> PipelineProject:
    """A fresh dbt project and schema of its own."""
    return PipelineProject.create(spark, tmp_path, table_format)
