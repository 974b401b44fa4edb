"""A build that fails while Spark writes leaves the previous table exactly as it was, for every
way the materialization writes: a full build of a parquet table (staging + swap) or of a
Delta/Iceberg table (CREATE OR REPLACE), and the incremental strategies. The failure is real: an
input row that makes `assert_true` fail inside the running query."""

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


@pytest.mark.parametrize("case", CASES)
def test_failed_build_keeps_the_previous_table(project, table_format, case):
    config = CASES[case]
    make_inputs(project, table_format)
    project.model("wide", model_sql(config))
    first = project.dbt("run", "-s", "wide")
    assert first.success, first.describe()
    before = project.rows("wide")
    assert len(before) == 60
    properties = project.properties("wide")
    assert properties["dbt_multijoin.operator"] == "MultiJoin"

    # New input rows, one of them poisoned: the next run fails while it writes.
    project.spark.sql(f"insert into {project.table('a')} values (1001, 5000, 2), (1002, 7, 2)")
    project.spark.sql(f"insert into {project.table('b')} values (1001, 9, 2)")
    failed = project.dbt("run", "-s", "wide")
    assert not failed.success
    assert "is not true" in failed.messages["wide"], failed.describe()
    assert project.exists("wide")
    assert project.rows("wide") == before

    # Fixed input: the next run succeeds and leaves no staging, backup or key table behind.
    project.spark.sql(f"delete from {project.table('a')} where k = 1001")
    fixed = project.dbt("run", "-s", "wide")
    assert fixed.success, fixed.describe()
    assert project.tables() == {"a", "b", "wide"}
    after = project.rows("wide")
    assert (1002, 7, None, True) in after and (1001, None, 9, True) in after
