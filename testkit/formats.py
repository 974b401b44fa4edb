"""Iceberg and Delta beside the extension, configured as their docs say, loaded as users load
them: Maven coordinates in `spark.jars.packages` (Spark's own resolver fetches them from Maven
Central into ~/.ivy2), their session extensions and ours in one `spark.sql.extensions` list.

One session has one `spark_catalog`: the Delta session puts DeltaCatalog there and Iceberg in a
catalog of its own (`ice`); the Iceberg session puts Iceberg's SparkSessionCatalog there (so that
dbt-spark's `file_format: iceberg` tables live in it)."""

from __future__ import annotations

import os
from pathlib import Path

from buildtools import versions
from dbt_multijoin import EXTENSION_CLASS
from dbt_multijoin.launch import maven_jar
from dbt_multijoin.jar import spark_minor  # noqa: F401  (the tests read it from here too)

_MINORS = versions.load()
# Runtime releases per Spark minor on Maven Central, from spark-versions.toml (the minors whose
# suites load the table formats).
RUNTIMES = {minor.minor: minor.runtimes for minor in _MINORS if minor.runtimes}
# What the runtimes bring besides themselves that Spark does not ship (Delta's storage layer).
DEPENDENCIES = {minor.delta: [minor.delta_storage] for minor in _MINORS if minor.delta}
ICEBERG_EXTENSION = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
# Per table format of spark_catalog: the order of the three extensions (ours first for Delta,
# last for Iceberg: both orders are exercised). Delta's must come before Iceberg's: Iceberg's
# row-lineage rule (1.10 to 1.12) fails with a MatchError on an UPDATE of a Delta table that
# Delta's own rules have not rewritten yet.
EXTENSION_ORDER = {
    "delta": [EXTENSION_CLASS, DELTA_EXTENSION, ICEBERG_EXTENSION],
    "iceberg": [DELTA_EXTENSION, ICEBERG_EXTENSION, EXTENSION_CLASS],
}


# The pipeline tests' sessions and servers evaluate expressions interpreted, without generating
# code per query (Spark's own test suites run both modes for the same rows). They test what the
# macros write, over thousands of small statements whose code generation and compilation cost
# more than running it (measured: docs/development.md, "What CI runs"). The operator's generated
# code runs in the whole suites and in the dbt integration builds, which keep Spark's defaults, as
# the benchmarks do.
PIPELINE_EVALUATION_CONFS = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
# The test sessions' and servers' small Delta tables: Delta reads a table's log into 50 partitions
# by default, and every scan of a Delta table runs a job over that state; one partition holds a
# small table's (measured: docs/development.md, "What CI runs").
SMALL_DELTA_LOG_CONFS = {"spark.databricks.delta.snapshotPartitions": "1"}
# The pipeline tests' Delta sessions keep their tables in Spark's in-memory catalog rather than a
# Hive metastore. Delta keeps a table's schema and properties in its own log, so the metastore only
# names the table, yet Spark looks every table a statement references up in it (Derby, through
# DataNucleus), and a pipeline run sends thousands of statements (measured: docs/development.md,
# "What CI runs"). Delta tables over a Hive metastore stay tested through the Thrift servers of
# tests/test_pipeline_thrift.py; Iceberg's session catalog needs the metastore (it lists its
# tables through it), so the Iceberg sessions keep it.
DELTA_SESSION_CATALOG_CONFS = {"spark.sql.catalogImplementation": "in-memory"}


def _runtimes(spark_version: str) -> dict[str, str]:
    runtimes = RUNTIMES.get(spark_minor(spark_version))
    if runtimes is None:
        raise LookupError(f"no Iceberg/Delta runtime on Maven Central for Spark {spark_version}")
    return runtimes


def table_format_confs(table_format: str, spark_version: str, jar: Path, warehouse: Path) -> dict[str, str]:
    """The static confs of a session whose spark_catalog holds `table_format` tables, with our
    extension (from `jar`) and both formats' runtimes."""
    runtimes = _runtimes(spark_version)
    confs = {
        "spark.jars": str(jar),
        "spark.jars.packages": ",".join(runtimes.values()),
        "spark.sql.extensions": ",".join(EXTENSION_ORDER[table_format]),
        "spark.sql.warehouse.dir": f"file:{warehouse}/spark",
        "spark.sql.catalog.ice": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.ice.type": "hadoop",
        "spark.sql.catalog.ice.warehouse": f"file:{warehouse}/ice",
    }
    if table_format == "delta":
        confs["spark.sql.catalog.spark_catalog"] = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
    else:
        confs["spark.sql.catalog.spark_catalog"] = "org.apache.iceberg.spark.SparkSessionCatalog"
        confs["spark.sql.catalog.spark_catalog.type"] = "hive"
        # Iceberg commits to a Hive metastore under a metastore lock by default; the embedded
        # Derby metastore of a local session leaves such locks waiting forever. Without the lock
        # Iceberg commits by an atomic alter-table of the metadata pointer instead.
        confs["spark.hadoop.iceberg.engine.hive.lock-enabled"] = "false"
    return confs


def runtime_jars(spark_version: str, directory: Path) -> list[Path]:
    """The runtime jars of both formats (and their dependencies), downloaded once from Maven
    Central into `directory`. A Spark Thrift Server needs them as files on the driver's class
    path: it closes the class loader that --packages / --jars fill when a client session ends
    (see docs/table_formats.md)."""
    runtimes = _runtimes(spark_version)
    coordinates = [c for runtime in runtimes.values() for c in [runtime, *DEPENDENCIES.get(runtime, [])]]
    return [maven_jar(coordinate, directory) for coordinate in coordinates]


def build_format_session(table_format: str, state_dir: Path, app_name: str, confs: dict[str, str] | None = None):
    """A local[2] SparkSession with Hive support, its metastore and warehouses under `state_dir`,
    the extension and both formats loaded (spark_catalog holding `table_format`), plus `confs`."""
    import pyspark
    from pyspark.sql import SparkSession

    from testkit import extension_jar

    settings = table_format_confs(table_format, pyspark.__version__, extension_jar(), state_dir)
    settings.update({
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        **SMALL_DELTA_LOG_CONFS,
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={state_dir}/metastore_db;create=true",
        **(confs or {}),
    })
    # scripts/test.sh gives each of its workers an Ivy cache of its own: two sessions resolving
    # the runtimes into one directory at once can read each other's half-written files.
    if os.environ.get("MULTIJOIN_TEST_IVY"):
        settings.setdefault("spark.jars.ivy", os.environ["MULTIJOIN_TEST_IVY"])
    builder = SparkSession.builder.master("local[2]").appName(app_name).enableHiveSupport()
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def delta_version(spark, table: str) -> int:
    """A Delta table's latest version."""
    return spark.sql(f"describe history {table} limit 1").first().version
