"""Multijoin models on a Spark Thrift Server that also runs Delta or Iceberg (the extension list
and catalog as a user sets them at `spark-submit`): a server killed while it writes (the previous
table survives with exactly its rows, and the next successful run leaves no staging relation
behind), and the changed_keys property test in a smaller set than on the session target. One
server per table format serves every test of the module, each test in a schema of its own.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
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


SLOW = "java_method('java.lang.Thread', 'sleep', cast(40 as bigint)) is not null"


RUNTIMES_DIR = Path.home() / ".cache" / "dbt-multijoin" / "runtimes"


@dataclass
class FormatServer:
    """A Thrift Server whose spark_catalog holds one table format, shared by this module's tests
    (a start costs tens of seconds on 2 cores); a kill test kills it and starts it again, so the
    tests after it also run on a server that came back from a kill -9."""

    directory: Path
    table_format: str
    port: int = field(default_factory=free_port)

    def __post_init__(self) -> None:
        self.jar = private_jar(self.directory)

    @property
    def state_dir(self) -> Path:
        return self.directory / "server"

    def start(self) -> None:
        """Our jar with --jars; Delta's and Iceberg's on the driver's class path (a Thrift server
        closes the --jars/--packages class loader at the end of each client session: our
        extension loads its classes up front, theirs do not)."""
        confs = table_format_confs(self.table_format, pyspark.__version__, self.jar, self.state_dir)
        for key in ("spark.jars", "spark.jars.packages", "spark.sql.warehouse.dir"):
            del confs[key]
        confs["spark.driver.extraClassPath"] = ":".join(str(p) for p in runtime_jars(pyspark.__version__, RUNTIMES_DIR))
        # Delta reads its log with 50 tasks by default: these small tables need 2.
        confs["spark.databricks.delta.snapshotPartitions"] = "2"
        thrift.start(self.port, self.state_dir, jar=self.jar, master="local[2]", confs={**THRIFT_CONFS, **confs})

    def kill(self) -> None:
        """kill -9, as a crash or an OOM killer would; then the pid file is cleaned up."""
        os.kill(thrift.ThriftServer(self.port, self.state_dir).pid(), signal.SIGKILL)
        thrift.stop(self.port, self.state_dir)

    def stop(self) -> None:
        thrift.stop(self.port, self.state_dir)


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """`servers(table_format)`: that format's server, started on first use; every server is
    stopped by pid when the module ends, however it ends."""
    started: dict[str, FormatServer] = {}

    def server(table_format: str) -> FormatServer:
        if table_format not in started:
            started[table_format] = FormatServer(tmp_path_factory.mktemp(f"thrift-{table_format}"), table_format)
            started[table_format].start()
        return started[table_format]

    try:
        yield server
    finally:
        for running in started.values():
            running.stop()


def wide_model(config: str, where: str = "true") -> str:
    return (
        f"{{{{ config(materialized='multijoin', {config}) }}}}\n"
        "select * from (\n"
        "{{ dbt_multijoin.multi_join([source('inputs', 'a'), source('inputs', 'b')], key='k', columns={'a': ['a_v'], 'b': ['b_v']}"
        + (", changed_since='updated_at'" if "changed_keys" in config else "")
        + ") }}\n"
        f") as joined where {where}\n"
    )


# The model's rows computed from scratch by Spark's vanilla joins.
FULL_REBUILD = (
    "select coalesce(a.k, b.k) as k, a.a_v, b.b_v from {schema}.a as a "
    "full outer join {schema}.b as b on a.k = b.k"
)
# Every test works in a schema of its own on the module's servers.
_SCHEMAS = itertools.count(1)

CASES = {  # the server's table format (its inputs'), the model's config
    "parquet full build": ("delta", "file_format='parquet'"),
    "delta changed_keys": ("delta", "file_format='delta', incremental_strategy='changed_keys'"),
    "iceberg changed_keys": ("iceberg", "file_format='iceberg', incremental_strategy='changed_keys'"),
}


@pytest.mark.parametrize("case", CASES)
def test_server_killed_while_writing_keeps_the_previous_table(servers, tmp_path, case):
    table_format, config = CASES[case]
    server = servers(table_format)
    port, schema = server.port, f"killed_{next(_SCHEMAS)}"
    for statement in [
        f"create database {schema}",
        f"create table {schema}.a using {table_format} as select cast(id as int) as k, cast(id as int) as a_v, cast(1 as bigint) as updated_at from range(400)",
        f"create table {schema}.b using {table_format} as select cast(id * 2 as int) as k, cast(id as int) as b_v, cast(1 as bigint) as updated_at from range(400)",
    ]:
        hive_execute(port, statement)
    project = make_tiny_project(tmp_path, render_profile("thrift", "multijoin", schema, port))
    models = project.root / "models"
    for leftover in models.glob("tiny_*.sql"):
        leftover.unlink()
    (models / "sources.yml").write_text(
        f"version: 2\nsources:\n  - name: inputs\n    schema: {schema}\n    tables:\n      - name: a\n      - name: b\n"
    )
    (models / "wide.sql").write_text(wide_model(config))
    first = project.dbt("run")
    assert first.returncode == 0, first.describe()
    before = sorted(hive_query(port, f"select * from {schema}.wide"))
    assert len(before) == 600

    # Every input row changes, and the query sleeps on every row: kill -9 the server while
    # its tasks write.
    hive_execute(port, f"update {schema}.a set a_v = a_v + 1000, updated_at = 2")
    (models / "wide.sql").write_text(wide_model(config, SLOW))
    process = _dbt_in_background(project)
    try:
        _wait_for_the_write(project.root / "logs" / "dbt.log", runs_before=1)
        server.kill()
        process.wait(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    server.start()

    assert sorted(hive_query(port, f"select * from {schema}.wide")) == before

    (models / "wide.sql").write_text(wide_model(config))
    again = project.dbt("run")
    assert again.returncode == 0, again.describe()
    tables = {row[1] for row in hive_query(port, f"show tables in {schema}")}
    assert tables == {"a", "b", "wide"}, tables
    after = sorted(hive_query(port, f"select * from {schema}.wide"), key=repr)
    full_rebuild = sorted(hive_query(port, FULL_REBUILD.format(schema=schema)), key=repr)
    assert after == full_rebuild
    assert len(after) == 600 and all(a_v is None or a_v >= 1000 for _, a_v, _ in after)


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


# One random example per format: the session target's property searches the same changes deeper;
# this one checks that they come out the same through a server's separate client sessions.
@settings(max_examples=max(PIPELINE_EXAMPLES // 4, 1), **PIPELINE_SETTINGS)
@given(batches=BATCHES)
@pytest.mark.parametrize("table_format", ["delta", "iceberg"])
def test_changed_keys_on_thrift_equals_full_rebuild(servers, tmp_path_factory, table_format, batches):
    """As pipeline_tests/test_changed_keys.py, through the server: Delta or Iceberg inputs changed
    between dbt runs (b read through its change feed: Delta's change data feed, Iceberg's
    changelog), the table equal to a full rebuild after every run."""
    port = servers(table_format).port
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
