"""A multijoin model over Iceberg tables bucketed alike on the key builds with no shuffle: the
materialization's EXPLAIN proof holds (a multiway model without a MultiJoin fails), and the model's
compiled query, planned under the model's confs, has no Exchange (docs/table_formats.md, "Inputs
bucketed on the key"). A model whose table is bucketed like its inputs is written with no Exchange
either, one file per bucket ("Writing a table bucketed alike"). Runs with `--table-format iceberg`
only."""

from __future__ import annotations

import pytest

from testkit import executions
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


def write_plans(project, after: int, model: str) -> list[str]:
    """The physical plans of the statements that wrote `model`'s table since execution `after`."""
    executions.settle(project.spark)
    plans = [str(e.physicalPlanDescription()) for e in executions.executions(project.spark)
             if int(e.executionId()) > after]
    return [p for p in plans if "IcebergWrite(" in p and f".{model}," in p]


def test_a_model_bucketed_like_its_inputs_is_written_with_no_exchange(project, table_format):
    """`file_format: iceberg`, `partition_by: bucket(4, k)` over inputs bucketed alike: the query's
    output is grouped by the table's buckets (a FULL multi-join's key column; a GROUP BY on it
    above), so the write is made with Iceberg's distribution `none`: no Exchange in the write,
    one file per bucket, the rows of the query. Over unbucketed inputs the same model is written
    with the table's own distribution (Iceberg's rebalance), as before; the log says which."""
    if table_format != "iceberg":
        pytest.skip("bucketed key-grouped inputs are Iceberg tables")
    bucketed_inputs(project)
    for name, column in [("d", "d_v"), ("e", "e_v")]:
        project.spark.sql(f"create table {project.table(name)} (k int, {column} int) using iceberg")
        project.spark.sql(f"insert into {project.table(name)} select cast(id % 50 as int), cast(id as int) from range(60)")
    project.sources("a", "b", "c", "d", "e")
    config = ("{{ config(materialized='multijoin', strategy='multiway', file_format='iceberg', "
              f"partition_by=['bucket(4, k)'], spark_conf={{{MODEL_CONFS}}}) }}}}\n")
    full = ("dbt_multijoin.multi_join([source('inputs', 'a'), source('inputs', 'b'), source('inputs', 'c')], "
            "key='k', columns={'a': ['a_v'], 'b': ['b_v'], 'c': ['c_v']})")
    project.model("wide", config + "{{ " + full + " }}\n")
    project.model("wide_counts", config + "select k, count(*) as n, sum(a_v) as a_sum from (\n{{ " + full
                  + " }}\n) as joined group by k\n")
    project.model("wide_unbucketed", config + "{{ dbt_multijoin.multi_join([source('inputs', 'd'), "
                  "source('inputs', 'e')], key='k', columns={'d': ['d_v'], 'e': ['e_v']}) }}\n")
    mark = executions.last_execution_id(project.spark)
    result = project.dbt("run")
    assert result.success, result.describe()

    for model in ("wide", "wide_counts", "wide_unbucketed"):
        plans = write_plans(project, mark, model)
        assert plans, model
        compiled = next((project.root / "target" / "compiled").rglob(f"{model}.sql")).read_text()
        for key, value in LAYOUT_CONFS.items():
            project.spark.conf.set(key, value)
        try:
            assert project.rows(model) == project.rows(compiled), model
        finally:
            for key in LAYOUT_CONFS:
                project.spark.conf.unset(key)
        files = project.spark.sql(f"select partition, count(*) as n from {project.table(model)}.files group by partition").collect()
        if model == "wide_unbucketed":
            assert any("Exchange" in p for p in plans), plans
        else:
            assert not any("Exchange" in p for p in plans), plans
            assert len(files) == 4 and all(row.n == 1 for row in files), files
    assert "wide: the query's output is grouped: bucket(4, k)" in result.output, result.output
    assert "written with no redistribution (spark.sql.iceberg.distribution-mode=none for this write)" in result.output
    assert "wide_unbucketed: the table's own write distribution applies" in result.output, result.output
    # Put back after the write: nothing of it is left in the session.
    assert project.spark.conf.get("spark.sql.iceberg.distribution-mode", None) is None
