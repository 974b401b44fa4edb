"""Multijoin models on a Spark Thrift Server that also runs Delta or Iceberg (the extension list
and catalog as a user sets them at `spark-submit`): a server killed while it writes (the previous
table survives with exactly its rows, and the next successful run leaves no staging relation
behind), and the changed_keys property test in a smaller set than on the session target, on a
server of each format.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pyspark
import pytest
from hypothesis import given, settings

from dbt_helpers import THRIFT_CONFS, make_tiny_project, private_jar
from dbt_multijoin import thrift
from dbt_multijoin.profiles import render_profile
from testkit.formats import RUNTIMES, runtime_jars, spark_minor, table_format_confs
from testkit.properties import PIPELINE_EXAMPLES, PIPELINE_SETTINGS
from testkit.input_changes import BATCHES, INPUTS, Inputs, full_rebuild, model_sql
from testkit.thrift_client import free_port, hive_execute, hive_query

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        spark_minor(pyspark.__version__) not in RUNTIMES,
        reason=f"no Delta or Iceberg release for Spark {pyspark.__version__} on Maven Central",
    ),
]


# The model's rows computed from scratch by Spark's vanilla joins.
FULL_REBUILD = (
    "select coalesce(a.k, b.k) as k, a.a_v, b.b_v from pipeline_thrift.a as a "
    "full outer join pipeline_thrift.b as b on a.k = b.k"
)
SLOW = "java_method('java.lang.Thread', 'sleep', cast(40 as bigint)) is not null"


RUNTIMES_DIR = Path.home() / ".cache" / "dbt-multijoin" / "runtimes"


def start_server(state_dir: Path, jar: Path, port: int, table_format: str = "delta") -> thrift.ThriftServer:
    """Our jar with --jars; Delta's and Iceberg's on the driver's class path (a Thrift server
    closes the --jars/--packages class loader at the end of each client session: our extension
    loads its classes up front, theirs do not). `table_format`'s catalog is spark_catalog."""
    confs = table_format_confs(table_format, pyspark.__version__, jar, state_dir)
    for key in ("spark.jars", "spark.jars.packages", "spark.sql.warehouse.dir"):
        del confs[key]
    confs["spark.driver.extraClassPath"] = ":".join(str(p) for p in runtime_jars(pyspark.__version__, RUNTIMES_DIR))
    return thrift.start(port, state_dir, jar=jar, master="local[2]", confs={**THRIFT_CONFS, **confs})


def wide_model(config: str, where: str = "true") -> str:
    return (
        f"{{{{ config(materialized='multijoin', {config}) }}}}\n"
        "select * from (\n"
        "{{ dbt_multijoin.multi_join([source('inputs', 'a'), source('inputs', 'b')], key='k', columns={'a': ['a_v'], 'b': ['b_v']}"
        + (", changed_since='updated_at'" if "changed_keys" in config else "")
        + ") }}\n"
        f") as joined where {where}\n"
    )


CASES = {  # the server's table format (its inputs'), the model's config
    "parquet full build": ("delta", "file_format='parquet'"),
    "delta changed_keys": ("delta", "file_format='delta', incremental_strategy='changed_keys'"),
    "iceberg changed_keys": ("iceberg", "file_format='iceberg', incremental_strategy='changed_keys'"),
}


@pytest.mark.parametrize("case", CASES)
def test_server_killed_while_writing_keeps_the_previous_table(tmp_path, case):
    jar = private_jar(tmp_path)
    state_dir, port = tmp_path / "server", free_port()
    table_format, config = CASES[case]
    start_server(state_dir, jar, port, table_format)
    try:
        for statement in [
            "create database if not exists pipeline_thrift",
            f"create table pipeline_thrift.a using {table_format} as select cast(id as int) as k, cast(id as int) as a_v, cast(1 as bigint) as updated_at from range(400)",
            f"create table pipeline_thrift.b using {table_format} as select cast(id * 2 as int) as k, cast(id as int) as b_v, cast(1 as bigint) as updated_at from range(400)",
        ]:
            hive_execute(port, statement)
        project = make_tiny_project(tmp_path, render_profile("thrift", "multijoin", "pipeline_thrift", port))
        models = project.root / "models"
        for leftover in models.glob("tiny_*.sql"):
            leftover.unlink()
        (models / "sources.yml").write_text(
            "version: 2\nsources:\n  - name: inputs\n    schema: pipeline_thrift\n    tables:\n      - name: a\n      - name: b\n"
        )
        (models / "wide.sql").write_text(wide_model(config))
        first = project.dbt("run")
        assert first.returncode == 0, first.describe()
        before = sorted(hive_query(port, "select * from pipeline_thrift.wide"))
        assert len(before) == 600

        # Every input row changes, and the query sleeps on every row: kill -9 the server while
        # its tasks write.
        hive_execute(port, "update pipeline_thrift.a set a_v = a_v + 1000, updated_at = 2")
        (models / "wide.sql").write_text(wide_model(config, SLOW))
        process = _dbt_in_background(project)
        try:
            _wait_for_the_write(project.root / "logs" / "dbt.log", runs_before=1)
            os.kill(thrift.ThriftServer(port, state_dir).pid(), signal.SIGKILL)
            process.wait(timeout=300)
        finally:
            if process.poll() is None:
                process.kill()
        thrift.stop(port, state_dir)
        start_server(state_dir, jar, port, table_format)

        assert sorted(hive_query(port, "select * from pipeline_thrift.wide")) == before

        (models / "wide.sql").write_text(wide_model(config))
        again = project.dbt("run")
        assert again.returncode == 0, again.describe()
        tables = {row[1] for row in hive_query(port, "show tables in pipeline_thrift")}
        assert tables == {"a", "b", "wide"}, tables
        after = sorted(hive_query(port, "select * from pipeline_thrift.wide"), key=repr)
        full_rebuild = sorted(hive_query(port, FULL_REBUILD), key=repr)
        assert after == full_rebuild
        assert len(after) == 600 and all(a_v is None or a_v >= 1000 for _, a_v, _ in after)
    finally:
        thrift.stop(port, state_dir)


def _dbt_in_background(project):
    return subprocess.Popen(
        project.command("run"),
        cwd=project.root, env=project.env, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def _wait_for_the_write(log: Path, runs_before: int, timeout: float = 240) -> None:
    """Until the materialization of the background run has proved its plan (it logs the
    operator right before the write), then a few seconds into the write (it sleeps 40 ms on
    each of several hundred rows)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and log.read_text(errors="replace").count("physical join operator") > runs_before:
            time.sleep(3)
            return
        time.sleep(0.2)
    raise AssertionError(f"the run did not reach its write within {timeout}s")


@pytest.fixture(scope="module", params=["delta", "iceberg"])
def format_server(request, tmp_path_factory):
    """One Thrift server per table format for the property test's examples: (port, format);
    stopped by pid at the end."""
    directory = tmp_path_factory.mktemp(f"changed-keys-thrift-{request.param}")
    jar = private_jar(directory)
    state_dir, port = directory / "server", free_port()
    start_server(state_dir, jar, port, request.param)
    try:
        yield port, request.param
    finally:
        thrift.stop(port, state_dir)


_SCHEMAS = itertools.count(1)


@settings(max_examples=max(PIPELINE_EXAMPLES // 2, 1), **PIPELINE_SETTINGS)
@given(batches=BATCHES)
def test_changed_keys_on_thrift_equals_full_rebuild(format_server, tmp_path_factory, batches):
    """As pipeline_tests/test_changed_keys.py, through the server: Delta or Iceberg inputs changed
    between dbt runs (b read through its change feed: Delta's change data feed, Iceberg's
    changelog), the table equal to a full rebuild after every run."""
    port, table_format = format_server
    schema = f"changed_keys_thrift_{next(_SCHEMAS)}"
    hive_execute(port, f"create database {schema}")
    inputs = Inputs(lambda sql: hive_execute(port, sql), lambda sql: hive_query(port, sql), schema, table_format)
    project = make_tiny_project(tmp_path_factory.mktemp("project"), render_profile("thrift", "multijoin", schema, port))
    project_file = project.root / "dbt_project.yml"
    project_file.write_text(project_file.read_text().replace("+file_format: parquet", f"+file_format: {table_format}"))
    models = project.root / "models"
    for leftover in models.glob("tiny_*.sql"):
        leftover.unlink()
    listed = "".join(f"      - name: {name}\n" for name in INPUTS)
    (models / "sources.yml").write_text(f"version: 2\nsources:\n  - name: inputs\n    schema: {schema}\n    tables:\n{listed}")
    (models / "wide.sql").write_text(model_sql())

    def assert_equals_full_rebuild(run) -> None:
        assert run.returncode == 0, run.describe()
        built = Counter(hive_query(port, f"select * from {schema}.wide"))
        expected = Counter(hive_query(port, full_rebuild(schema)))
        assert built == expected, f"missing: {expected - built}, extra: {built - expected}"

    assert_equals_full_rebuild(project.dbt("run"))
    for batch in batches:
        for op in batch:
            inputs.apply(op)
        assert_equals_full_rebuild(project.dbt("run"))
    tables = {row[1] for row in hive_query(port, f"show tables in {schema}")}
    assert tables == {*INPUTS, "wide"}, tables
