"""dbt-spark's incremental strategies inside the multijoin materialization: append, insert_overwrite
(the daily ds-partitioned wide table: a run replaces only its own partitions) and merge on a
unique_key. Every run is checked against the rows it must leave, and against the operator."""

from __future__ import annotations

from collections import Counter

WIDE_BY_DAY = (
    "select * from (\n"
    "{{ dbt_multijoin.multi_join([source('inputs', 'a'), source('inputs', 'b')], key=['ds', 'k'], columns={'a': ['a_v'], 'b': ['b_v']}) }}\n"
    ") as joined\n"
    "{% if dbt_multijoin.is_incremental() %}where ds >= '{{ var('ds') }}'{% endif %}\n"
)


def daily_inputs(project, days: list[str], version: int) -> None:
    """Inputs a and b with 10 keys per day in `days`; payloads carry `version`."""
    fmt = project.table_format
    for name, column, stride in [("a", "a_v", 1), ("b", "b_v", 2)]:
        rows = ", ".join(f"('{day}', {k * stride}, {version * 100 + k})" for day in days for k in range(10))
        project.spark.sql(f"create or replace table {project.table(name)} (ds string, k int, {column} int) using {fmt}")
        project.spark.sql(f"insert into {project.table(name)} values {rows}")
    project.sources("a", "b")


def expected(project, where: str = "true"):
    return project.rows(
        "select coalesce(a.ds, b.ds) as ds, coalesce(a.k, b.k) as k, a.a_v, b.b_v "
        f"from {project.table('a')} as a full outer join {project.table('b')} as b on a.ds = b.ds and a.k = b.k "
        f"where {where}"
    )


def run(project, *args):
    result = project.dbt("run", "-s", "wide", *args)
    assert result.success, result.describe()
    assert project.properties("wide")["dbt_multijoin.operator"] == "MultiJoin"
    return result


def test_insert_overwrite_replaces_only_its_partitions(project):
    project.model("wide", "{{ config(materialized='multijoin', file_format='parquet', incremental_strategy='insert_overwrite', partition_by=['ds']) }}\n" + WIDE_BY_DAY)
    daily_inputs(project, ["2026-11-20", "2026-11-21"], version=1)
    run(project, "--vars", "ds: '2026-11-21'")
    first = project.rows("select ds, k, a_v, b_v from " + project.table("wide"))
    assert first == expected(project)

    # Day 21 is restated and day 22 arrives; day 20 changed upstream but is not in the run's range.
    daily_inputs(project, ["2026-11-20", "2026-11-21", "2026-11-22"], version=2)
    run(project, "--vars", "ds: '2026-11-21'")
    after = project.rows("select ds, k, a_v, b_v from " + project.table("wide"))
    kept = Counter({row: n for row, n in first.items() if row[0] == "2026-11-20"})
    assert after == expected(project, "coalesce(a.ds, b.ds) >= '2026-11-21'") + kept
    # The session's partitionOverwriteMode is back to what it was.
    assert project.spark.conf.get("spark.sql.sources.partitionOverwriteMode").upper() == "STATIC"


def test_append_adds_the_new_rows(project):
    project.model("wide", "{{ config(materialized='multijoin', file_format='parquet', incremental_strategy='append') }}\n" + WIDE_BY_DAY)
    daily_inputs(project, ["2026-11-20"], version=1)
    run(project, "--vars", "ds: '2026-11-20'")
    first = project.rows("wide")
    daily_inputs(project, ["2026-11-20", "2026-11-21"], version=1)
    run(project, "--vars", "ds: '2026-11-21'")
    assert project.rows("wide") == first + expected(project, "coalesce(a.ds, b.ds) = '2026-11-21'")


def test_merge_upserts_on_the_unique_key(project):
    project.model("wide", "{{ config(materialized='multijoin', incremental_strategy='merge', unique_key=['ds', 'k']) }}\n" + WIDE_BY_DAY)
    daily_inputs(project, ["2026-11-20", "2026-11-21"], version=1)
    run(project, "--vars", "ds: '2026-11-20'")
    first = project.rows("wide")
    daily_inputs(project, ["2026-11-20", "2026-11-21", "2026-11-22"], version=2)
    run(project, "--vars", "ds: '2026-11-21'")
    kept = Counter({row: n for row, n in first.items() if row[0] == "2026-11-20"})
    assert project.rows("wide") == expected(project, "coalesce(a.ds, b.ds) >= '2026-11-21'") + kept


def test_full_refresh_rebuilds_everything(project):
    project.model("wide", "{{ config(materialized='multijoin', incremental_strategy='merge', unique_key=['ds', 'k']) }}\n" + WIDE_BY_DAY)
    daily_inputs(project, ["2026-11-20"], version=1)
    run(project, "--vars", "ds: '2026-11-20'")
    daily_inputs(project, ["2026-11-20", "2026-11-21"], version=2)
    run(project, "--vars", "ds: '2026-11-21'", "--full-refresh")
    assert project.rows("wide") == expected(project)


def test_on_schema_change_adds_new_columns_or_fails(project):
    """on_schema_change as dbt-spark honours it: append_new_columns adds a column the model
    gained (rows written before it hold NULL there); fail stops the run and leaves the table."""
    config = "{{ config(materialized='multijoin', file_format='" + project.table_format + "', incremental_strategy='append', on_schema_change='%s') }}\n"
    project.model("wide", config % "append_new_columns" + WIDE_BY_DAY)
    daily_inputs(project, ["2026-11-20"], version=1)
    run(project, "--vars", "ds: '2026-11-20'")
    written_before = sum(project.rows("wide").values())
    # Input b gains a column: the model's output gains it too.
    project.spark.sql(f"alter table {project.table('b')} add columns (b_w int)")
    project.spark.sql(f"insert into {project.table('b')} values ('2026-11-21', 4, 7, 70)")
    project.model("wide", config % "append_new_columns" + WIDE_BY_DAY.replace("'b': ['b_v']", "'b': ['b_v', 'b_w']"))
    run(project, "--vars", "ds: '2026-11-21'")
    columns = [row.col_name for row in project.spark.sql(f"describe {project.table('wide')}").collect()]
    assert columns[:5] == ["ds", "k", "a_v", "b_v", "b_w"], columns
    assert project.rows(f"select ds, k, b_w from {project.table('wide')} where ds = '2026-11-21'") == Counter({("2026-11-21", 4, 70): 1})
    assert project.rows(f"select count(*) from {project.table('wide')} where b_w is null") == Counter({(written_before,): 1})

    before = project.rows("wide")
    project.model("wide", config % "fail" + WIDE_BY_DAY)  # b_w is gone from the model
    failed = project.dbt("run", "-s", "wide", "--vars", "ds: '2026-11-22'")
    assert not failed.success and "schema" in failed.messages["wide"].lower(), failed.describe()
    assert project.rows("wide") == before
