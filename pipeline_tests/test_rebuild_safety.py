"""A build that fails while Spark writes leaves the previous table exactly as it was, for every
way the materialization writes: a full build of a parquet table (staging + swap) or of a
Delta/Iceberg table (CREATE OR REPLACE), and the incremental strategies. The failure is real: an
input row that makes `assert_true` fail inside the running query. The cases are models over the
same inputs in one project, built, failed and rebuilt by the same three dbt runs (a dbt project
per case cost the pipeline runs two minutes each on 2 cores)."""

from __future__ import annotations

import pytest

def model_sql(config: str) -> str:
    # A row with a_v >= 1000 fails the query at run time, in the middle of the write.
    changed_since = ", changed_since='updated_at'" if "changed_keys" in config else ""
    multi_join = (
        "{{ dbt_multijoin.multi_join([source('inputs', 'a'), source('inputs', 'b')], key='k', "
        f"columns={{'a': ['a_v'], 'b': ['b_v']}}{changed_since}) }}}}"
    )
    # In the select list, not a WHERE: a filter on a payload column cannot be pushed below a
    # LEFT join, and would stand inside the driven chain of a changed-keys run.
    return (
        f"{{{{ config(materialized='multijoin', {config}) }}}}\n"
        f"select joined.*, assert_true(a_v is null or a_v < 1000) is null as checked from (\n{multi_join}\n) as joined\n"
    )


def make_inputs(project, table_format: str) -> None:
    for name, column, stride in [("a", "a_v", 1), ("b", "b_v", 2)]:
        project.spark.sql(
            f"create table {project.table(name)} using {table_format} as "
            f"select cast(id * {stride} as int) as k, cast(id as int) as {column}, cast(1 as bigint) as updated_at from range(40)"
        )
    project.sources("a", "b")


CASES = {
    "parquet full build": "file_format='parquet'",
    "format full build": "strategy='multiway'",
    "parquet append": "file_format='parquet', incremental_strategy='append'",
    "format merge": "incremental_strategy='merge', unique_key='k'",
    "format changed_keys": "incremental_strategy='changed_keys'",
}


def _model(case: str) -> str:
    return "wide_" + case.replace(" ", "_")


@pytest.fixture(scope="module")
def runs(spark, table_format, tmp_path_factory) -> dict:
    """Every case is a model over the same two inputs, in one project: one `dbt run` builds them
    all, one fails them all (a poisoned input row), one after the fix rebuilds them all. Per
    model: its rows after each run, its properties after the first; and the runs themselves and
    the tables left at the end."""
    from testkit.dbt import PipelineProject

    project = PipelineProject.create(spark, tmp_path_factory.mktemp("rebuild-safety"), table_format)
    make_inputs(project, table_format)
    for case, config in CASES.items():
        project.model(_model(case), model_sql(config))
    first = project.dbt("run")
    before = {case: project.rows(_model(case)) for case in CASES}
    properties = {case: project.properties(_model(case)) for case in CASES if project.exists(_model(case))}
    first_commits = commits(project, _model("format full build"), table_format)

    # New input rows, one of them poisoned: the next run fails while it writes.
    project.spark.sql(f"insert into {project.table('a')} values (1001, 5000, 2), (1002, 7, 2)")
    project.spark.sql(f"insert into {project.table('b')} values (1001, 9, 2)")
    failed = project.dbt("run")
    after_failure = {case: project.rows(_model(case)) if project.exists(_model(case)) else None for case in CASES}

    # Fixed input: the next run succeeds and leaves no staging, backup or key table behind.
    project.spark.sql(f"delete from {project.table('a')} where k = 1001")
    fixed = project.dbt("run")
    return dict(first=first, before=before, properties=properties, failed=failed,
                after_failure=after_failure, fixed=fixed, tables=project.tables(),
                after={case: project.rows(_model(case)) for case in CASES},
                format_full_build_commits=(first_commits, commits(project, _model("format full build"), table_format)))


def commits(project, model: str, table_format: str) -> set:
    """The commits of the table's history: Delta's (version, timestamp), Iceberg's snapshot ids."""
    table = project.table(model)
    if table_format == "delta":
        return {(row.version, row.timestamp) for row in project.spark.sql(f"describe history {table}").collect()}
    return {row[0] for row in project.spark.sql(f"select snapshot_id from {table}.snapshots").collect()}


@pytest.mark.parametrize("case", CASES)
def test_failed_build_keeps_the_previous_table(runs, case):
    model = _model(case)
    assert runs["first"].status(model) == "success", runs["first"].describe()
    before = runs["before"][case]
    assert len(before) == 60
    assert runs["properties"][case]["dbt_multijoin.operator"] == "MultiJoin"

    failed = runs["failed"]
    assert failed.status(model) == "error", failed.describe()
    assert "is not true" in failed.message(model), failed.describe()
    assert runs["after_failure"][case] == before  # None: the table is gone

    fixed = runs["fixed"]
    assert fixed.status(model) == "success", fixed.describe()
    assert runs["tables"] == {"a", "b", *map(_model, CASES)}
    after = runs["after"][case]
    assert (1002, 7, None, True) in after and (1001, None, 9, True) in after


def test_a_format_full_build_replaces_the_table_and_keeps_its_history(runs):
    """A Delta or Iceberg table is rebuilt by CREATE OR REPLACE: new commits of the same table, its
    history kept (time travel, and a changed_keys reader's recorded version, still reach the
    build before), not a new table swapped in by renames. dbt-spark lists an Iceberg table of the
    session catalog as "Provider: hive"; the materialization still knows it for one."""
    first, last = runs["format_full_build_commits"]
    assert first < last, (first, last)
