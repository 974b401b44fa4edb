"""incremental_strategy='changed_keys', the key-recompute path: after every run the incrementally
maintained table equals a full rebuild of the same model, as a multiset, whatever happened to the
inputs in between (the inputs and their changes: testkit/input_changes.py). Input `b` is read
through its table's change feed (Delta's change data feed, Iceberg's changelog) and also gets
deletes and updates that move a key; the others are tracked by `updated_at`, a coarse clock whose
values tie the recorded mark (`c`'s a string holding `*/` and quotes).
"""

from __future__ import annotations

from hypothesis import example, given, settings

from testkit.properties import PIPELINE_EXAMPLES, PIPELINE_SETTINGS
from testkit.input_changes import BATCHES, FIRST_MERGE_FILTER, INPUTS, ONLY_THE_CLOCK, TIES_AT_THE_MARK, Inputs, assert_merge_filter, full_rebuild, merge_filter, model_sql, nth_merge_filter


def assert_equals_full_rebuild(project, run) -> None:
    assert run.success, run.describe()
    built = project.rows("wide")
    expected = project.rows(full_rebuild(project.schema))
    assert built == expected, f"missing: {expected - built}, extra: {built - expected}"


@settings(max_examples=PIPELINE_EXAMPLES, **PIPELINE_SETTINGS)
@given(batches=BATCHES, first_filter=FIRST_MERGE_FILTER)
@example(batches=TIES_AT_THE_MARK + ONLY_THE_CLOCK, first_filter=1)
def test_changed_keys_equals_full_rebuild(spark, table_format, tmp_path_factory, batches, first_filter):
    from testkit.dbt import PipelineProject

    project = PipelineProject.create(spark, tmp_path_factory.mktemp("changed-keys"), table_format)
    inputs = Inputs(lambda sql: spark.sql(sql), lambda sql: spark.sql(sql).collect(), project.schema,
                    table_format)
    project.sources(*INPUTS)
    project.model("wide", model_sql())
    assert_equals_full_rebuild(project, project.dbt("run", "-s", "wide"))
    for run_index, batch in enumerate(batches):
        writes = inputs.writes
        for op in batch:
            inputs.apply(op)
        kind = nth_merge_filter(first_filter, run_index)
        with merge_filter(spark, kind) as hash_list_limit:
            run = project.dbt("run", "-s", "wide", "--vars", f"dbt_multijoin_hash_list_limit: {hash_list_limit}")
        assert_equals_full_rebuild(project, run)
        assert_merge_filter(run.output, kind, inputs.writes > writes)
        assert not [t for t in project.tables() if "__dbt_mj_" in t]  # no key or rows table left
        # nor a temporary view of an input's changes (dbt runs in this SparkSession)
        assert not [r.tableName for r in spark.sql("show tables").collect() if r.tableName.startswith(f"{project.schema}__")]
    # The last run replaced keys, it did not rebuild: the marks moved on and the plan was the
    # operator's.
    properties = project.properties("wide")
    assert properties["dbt_multijoin.operator"] == "MultiJoin"
    assert int(properties["dbt_multijoin.changed_since.a"]) >= 1000


def test_change_feed_refuses_what_it_cannot_read(project, table_format):
    """A change feed the input's table does not have, and a recorded mark the feed no longer
    reaches, fail the run naming the input and its relation, and leave the table as it was."""
    Inputs(lambda sql: project.spark.sql(sql), lambda sql: project.spark.sql(sql).collect(), project.schema, table_format)
    project.sources(*INPUTS, "plain")
    project.spark.sql(f"create table {project.table('plain')} (id bigint, k int, v int, w int, updated_at bigint) using parquet")
    project.model("over_plain", model_sql(feed_input="plain"))
    refused = project.dbt("run", "-s", "over_plain")
    assert not refused.success
    message = refused.messages["over_plain"]
    assert "change_feed" in message and "'plain'" in message and project.table("plain") in message, message

    project.model("wide", model_sql())
    assert project.dbt("run", "-s", "wide").success
    before = project.rows("wide")
    # A mark the feed cannot start from: an Iceberg snapshot that is not in the table's history
    # (expired, rolled back), or for Delta something that is not a version.
    bogus = "123" if table_format == "iceberg" else "v1"
    project.spark.sql(f"alter table {project.table('wide')} set tblproperties ('dbt_multijoin.changed_since.b' = '{bogus}')")
    project.spark.sql(f"insert into {project.table('b')} values (900, 5, 5, null, 5000)")
    stale = project.dbt("run", "-s", "wide")
    assert not stale.success
    message = stale.messages["wide"]
    assert bogus in message and "'b'" in message and "--full-refresh" in message, message
    assert project.rows("wide") == before
    assert project.dbt("run", "-s", "wide", "--full-refresh").success
    assert project.rows("wide") == project.rows(full_rebuild(project.schema))
