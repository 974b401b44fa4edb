"""incremental_strategy='changed_keys': after every run the incrementally maintained table equals
a full rebuild of the same model, as a multiset, whatever happened to the inputs in between (the
inputs and their changes: testkit/input_changes.py). On Delta, input `b` is read through its
change data feed and also gets deletes and updates that move a key; on Iceberg it is tracked by
`updated_at` like the others.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from testkit.input_changes import BATCHES, INPUTS, Inputs, full_rebuild, model_sql, without_feed_changes


def assert_equals_full_rebuild(project, run) -> None:
    assert run.success, run.describe()
    built = project.rows("wide")
    expected = project.rows(full_rebuild(project.schema))
    assert built == expected, f"missing: {expected - built}, extra: {built - expected}"


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(batches=BATCHES)
def test_changed_keys_equals_full_rebuild(spark, table_format, tmp_path_factory, batches):
    from testkit.dbt_project import PipelineProject

    feed_for_b = table_format == "delta"
    if not feed_for_b:
        batches = without_feed_changes(batches)
    project = PipelineProject.create(spark, tmp_path_factory.mktemp("changed-keys"), table_format)
    inputs = Inputs(lambda sql: spark.sql(sql), lambda sql: spark.sql(sql).collect(), project.schema,
                    table_format, feed_for_b)
    project.sources(*INPUTS)
    project.model("wide", model_sql(feed_for_b))
    assert_equals_full_rebuild(project, project.dbt("run", "-s", "wide"))
    for batch in batches:
        for op in batch:
            inputs.apply(op)
        run = project.dbt("run", "-s", "wide")
        assert_equals_full_rebuild(project, run)
        assert not [t for t in project.tables() if "__dbt_mj_" in t]  # no key or rows table left
    # The last run replaced keys, it did not rebuild: the marks moved on and the plan was the
    # operator's.
    properties = project.properties("wide")
    assert properties["dbt_multijoin.operator"] == "MultiJoin"
    assert int(properties["dbt_multijoin.changed_since.a"]) >= 1000
