"""dbt-spark's incremental strategies inside the multijoin materialization: append, insert_overwrite
(the daily ds-partitioned wide table: a run replaces only its own partitions) and merge on a
unique_key; a --full-refresh; on_schema_change. Every run is checked against the rows it must
leave, and against the operator it recorded."""

from __future__ import annotations

from collections import Counter

import pytest

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
    result = project.dbt("run", *args)
    assert result.success, result.describe()
    return result


# One model per strategy, over the same inputs, each with the config its test names.
STRATEGIES = {
    "insert_overwrite": "file_format='parquet', incremental_strategy='insert_overwrite', partition_by=['ds']",
    "append": "file_format='parquet', incremental_strategy='append'",
    "merge": "incremental_strategy='merge', unique_key=['ds', 'k']",
    "full_refresh": "incremental_strategy='merge', unique_key=['ds', 'k']",
}


def rows(project, strategy: str) -> Counter:
    """A strategy's model's rows, columns in the model's order (a table partitioned by ds has it
    last)."""
    return project.rows(f"select ds, k, a_v, b_v from {project.table(f'wide_{strategy}')}")


def operator(project, strategy: str) -> str:
    """The join operator a strategy's model's last run recorded."""
    return project.properties(f"wide_{strategy}")["dbt_multijoin.operator"]


@pytest.fixture(scope="module")
def runs(spark, table_format, tmp_path_factory) -> dict:
    """Every strategy's model in one project: built over days 20 and 21; then day 21 is restated,
    day 22 arrives and day 20 changes upstream (outside the run's range, ds 21 on); one run
    refreshes the incremental models, one `--full-refresh` rebuilds the last. Per model: its
    rows and recorded operator after the build and after the refresh; the inputs' rows as the
    refresh saw them, per range of days."""
    from testkit.dbt import PipelineProject

    project = PipelineProject.create(spark, tmp_path_factory.mktemp("strategies"), table_format)
    for strategy, config in STRATEGIES.items():
        project.model(f"wide_{strategy}", "{{ config(materialized='multijoin', " + config + ") }}\n" + WIDE_BY_DAY)
    daily_inputs(project, ["2026-11-20", "2026-11-21"], version=1)
    run(project, "--vars", "ds: '2026-11-20'")
    first = {s: rows(project, s) for s in STRATEGIES}
    built_by = {s: operator(project, s) for s in STRATEGIES}
    daily_inputs(project, ["2026-11-20", "2026-11-21", "2026-11-22"], version=2)
    incremental = [f"wide_{s}" for s in STRATEGIES if s != "full_refresh"]
    run(project, "-s", *incremental, "--vars", "ds: '2026-11-21'")
    run(project, "-s", "wide_full_refresh", "--vars", "ds: '2026-11-21'", "--full-refresh")
    return dict(
        first=first,
        after={s: rows(project, s) for s in STRATEGIES},
        operators={s: (built_by[s], operator(project, s)) for s in STRATEGIES},
        from_day_21=expected(project, "coalesce(a.ds, b.ds) >= '2026-11-21'"),
        everything=expected(project),
        overwrite_mode=spark.conf.get("spark.sql.sources.partitionOverwriteMode"),
    )


def day_20_as_built(runs, strategy: str) -> Counter:
    return Counter({row: n for row, n in runs["first"][strategy].items() if row[0] == "2026-11-20"})


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_run_joined_by_the_multi_join(runs, strategy):
    assert runs["operators"][strategy] == ("MultiJoin", "MultiJoin")


def test_insert_overwrite_replaces_only_its_partitions(runs):
    # Day 20 changed upstream but is not in the run's range: its partition stays as built.
    assert runs["after"]["insert_overwrite"] == runs["from_day_21"] + day_20_as_built(runs, "insert_overwrite")
    # The session's partitionOverwriteMode is back to what it was.
    assert runs["overwrite_mode"].upper() == "STATIC"


def test_append_adds_the_new_rows(runs):
    assert runs["after"]["append"] == runs["first"]["append"] + runs["from_day_21"]


def test_merge_upserts_on_the_unique_key(runs):
    assert runs["after"]["merge"] == runs["from_day_21"] + day_20_as_built(runs, "merge")


def test_full_refresh_rebuilds_everything(runs):
    assert runs["after"]["full_refresh"] == runs["everything"]


def test_on_schema_change_adds_new_columns_or_fails(project):
    """on_schema_change as dbt-spark honours it: append_new_columns adds a column the model
    gained (rows written before it hold NULL there); fail stops the run and leaves the table."""
    config = "{{ config(materialized='multijoin', file_format='" + project.table_format + "', incremental_strategy='append', on_schema_change='%s') }}\n"
    project.model("wide", config % "append_new_columns" + WIDE_BY_DAY)
    daily_inputs(project, ["2026-11-20"], version=1)
    run(project, "-s", "wide", "--vars", "ds: '2026-11-20'")
    written_before = sum(project.rows("wide").values())
    # Input b gains a column: the model's output gains it too.
    project.spark.sql(f"alter table {project.table('b')} add columns (b_w int)")
    project.spark.sql(f"insert into {project.table('b')} values ('2026-11-21', 4, 7, 70)")
    project.model("wide", config % "append_new_columns" + WIDE_BY_DAY.replace("'b': ['b_v']", "'b': ['b_v', 'b_w']"))
    run(project, "-s", "wide", "--vars", "ds: '2026-11-21'")
    columns = [row.col_name for row in project.spark.sql(f"describe {project.table('wide')}").collect()]
    assert columns[:5] == ["ds", "k", "a_v", "b_v", "b_w"], columns
    assert project.properties("wide")["dbt_multijoin.operator"] == "MultiJoin"
    assert project.rows(f"select ds, k, b_w from {project.table('wide')} where ds = '2026-11-21'") == Counter({("2026-11-21", 4, 70): 1})
    assert project.rows(f"select count(*) from {project.table('wide')} where b_w is null") == Counter({(written_before,): 1})

    before = project.rows("wide")
    project.model("wide", config % "fail" + WIDE_BY_DAY)  # b_w is gone from the model
    failed = project.dbt("run", "-s", "wide", "--vars", "ds: '2026-11-22'")
    assert not failed.success and "schema" in failed.messages["wide"].lower(), failed.describe()
    assert project.rows("wide") == before
