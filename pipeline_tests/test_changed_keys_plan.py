"""What a changed_keys run plans and costs, beyond its rows (the properties check those):

- `dbt compile`, `dbt ls` and `dbt docs generate` of changed_keys models change nothing: Spark's own
  record of what it ran (the SQL status store) holds only DESCRIBE and SHOW statements, no view or
  table appears, no table's properties or version move, and the next run still applies the
  changes;
- a refresh costs what changed since the last run, ties included: after a one-shot load that
  stamps one changed_since value on every row, and N rows of one input changed since (some of
  them stamped with that very value), a run logs N changed keys, reads only that input, and a run
  after it with nothing changed reads nothing and writes nothing. On both paths;
- a Delta input with row tracking, and an Iceberg input's changelog, are read into scratch tables
  once, and every later statement reads the changes from their cache;
- a refresh reads its changes in a few partitions, not spark.sql.shuffle.partitions of them:
  adaptive execution does not coalesce a cached query's last stage, and a read whose last operator
  shuffles (the compare of the rows at the mark) would otherwise cache that many partitions and
  run that many tasks for a handful of rows.
"""

from __future__ import annotations

import re
import time

import pytest

from testkit.executions import METADATA_ROOT, executions_after, last_execution_id, merge_source_copies_since, roots_since, stage_tasks_since
from testkit.formats import delta_version
from testkit.input_changes import INPUTS, Inputs, full_rebuild, model_sql


def table_state(spark, schema: str) -> dict[str, tuple]:
    """Per table of the schema: its properties (an Iceberg table's hold its current snapshot) and a
    Delta table's latest version."""
    state = {}
    for row in spark.sql(f"show tables in {schema}").collect():
        if row.isTemporary:
            continue
        name = f"{schema}.{row.tableName}"
        properties = {r.key: r.value for r in spark.sql(f"show tblproperties {name}").collect()}
        version = delta_version(spark, name) if "delta.minReaderVersion" in properties else None
        state[name] = (tuple(sorted(properties.items())), version)
    return state


def temporary_views(spark) -> set[str]:
    return {row.tableName for row in spark.sql("show tables").collect() if row.isTemporary}


def test_compile_ls_and_docs_generate_change_nothing(project, table_format):
    spark = project.spark
    inputs = Inputs(lambda sql: spark.sql(sql), lambda sql: spark.sql(sql).collect(), project.schema, table_format)
    project.sources(*INPUTS)
    project.model("recomputed", model_sql())
    project.model("partial", model_sql(one_row_per_key=True))
    assert (built := project.dbt("run")).success, built.describe()
    # Changes that an incremental run would read: a new row of a (a column), a delete in b (a
    # change feed).
    inputs.apply(("insert", "a", 4, 1))
    inputs.apply(("delete", "b", 0, None))

    before_state, before_views, since = table_state(spark, project.schema), temporary_views(spark), last_execution_id(spark)
    for command in (["compile"], ["ls"], ["docs", "generate"]):
        run = project.dbt(*command)
        assert run.success, run.describe()
    ran = roots_since(spark, since)
    assert ran, "the status store recorded nothing: the check would pass whatever compile ran"
    assert [root for root in ran if not METADATA_ROOT.match(root)] == [], ran
    assert temporary_views(spark) == before_views
    assert table_state(spark, project.schema) == before_state

    # The changes are still there for the next run to apply. On Iceberg it reads b's changelog once
    # per model, into a scratch table: no other statement's plan scans the changelog, not even the
    # plan of the cached changes, which Spark 4.1 would never find again (it resolves the
    # changelog's table anew for each query), and each later statement read the changelog again.
    since = last_execution_id(spark)
    assert (refreshed := project.dbt("run")).success, refreshed.describe()
    if table_format == "iceberg":
        changelog_reads = plans_scanning(spark, since, rf"BatchScan \S*{project.schema}\.b\.changes")
        assert len(changelog_reads) == 2, "\n\n".join(changelog_reads)
    assert "recomputed: recomputing the changed keys" in refreshed.output
    assert project.rows("recomputed") == project.rows(full_rebuild(project.schema))


# The changed_keys models over three inputs of 200 keys each, loaded once with load = 1: one per
# refresh path.
ONE_SHOT_MODEL = (
    "{{{{ config(materialized='multijoin', incremental_strategy='changed_keys'{declared}) }}}}\n"
    "{{{{ dbt_multijoin.multi_join([source('inputs', 'a'), source('inputs', 'b'), source('inputs', 'c')], key='k',\n"
    "    columns={{'a': ['a_v'], 'b': ['b_v'], 'c': ['c_v']}}, changed_since='load') }}}}\n"
)
PATHS = {"recompute": "", "partial_update": ", one_row_per_key=true"}
# The shuffle partitions of the one-shot's refresh.
MANY_PARTITIONS = 40


def changed_key_counts(output: str, model: str) -> list[int]:
    return [int(m.group(1)) for m in re.finditer(rf"dbt_multijoin: {model}: (\d+) changed keys", output)]


def read_lines(output: str, model: str) -> dict[str, str]:
    """Per input, what the run's log says it reads for `model`."""
    return {m.group(1): m.group(2) for m in re.finditer(rf"dbt_multijoin: {model}: input '(\w+)' \([\w.]+\): (reads .*)", output)}


def load_one_shot_inputs(project, table_format: str) -> None:
    """Inputs a, b and c of ONE_SHOT_MODEL, 200 keys each, loaded once with load = 1."""
    for name in ("a", "b", "c"):
        project.spark.sql(f"create table {project.table(name)} using {table_format} as "
                          f"select cast(id as int) as k, cast(id as int) as {name}_v, 1 as load from range(200)")
    project.sources("a", "b", "c")


@pytest.fixture(scope="module")
def one_shot(spark, table_format, tmp_path_factory) -> dict:
    """The models of both paths built over the one-shot load; then 7 rows of a updated by a new
    load, and 3 more stamped with the mark's value (an in-place fix of the same load): 10 changed
    keys, b and c untouched; refreshed; refreshed again with nothing changed."""
    from testkit.dbt import PipelineProject

    project = PipelineProject.create(spark, tmp_path_factory.mktemp("one-shot"), table_format)
    load_one_shot_inputs(project, table_format)
    for path, declared in PATHS.items():
        project.model(f"wide_{path}", ONE_SHOT_MODEL.format(declared=declared))
    assert (built := project.dbt("run")).success, built.describe()
    spark.sql(f"update {project.table('a')} set a_v = a_v + 1000, load = 2 where k < 7")
    spark.sql(f"update {project.table('a')} set a_v = a_v + 1000 where k between 100 and 102")
    # The refresh at more shuffle partitions than the session's 4 (dbt runs in this session), for
    # test_a_refresh_reads_its_changes_in_a_few_partitions.
    before, partitions = last_execution_id(spark), spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", str(MANY_PARTITIONS))
    try:
        changed = project.dbt("run")
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", partitions)
    stage_tasks, source_copies = stage_tasks_since(spark, before), merge_source_copies_since(spark, before)
    state = table_state(spark, project.schema)
    again = project.dbt("run")
    return {"project": project, "changed": changed, "stage_tasks": stage_tasks, "source_copies": source_copies,
            "state": state, "again": again}


@pytest.mark.parametrize("path", PATHS)
def test_a_change_of_n_rows_after_a_one_shot_load_costs_n_keys(one_shot, path):
    project, run, model = one_shot["project"], one_shot["changed"], f"wide_{path}"
    assert run.status(model) == "success", run.describe()
    assert changed_key_counts(run.output, model) == [10], run.output
    lines = read_lines(run.output, model)
    assert lines["a"].startswith("reads") and not lines["a"].startswith("reads nothing"), lines
    for unchanged in ("b", "c"):
        assert lines[unchanged].startswith("reads nothing (its table is at version"), lines
    assert project.rows(model) == project.rows(one_shot_vanilla(project, path))
    if path == "recompute":
        # Its write ran the hinted query under failOnFallback, with no EXPLAIN of it first.
        assert f"dbt_multijoin: {model}: strategy multiway, physical join operator: MultiJoin (spark.multijoin.failOnFallback fails the write otherwise)" in run.output
    # Delta read each MERGE's source, the run's own scratch tables, as it is: no copy of it first
    # (docs/dbt_package.md, the model's confs).
    assert one_shot["source_copies"] == [], one_shot["source_copies"]


def test_a_refresh_reads_its_changes_in_a_few_partitions(one_shot):
    """The one-shot's refresh, at MANY_PARTITIONS shuffle partitions, reads the rows of a at the
    mark at two versions and compares them (an aggregate, then a window): no stage of it runs
    that many tasks. Adaptive execution coalesces every other query's shuffles; the cached reads
    of the changes are the hint's to size (a cache's last stage is not coalesced)."""
    assert one_shot["changed"].success, one_shot["changed"].describe()
    assert one_shot["stage_tasks"], "the refresh ran no stage"
    wide = [(root, tasks) for root, tasks in one_shot["stage_tasks"] if max(tasks, default=0) >= MANY_PARTITIONS]
    assert not wide, wide


def one_shot_vanilla(project, path: str) -> str:
    """The one-shot model of `path` from scratch: Spark's vanilla joins of the inputs now."""
    presence = path == "partial_update"
    columns = ", ".join(f"{n}.{n}_v" + (f", {n}.k is not null or null" if presence else "") for n in ("a", "b", "c"))
    return (f"select coalesce(a.k, b.k, c.k) as k, {columns}"
            f" from {project.table('a')} as a full outer join {project.table('b')} as b on a.k = b.k"
            f" full outer join {project.table('c')} as c on coalesce(a.k, b.k) = c.k")


@pytest.mark.parametrize("path", PATHS)
def test_a_run_with_nothing_changed_reads_and_writes_nothing(one_shot, path):
    run, model = one_shot["again"], f"wide_{path}"
    assert run.status(model) == "success", run.describe()
    assert f"dbt_multijoin: {model}: no input changed since the last run: nothing to read or write" in run.output
    assert changed_key_counts(run.output, model) == []
    # No commit, no property: every table of the schema as the refresh before left it.
    assert table_state(one_shot["project"].spark, one_shot["project"].schema) == one_shot["state"]


def test_a_full_refresh_with_empty_forgets_the_marks_and_the_next_run_builds_everything(one_shot):
    """After the tests above: `dbt run --full-refresh --empty` writes empty tables that record no
    mark, also where the format's REPLACE TABLE keeps the replaced table's properties (Iceberg's
    does): the next run builds every row, not only what changed since the forgotten marks."""
    project = one_shot["project"]
    emptied = project.dbt("run", "--full-refresh", "--empty")
    for path in PATHS:
        model = f"wide_{path}"
        assert emptied.status(model) == "success", emptied.describe()
        assert not project.rows(model)
        assert not [key for key in project.properties(model) if key.startswith("dbt_multijoin.changed_since")], project.properties(model)
    rebuilt = project.dbt("run")
    for path in PATHS:
        model = f"wide_{path}"
        assert rebuilt.status(model) == "success", rebuilt.describe()
        assert project.rows(model) == project.rows(one_shot_vanilla(project, path))


def test_a_refresh_with_the_extension_switched_off_fails_and_writes_nothing(one_shot):
    """After the tests above: a key-recompute refresh proves its operator by its own write, under
    failOnFallback, which cannot see the extension switched off (the hint is then ignored with a
    warning). With spark.multijoin.enabled=false in the model's spark_conf the run fails saying
    so, before any write: the table keeps its rows and marks, and the session its confs."""
    project, spark, model = one_shot["project"], one_shot["project"].spark, "wide_recompute"
    spark.sql(f"update {project.table('a')} set a_v = a_v + 1, load = 3 where k = 50")
    before, marks = project.rows(model), project.properties(model)
    confs = {row.key: row.value for row in spark.sql("set").collect()}
    project.model(model, ONE_SHOT_MODEL.format(declared=", spark_conf={'spark.multijoin.enabled': 'false'}"))
    run = project.dbt("run", "--select", model)
    assert run.status(model) == "error", run.describe()
    assert "strategy 'multiway' but spark.multijoin.enabled is false" in run.message(model), run.describe()
    assert project.rows(model) == before and project.properties(model) == marks
    assert {row.key: row.value for row in spark.sql("set").collect()} == confs


def test_a_merge_source_copy_the_session_asks_for_is_kept(one_shot, table_format):
    """After the tests above: a refresh leaves Delta's materializeSource to a value the session has
    set (a profile's server_side_parameters, a pre-hook's SET), where it otherwise sets none for
    its MERGE: the MERGE copies its source as Delta does by default, and the session keeps the
    value."""
    if table_format != "delta":
        pytest.skip("Delta's MERGE")
    project, spark, model = one_shot["project"], one_shot["project"].spark, "wide_partial_update"
    key = "spark.databricks.delta.merge.materializeSource"
    spark.sql(f"update {project.table('a')} set a_v = a_v + 1, load = 4 where k = 51")
    spark.conf.set(key, "auto")
    try:
        before = last_execution_id(spark)
        run = project.dbt("run", "--select", model)
        copies, kept = merge_source_copies_since(spark, before), spark.conf.get(key)
    finally:
        spark.conf.unset(key)
    assert run.status(model) == "success", run.describe()
    assert copies and kept == "auto", (copies, kept)
    assert project.rows(model) == project.rows(one_shot_vanilla(project, "partial_update"))


def test_ties_that_cannot_be_compared_are_read_again_and_the_log_says_why(project, table_format):
    """Delta: the rows at the mark are compared with the version the last run read, unless that
    version can no longer be read as it was: a VACUUM ran since, it is older than the table's file
    retention, or it is not in the table's history (the table was created again). Then every row
    at the mark is read and applied again, the log names the reason, and the table is still right.
    The history is read from the recorded version on only (a table's whole history can hold
    thousands of commits): a recorded version above the table's newest is not in it either."""
    if table_format != "delta":
        pytest.skip("Delta's reasons (an Iceberg snapshot that is gone: test_changed_keys.py)")
    spark = project.spark
    load_one_shot_inputs(project, table_format)
    project.model("wide", ONE_SHOT_MODEL.format(declared=""))
    assert (built := project.dbt("run")).success, built.describe()
    a = project.table("a")

    def refresh_reads_every_tie(reason: str, change: str) -> None:
        spark.sql(change)  # rows of a at the mark (load = 1) changed in place
        run = project.dbt("run")
        assert run.success, run.describe()
        assert read_lines(run.output, "wide")["a"].endswith(f"at or above 1: every row at the mark is read and applied again, as {reason})"), run.output
        assert project.rows("wide") == project.rows(one_shot_vanilla(project, "recompute"))

    recorded = delta_version(spark, a)
    # VACUUM lists the table's directory in spark.sql.sources.parallelPartitionDiscovery.parallelism
    # tasks (10,000 by default), however few files it holds: 2 are enough here.
    spark.conf.set("spark.sql.sources.parallelPartitionDiscovery.parallelism", "2")
    try:
        spark.sql(f"vacuum {a}")
    finally:
        spark.conf.unset("spark.sql.sources.parallelPartitionDiscovery.parallelism")
    # Commits enough after it that the VACUUM and the recorded version lie beyond the newest
    # commits a run reads with the version now (the macro _mj_column_history_read: 16): the history
    # is read again, back to the recorded one.
    for filler in range(16):
        spark.sql(f"alter table {a} set tblproperties ('test.filler' = '{filler}')")
    refresh_reads_every_tie(f"a VACUUM ran on the table after version {recorded}",
                            f"update {a} set a_v = a_v + 1000 where k between 100 and 102")
    recorded = delta_version(spark, a)
    spark.sql(f"alter table {a} set tblproperties ('delta.deletedFileRetentionDuration' = 'interval 1 seconds')")
    time.sleep(2)
    refresh_reads_every_tie(f"version {recorded} is older than the table's file retention (interval 1 seconds)",
                            f"update {a} set a_v = a_v + 1000 where k between 103 and 105")
    recorded = delta_version(spark, a)
    assert recorded > 0  # above the version the table created again starts from
    spark.sql(f"drop table {a}")
    # Created again with every key it held (a row deleted at the mark is seen only through the
    # compare: docs/dbt_package.md), each with a new value.
    spark.sql(f"create table {a} using delta as select cast(id as int) as k, cast(id as int) + 5000 as a_v, 1 as load from range(200)")
    refresh_reads_every_tie(f"version {recorded} is no longer in the table's history",
                            f"update {a} set a_v = a_v + 1000 where k = 0")


def test_row_tracking_tells_the_ties_apart_unless_a_commit_may_have_deleted_rows(project, table_format):
    """Delta with row tracking: the rows at the mark that changed since the last run are the ones a
    later commit wrote (their row commit version), and a row an UPDATE moved to another key takes
    its old key along (read off the recorded version by row id), with no compare of the rows at
    the mark; the log says so, and both paths give the vanilla rows. A commit that may have
    deleted a row (here a MERGE that deleted one) sends the next run back to the compare."""
    if table_format != "delta":
        pytest.skip("Delta's row tracking")
    spark = project.spark
    load_one_shot_inputs(project, table_format)
    a = project.table("a")
    spark.sql(f"drop table {a}")
    spark.sql(f"create table {a} using delta tblproperties ('delta.enableRowTracking' = 'true') as "
              "select cast(id as int) as k, cast(id as int) as a_v, 1 as load from range(200)")
    for path, declared in PATHS.items():
        project.model(f"wide_{path}", ONE_SHOT_MODEL.format(declared=declared))
    assert (built := project.dbt("run")).success, built.describe()

    def refresh(changes: list[str], by_row_tracking: bool):
        for change in changes:
            spark.sql(change)
        since = last_execution_id(spark)
        run = project.dbt("run")
        assert run.success, run.describe()
        if by_row_tracking:
            # The scratch table of rewritten rows is scanned outside a cache only by the write of
            # the keys those rows had then, one per model: every later statement found the cached
            # changes. Their query holds no scan of the input, which Delta 3.3 (Spark 3.5) plans
            # anew for each query, so that no statement found a cache holding one.
            uncached = [plan for plan in plans_scanning(spark, since, r"Scan parquet \S*__dbt_mj_rewritten_now_") if "Scan In-memory table" not in plan]
            assert len(uncached) == len(PATHS), "\n\n".join(uncached)
        for path in PATHS:
            line = read_lines(run.output, f"wide_{path}")["a"]
            assert line.endswith(", by the table's row tracking)") == by_row_tracking, line
            assert project.rows(f"wide_{path}") == project.rows(one_shot_vanilla(project, path)), path
        return run

    # All at the mark (load = 1): rows changed in place, a key a MERGE added (deleting nothing),
    # and key 10's row moved to key 600, so that a holds key 10 no more.
    run = refresh([f"update {a} set a_v = a_v + 1000 where k between 100 and 102",
                   f"merge into {a} as t using (select 500 as k, 7 as a_v, 1 as load) as s on t.k = s.k "
                   "when matched then update set * when not matched then insert *",
                   f"update {a} set k = 600 where k = 10"], by_row_tracking=True)
    for path in PATHS:
        assert changed_key_counts(run.output, f"wide_{path}") == [6], run.output
    # A MERGE that deletes a row at the mark: the compare finds it.
    refresh([f"merge into {a} as t using (select 20 as k) as s on t.k = s.k when matched then delete",
             f"update {a} set a_v = a_v + 1 where k = 21"], by_row_tracking=False)
    # Its version recorded, the next run tells the ties apart by row tracking again.
    refresh([f"update {a} set a_v = a_v + 1 where k = 22"], by_row_tracking=True)


def plans_scanning(spark, since: int, scan: str) -> list[str]:
    """The plans of the statements run since execution `since` that hold a scan `scan` (a regular
    expression), a cached relation's plan included."""
    plans = [str(e.physicalPlanDescription()) for e in executions_after(spark, since)]
    return [plan for plan in plans if re.search(scan, plan)]


UNIT_TESTS = """version: 2
unit_tests:
  - name: ut_recomputed
    model: recomputed
    given:
      - input: source('inputs', 'a')
        rows: [{id: 1, k: 1, v: 10}, {id: 2, k: 2, v: 20}, {id: 4, k: null, v: 40}]
      - input: source('inputs', 'b')
        rows: [{id: 3, k: 2, v: 30}]
      - input: source('inputs', 'c')
        rows: []
    expect:
      rows:
        - {k: 1, a_id: 1, a_v: 10, b_id: null, b_v: null, c_v: null}
        - {k: 2, a_id: 2, a_v: 20, b_id: 3, b_v: 30, c_v: null}
        - {k: null, a_id: 4, a_v: 40, b_id: null, b_v: null, c_v: null}
  - name: ut_partial
    model: partial
    given:
      - input: source('inputs', 'a')
        rows: [{id: 1, k: 1, v: 10}]
      - input: source('inputs', 'b')
        rows: [{id: 3, k: 2, v: 30}]
      - input: source('inputs', 'c')
        rows: [{id: 5, k: 2, v: 50}]
    expect:
      rows:
        - {k: 1, a_v: 10, b_v: null, c_v: null, dbt_multijoin_has_a: true, dbt_multijoin_has_b: null}
        - {k: 2, a_v: null, b_v: 30, c_v: 50, dbt_multijoin_has_a: null, dbt_multijoin_has_c: true}
  - name: ut_recomputed_as_incremental
    model: recomputed
    overrides:
      macros:
        is_incremental: true
    given:
      - input: source('inputs', 'a')
        rows: [{id: 1, k: 1, v: 10}]
      - input: source('inputs', 'b')
        rows: []
      - input: source('inputs', 'c')
        rows: []
      - input: this
        rows: []
    expect:
      rows: []
"""


def test_a_unit_test_checks_the_full_build(project, table_format):
    """dbt unit tests of changed_keys models check their full build (the presence columns of a
    partial-update model too), over fixtures of the inputs' real columns; an is_incremental
    override, which has no meaning for them, fails naming the model and saying what to do."""
    spark = project.spark
    Inputs(lambda sql: spark.sql(sql), lambda sql: spark.sql(sql).collect(), project.schema, table_format)
    project.sources(*INPUTS)
    project.model("recomputed", model_sql())
    project.model("partial", model_sql(one_row_per_key=True))
    (project.root / "models" / "unit_tests.yml").write_text(UNIT_TESTS)
    assert (built := project.dbt("run")).success, built.describe()
    tested = project.dbt("test", "--select", "test_type:unit")
    assert tested.status("ut_recomputed") == "pass", tested.describe()
    assert tested.status("ut_partial") == "pass", tested.describe()
    assert tested.status("ut_recomputed_as_incremental") == "error", tested.describe()
    message = tested.message("ut_recomputed_as_incremental")
    assert "model 'recomputed' (unit test 'ut_recomputed_as_incremental')" in message, message
    assert "is_incremental has no meaning" in message and "Drop the is_incremental override" in message, message


def test_a_changed_since_column_missing_or_of_another_type_fails_naming_it(project, table_format):
    """A changed_since column the input lacks, or of a type whose values cannot say which rows are
    newer (a double), fails the run before it writes, naming the column, the input and its
    relation: the plan reads the column's type from the input's columns it described."""
    spark = project.spark
    Inputs(lambda sql: spark.sql(sql), lambda sql: spark.sql(sql).collect(), project.schema, table_format)
    project.sources(*INPUTS)
    spark.sql(f"alter table {project.table('a')} add columns (score double)")
    for column, said in (("missing", "changed_since column 'missing' not found in input 'a'"),
                         ("score", "changed_since column 'score' of input 'a'")):
        project.model("wide", model_sql().replace("'a': 'updated_at'", f"'a': '{column}'"))
        refused = project.dbt("run", "-s", "wide")
        assert not refused.success, refused.describe()
        message = refused.messages["wide"]
        assert said in message and project.table("a") in message, message
        assert column != "score" or "has type double" in message, message
        assert "wide" not in project.tables()
