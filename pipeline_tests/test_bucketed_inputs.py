"""A multijoin model over Iceberg tables bucketed alike on the key builds with no shuffle: the
materialization's EXPLAIN proof holds (a multiway model without a MultiJoin fails), and the model's
compiled query, planned under the model's confs, has no Exchange (docs/table_formats.md, "Inputs
bucketed on the key"). Runs with `--table-format iceberg` only."""

from __future__ import annotations

import pytest

from testkit.plans import plan_nodes

LAYOUT_CONFS = {
    "spark.sql.sources.v2.bucketing.enabled": "true",
    "spark.sql.iceberg.planning.preserve-data-grouping": "true",
}
# The same, as a model's spark_conf.
MODEL_CONFS = ", ".join(f"'{k}': '{v}'" for k, v in LAYOUT_CONFS.items())


def bucketed_inputs(project) -> None:
    """Sources a, b and c: Iceberg tables bucketed alike on k (bucket(4, k)), 60 rows each."""
    for name, column, stride in [("a", "a_v", 1), ("b", "b_v", 2), ("c", "c_v", 3)]:
        project.spark.sql(
            f"create table {project.table(name)} (k int, {column} int) using iceberg partitioned by (bucket(4, k))"
        )
        project.spark.sql(
            f"insert into {project.table(name)} select cast(id * {stride} % 50 as int), cast(id as int) from range(60)"
        )
    project.sources("a", "b", "c")


def assert_planned_with_no_exchange(project, model: str) -> None:
    """The model's compiled query, planned under the layout's confs, is a MultiJoin with no
    Exchange, and the model's table holds its rows."""
    compiled = next((project.root / "target" / "compiled").rglob(f"{model}.sql")).read_text()
    for key, value in LAYOUT_CONFS.items():
        project.spark.conf.set(key, value)
    try:
        hinted = project.spark.sql(compiled)
        names = [n.nodeName() for n in plan_nodes(hinted._jdf.queryExecution().executedPlan())]
        assert "MultiJoin" in names and not any("Exchange" in n for n in names), names
        assert project.rows(model) == project.rows(compiled)
    finally:
        for key in LAYOUT_CONFS:
            project.spark.conf.unset(key)


@pytest.mark.parametrize("join_type", ["full", "left"])
def test_model_over_bucketed_inputs_builds_with_no_exchange(project, table_format, join_type):
    if table_format != "iceberg":
        pytest.skip("bucketed key-grouped inputs are Iceberg tables")
    bucketed_inputs(project)
    project.model(
        "wide",
        f"{{{{ config(materialized='multijoin', strategy='multiway', spark_conf={{{MODEL_CONFS}}}) }}}}\n"
        "{{ dbt_multijoin.multi_join([source('inputs', 'a'), source('inputs', 'b'), source('inputs', 'c')], "
        f"key='k', join_type='{join_type}', columns={{'a': ['a_v'], 'b': ['b_v'], 'c': ['c_v']}}) }}}}\n",
    )
    result = project.dbt("build")
    assert result.success, result.describe()

    assert_planned_with_no_exchange(project, "wide")


def test_a_model_bucketed_on_its_key_feeds_the_next_with_no_exchange(project, table_format):
    """A multiway model whose table is partitioned `bucket(4, k)` (dbt's partition_by) is itself
    an input laid out by key: the next model, a multi-join of it with another table bucketed
    alike, plans with no Exchange, and its rows are its query's."""
    if table_format != "iceberg":
        pytest.skip("bucketed key-grouped inputs are Iceberg tables")
    bucketed_inputs(project)
    project.model(
        "wide",
        "{{ config(materialized='multijoin', strategy='multiway', file_format='iceberg', "
        f"partition_by=['bucket(4, k)'], spark_conf={{{MODEL_CONFS}}}) }}}}\n"
        "{{ dbt_multijoin.multi_join([source('inputs', 'a'), source('inputs', 'b')], key='k', "
        "columns={'a': ['a_v'], 'b': ['b_v']}) }}\n",
    )
    project.model(
        "wider",
        f"{{{{ config(materialized='multijoin', strategy='multiway', spark_conf={{{MODEL_CONFS}}}) }}}}\n"
        "{{ dbt_multijoin.multi_join([ref('wide'), source('inputs', 'c')], key='k', "
        "columns={'wide': ['a_v', 'b_v'], 'c': ['c_v']}) }}\n",
    )
    result = project.dbt("build")
    assert result.success, result.describe()

    assert_planned_with_no_exchange(project, "wider")
