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

from testkit.dbt import THRIFT_CONFS, make_tiny_project, private_jar
from dbt_multijoin import thrift
from dbt_multijoin.profiles import render_profile
from testkit.formats import PIPELINE_EVALUATION_CONFS, RUNTIMES, SMALL_DELTA_LOG_CONFS, runtime_jars, spark_minor, table_format_confs
from testkit.properties import PIPELINE_SETTINGS
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
        """Our jar with --jars; Delta's and Iceberg's on the driver's system class path, after
        Spark's jars (a Thrift server closes the --jars/--packages class loader at the end of each
        client session: our extension loads its classes up front, theirs do not)."""
        confs = table_format_confs(self.table_format, pyspark.__version__, self.jar, self.state_dir)
        for key in ("spark.jars", "spark.jars.packages", "spark.sql.warehouse.dir"):
            del confs[key]
        thrift.start(self.port, self.state_dir, jar=self.jar, master="local[2]",
                     confs={**THRIFT_CONFS, **PIPELINE_EVALUATION_CONFS, **SMALL_DELTA_LOG_CONFS, **confs},
                     class_path=runtime_jars(pyspark.__version__, RUNTIMES_DIR))

    def kill(self) -> None:
        """kill -9, as a crash or an OOM killer would; then the pid file is cleaned up and the
        process reaped (no zombie stays behind for the rest of the session)."""
        pid = thrift.ThriftServer(self.port, self.state_dir).pid()
        os.kill(pid, signal.SIGKILL)
        thrift.stop(self.port, self.state_dir)
        assert not Path(f"/proc/{pid}").exists(), f"the killed server (pid {pid}) was not reaped"

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

# Each write path is killed on one format: a full build, the key-recompute refresh and the
# partial-update MERGE on Delta, the merge-on-read refresh and compaction on Iceberg. What keeps
# the previous table is the format's commit (a statement's files are visible only once its commit
# is) and the order of the materialization's statements, which is the same over either format; a
# Thrift server's start and each dbt run after it cost a minute or more on CI's two cores.
CASES = {  # the server's table format (its inputs'), the model's config
    "parquet full build": ("delta", "file_format='parquet'"),
    "delta changed_keys": ("delta", "file_format='delta', incremental_strategy='changed_keys'"),
}


def _two_inputs(server: FormatServer, rows: int) -> str:
    """A new schema on the server with inputs a (keys 0..rows-1) and b (the even keys up to
    2 x rows), each key once, updated_at 1; its name."""
    schema = f"killed_{next(_SCHEMAS)}"
    hive_execute(server.port, f"create database {schema}")
    for name, key in (("a", "id"), ("b", "id * 2")):
        hive_execute(server.port, (
            f"create table {schema}.{name} using {server.table_format} as select cast({key} as int) as k, "
            f"cast(id as int) as {name}_v, cast(1 as bigint) as updated_at from range({rows})"
        ))
    return schema


@pytest.mark.parametrize("case", CASES)
def test_server_killed_while_writing_keeps_the_previous_table(servers, tmp_path, case):
    table_format, config = CASES[case]
    server = servers(table_format)
    port, schema = server.port, _two_inputs(server, 400)
    project = _thrift_project(tmp_path, port, schema, table_format, ["a", "b"])
    models = project.root / "models"
    (models / "wide.sql").write_text(wide_model(config))
    first = project.dbt("run")
    assert first.returncode == 0, first.describe()
    before = sorted(hive_query(port, f"select * from {schema}.wide"))
    assert len(before) == 600

    # Every row of a changes, and b gets a late row stamped with the mark (a tie the next run
    # must pick up: on Delta, b was only appended to, and the run keeps the rows at the mark in
    # the appended file); the query sleeps on every row: kill -9 the server while its
    # tasks write.
    hive_execute(port, f"update {schema}.a set a_v = a_v + 1000, updated_at = 2")
    hive_execute(port, f"insert into {schema}.b values (1001, 7, 1)")
    (models / "wide.sql").write_text(wide_model(config, SLOW))
    # The materialization logs the operator right before the write, which then sleeps 40 ms on
    # each of several hundred rows: a few seconds into it.
    _kill_during_a_run(server, project, "physical join operator", runs_before=1, settle=3)

    assert sorted(hive_query(port, f"select * from {schema}.wide")) == before

    (models / "wide.sql").write_text(wide_model(config))
    again = project.dbt("run")
    assert again.returncode == 0, again.describe()
    tables = {row[1] for row in hive_query(port, f"show tables in {schema}")}
    assert tables == {"a", "b", "wide"}, tables
    after = sorted(hive_query(port, f"select * from {schema}.wide"), key=repr)
    full_rebuild = sorted(hive_query(port, FULL_REBUILD.format(schema=schema)), key=repr)
    assert after == full_rebuild
    assert len(after) == 601 and all(a_v is None or a_v >= 1000 for _, a_v, _ in after)
    assert (1001, None, 7) in after
    if case == "delta changed_keys":
        assert "in the 1 file appended since version" in again.output, again.output[-3000:]


def _kill_during_a_run(server: FormatServer, project, marker: str, runs_before: int, settle: float, args: tuple[str, ...] = ()) -> str:
    """Start `dbt run <args>` in the background; once its dbt.log shows `marker` once more than the
    earlier runs left in it, wait `settle` seconds and kill -9 the server; when dbt has given up,
    start the server again. The run's log."""
    log = project.root / "logs" / "dbt.log"
    process = subprocess.Popen(
        project.command("run", *args),
        cwd=project.root, env=project.env, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 240
        while not (log.exists() and log.read_text(errors="replace").count(marker) > runs_before):
            assert time.monotonic() < deadline and process.poll() is None, f"the run did not reach {marker!r}"
            time.sleep(0.1)
        time.sleep(settle)
        server.kill()
        process.wait(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    server.start()
    return log.read_text(errors="replace")


def _thrift_project(directory: Path, port: int, schema: str, table_format: str, inputs: list[str]):
    """A dbt project on the server's thrift target, its models in `table_format`, with the
    schema's tables `inputs` as source('inputs', name)."""
    project = make_tiny_project(directory, render_profile("thrift", "multijoin", schema, port))
    project_file = project.root / "dbt_project.yml"
    project_file.write_text(project_file.read_text().replace("+file_format: parquet", f"+file_format: {table_format}"))
    models = project.root / "models"
    for leftover in models.glob("tiny_*.sql"):
        leftover.unlink()
    listed = "".join(f"      - name: {name}\n" for name in inputs)
    (models / "sources.yml").write_text(f"version: 2\nsources:\n  - name: inputs\n    schema: {schema}\n    tables:\n{listed}")
    return project


def _marks(port: int, relation: str) -> dict[str, str]:
    return {key: value for key, value in hive_query(port, f"show tblproperties {relation}") if key.startswith("dbt_multijoin.")}


PARTIAL_UPDATE_MODEL = (
    "{{ config(materialized='multijoin', incremental_strategy='changed_keys', one_row_per_key=true) }}\n"
    "{{ dbt_multijoin.multi_join([source('inputs', 'a'), source('inputs', 'b')], key='k',\n"
    "    columns={'a': ['a_v'], 'b': ['b_v']}, changed_since='updated_at') }}\n"
)
# Rows per input: enough that the refresh's MERGE, which every row of a takes part in, runs
# for seconds on 2 cores (the kill comes half a second after it is sent).
MERGED_ROWS = 20000


def test_server_killed_during_a_partial_update_merge_keeps_the_table_and_its_marks(servers, tmp_path):
    """A partial-update refresh (one_row_per_key) whose server is killed -9 while its MERGE runs:
    the table keeps its rows and its marks, and the next run leaves exactly a full rebuild's rows
    and no scratch table."""
    table_format = "delta"
    server = servers(table_format)
    port, schema = server.port, _two_inputs(server, MERGED_ROWS)
    project = _thrift_project(tmp_path, port, schema, table_format, ["a", "b"])
    (project.root / "models" / "wide.sql").write_text(PARTIAL_UPDATE_MODEL)
    first = project.dbt("run")
    assert first.returncode == 0, first.describe()
    before, marks = Counter(hive_query(port, f"select * from {schema}.wide")), _marks(port, f"{schema}.wide")
    assert sum(before.values()) == MERGED_ROWS * 3 // 2 and marks

    hive_execute(port, f"update {schema}.a set a_v = a_v + 1000, updated_at = 2")
    log = _kill_during_a_run(server, project, "merge into", runs_before=0, settle=0.5)
    assert "partial update" in log

    assert Counter(hive_query(port, f"select * from {schema}.wide")) == before
    assert _marks(port, f"{schema}.wide") == marks

    again = project.dbt("run")
    assert again.returncode == 0, again.describe()
    assert {row[1] for row in hive_query(port, f"show tables in {schema}")} == {"a", "b", "wide"}
    expected = Counter(hive_query(port, (
        "select coalesce(a.k, b.k) as k, a.a_v, a.present as dbt_multijoin_has_a, b.b_v, b.present as dbt_multijoin_has_b "
        f"from (select *, true as present from {schema}.a) as a full outer join (select *, true as present from {schema}.b) as b on a.k = b.k"
    )))
    assert Counter(hive_query(port, f"select k, a_v, dbt_multijoin_has_a, b_v, dbt_multijoin_has_b from {schema}.wide")) == expected


MERGE_ON_READ_MODEL = PARTIAL_UPDATE_MODEL.replace("one_row_per_key=true", "one_row_per_key=true, layout='merge_on_read', compaction_share=100")


def test_server_killed_during_a_merge_on_read_refresh_and_compaction(servers, tmp_path):
    """A merge-on-read model (layout='merge_on_read') whose server is killed -9 while a refresh
    merges its delta rows, while a run rewrites the delta rows into a file per key bucket, and
    while a compaction's step rewrites some key buckets of the store: after each kill
    readers see the table as before the statement or as after it, never a mix; the next run leaves
    exactly a full rebuild's rows, and after the compaction that follows no delta row is left."""
    server = servers("iceberg")
    port, schema = server.port, _two_inputs(server, MERGED_ROWS)
    project = _thrift_project(tmp_path, port, schema, "iceberg", ["a", "b"])
    (project.root / "models" / "wide.sql").write_text(MERGE_ON_READ_MODEL)
    first = project.dbt("run")
    assert first.returncode == 0, first.describe()

    def rows() -> Counter:
        return Counter(hive_query(port, f"select * from {schema}.wide"))

    def rebuilt() -> Counter:
        return Counter(hive_query(port, (
            "select coalesce(a.k, b.k) as k, a.a_v, a.present as dbt_multijoin_has_a, b.b_v, b.present as dbt_multijoin_has_b "
            f"from (select *, true as present from {schema}.a) as a full outer join (select *, true as present from {schema}.b) as b on a.k = b.k")))

    before = rows()
    hive_execute(port, f"update {schema}.a set a_v = a_v + 1000, updated_at = 2")
    after = rebuilt()
    log = _kill_during_a_run(server, project, f"merge into {schema}.wide__dbt_mj_store", runs_before=0, settle=0.2)
    assert "wide: partial update" in log
    assert rows() in (before, after)
    again = project.dbt("run")
    assert again.returncode == 0, again.describe()
    assert rows() == after

    # Killed while a run rewrites the delta rows into a file per key bucket (past
    # compaction_max_delta_files, 1 here), after its MERGE: readers see the MERGE's rows, and the
    # next run, which applies the same changes again, rewrites them.
    (project.root / "models" / "wide.sql").write_text(MERGE_ON_READ_MODEL.replace("compaction_share=100", "compaction_share=100, compaction_max_delta_files=1"))
    hive_execute(port, f"update {schema}.b set b_v = b_v + 1000, updated_at = 2")
    after = rebuilt()
    log = _kill_during_a_run(server, project, "replace where dbt_multijoin_seq > 0", runs_before=0, settle=0.2)
    assert "past compaction_max_delta_files 1: rewritten into a file per key bucket" in log
    assert rows() == after
    again = project.dbt("run")
    assert again.returncode == 0 and "rewritten into a file per key bucket" in again.output, again.describe()
    assert rows() == after
    delta_files = f"select count(distinct file) from (select input_file_name() as file from {schema}.wide__dbt_mj_store where dbt_multijoin_seq > 0) as delta"
    assert hive_query(port, delta_files)[0][0] <= 8

    # Killed in a compaction's step (as a run folds one when due: the same statement as a whole
    # compaction's, over some key buckets' partitions).
    delta_rows = f"select count(*) from {schema}.wide__dbt_mj_store where dbt_multijoin_seq > 0"
    (held,) = hive_query(port, delta_rows)
    log = _kill_during_a_run(server, project, "replace where dbt_multijoin_seq <=", runs_before=0, settle=0.5, args=("--vars", "{dbt_multijoin_compact: step}"))
    assert "wide: the compaction folds the delta rows of key bucket(s)" in log
    assert rows() == after
    stepped = project.dbt("run", "--vars", "{dbt_multijoin_compact: step}")
    assert stepped.returncode == 0, stepped.describe()
    assert rows() == after
    (left,) = hive_query(port, delta_rows)
    assert 0 < left[0] < held[0], (held, left)
    compacted = project.dbt("run", "--vars", "{dbt_multijoin_compact: true}")
    assert compacted.returncode == 0, compacted.describe()
    assert rows() == after
    assert hive_query(port, f"select count(*) from {schema}.wide__dbt_mj_store where dbt_multijoin_seq > 0") == [(0,)]
    assert {row[1] for row in hive_query(port, f"show tables in {schema}")} == {"a", "b", "wide", "wide__dbt_mj_store"}


# One random example per format, each format on one refresh path: the session target's
# properties search the same changes deeper, on both paths and formats; these check that they
# come out the same through a server's separate client sessions. On Spark 3.5, CI runs the
# session properties for the other two (scripts/test.sh, DELTA_FIRST and ICEBERG_FIRST), so that
# each path runs a property on each format on this line. Each write path is also killed above on
# one format, and the run after the kill must equal a full rebuild.
@settings(max_examples=1, **PIPELINE_SETTINGS)
@given(batches=BATCHES)
@pytest.mark.parametrize(("table_format", "one_row_per_key"), [("delta", True), ("iceberg", False)],
                         ids=["delta-partial update", "iceberg-key recompute"])
def test_changed_keys_on_thrift_equals_full_rebuild(servers, tmp_path_factory, table_format, one_row_per_key, batches):
    """As pipeline_tests/test_changed_keys.py and test_partial_update.py, through the server:
    Delta or Iceberg inputs changed between dbt runs (b read through its change feed: Delta's
    change data feed, Iceberg's changelog), the table equal to a full rebuild after every run."""
    port = servers(table_format).port
    schema = f"changed_keys_thrift_{next(_SCHEMAS)}"
    hive_execute(port, f"create database {schema}")
    inputs = Inputs(lambda sql: hive_execute(port, sql), lambda sql: hive_query(port, sql), schema, table_format,
                    one_row_per_key=one_row_per_key)
    project = _thrift_project(tmp_path_factory.mktemp("project"), port, schema, table_format, INPUTS)
    (project.root / "models" / "wide.sql").write_text(model_sql(one_row_per_key=one_row_per_key))

    def assert_equals_full_rebuild(run) -> None:
        assert run.returncode == 0, run.describe()
        built = Counter(hive_query(port, f"select * from {schema}.wide"))
        expected = Counter(hive_query(port, full_rebuild(schema, one_row_per_key)))
        assert built == expected, f"missing: {expected - built}, extra: {built - expected}"

    assert_equals_full_rebuild(project.dbt("run"))
    for batch in batches:
        for op in batch:
            inputs.apply(op)
        run = project.dbt("run")
        assert_equals_full_rebuild(run)
        assert ("wide: partial update" in run.output) == one_row_per_key, run.output[-3000:]
    tables = {row[1] for row in hive_query(port, f"show tables in {schema}")}
    assert tables == {*INPUTS, "wide"}, tables
