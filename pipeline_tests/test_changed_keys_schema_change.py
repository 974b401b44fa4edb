"""on_schema_change for changed_keys (macros/changed_keys/schema_change.sql), on both paths:
'append_new_columns' adds a column an input brings and fills it from that input, read in full
once; 'sync_all_columns' also drops a column the model no longer has (Iceberg; a Delta table
without column mapping refuses, and the run says so); 'fail' stops the run and leaves the table.
After every successful run the table equals a full rebuild of the model."""

from __future__ import annotations

import pytest

PATHS = ["recompute", "partial_update"]


def model(path: str, setting: str, columns: str) -> str:
    declared = ", one_row_per_key=true" if path == "partial_update" else ""
    return (
        f"{{{{ config(materialized='multijoin', incremental_strategy='changed_keys', on_schema_change='{setting}'{declared}) }}}}\n"
        "{{ dbt_multijoin.multi_join([source('inputs', 'a'), source('inputs', 'b')], key='k',\n"
        f"    columns={columns}, changed_since='load') }}}}\n"
    )


def full_rebuild(project, path: str, a_columns: list[str], b_columns: list[str]) -> str:
    """The model's rows from scratch; with the presence columns of a partial-update table."""
    presence = path == "partial_update"
    items = [f"a.{c}" for c in a_columns] + (["a.k is not null or null"] if presence else [])
    items += [f"b.{c}" for c in b_columns] + (["b.k is not null or null"] if presence else [])
    return (f"select coalesce(a.k, b.k) as k, {', '.join(items)} from {project.table('a')} as a "
            f"full outer join {project.table('b')} as b on a.k = b.k")


def make_inputs(project, table_format: str) -> None:
    """a: 40 keys, b: 40 even keys, both loaded once (load = 1)."""
    project.spark.sql(f"create table {project.table('a')} using {table_format} as "
                      "select cast(id as int) as k, cast(id as int) as a_v, 1 as load from range(40)")
    project.spark.sql(f"create table {project.table('b')} using {table_format} as "
                      "select cast(id * 2 as int) as k, cast(id as int) as b_v, cast(id as int) as b_w, 1 as load from range(40)")
    project.sources("a", "b")


def columns_of(project, name: str) -> list[str]:
    return [c.name for c in project.spark.catalog.listColumns(name, project.schema)]


@pytest.mark.parametrize("path", PATHS)
def test_append_new_columns_fills_the_new_column_from_its_input(project, table_format, path):
    make_inputs(project, table_format)
    # Every column of a (a_v, load, and later a_extra), b's b_v.
    project.model("wide", model(path, "append_new_columns", "{'b': ['b_v']}"))
    assert (built := project.dbt("run")).success, built.describe()

    # a gains a column, filled in every row, its load unchanged: only a full read of a fills it.
    project.spark.sql(f"alter table {project.table('a')} add columns (a_extra int)")
    project.spark.sql(f"update {project.table('a')} set a_extra = k * 3")
    run = project.dbt("run")
    assert run.success, run.describe()
    assert "on_schema_change 'append_new_columns'" in run.output and "read whole once: it brings column a_extra" in run.output, run.output
    # The new column comes last in the table: read in the model's order.
    presence = path == "partial_update"
    columns = "k, a_v, load, a_extra" + (", dbt_multijoin_has_a" if presence else "") + ", b_v" + (", dbt_multijoin_has_b" if presence else "")
    assert project.rows(f"select {columns} from {project.table('wide')}") == \
        project.rows(full_rebuild(project, path, ["a_v", "load", "a_extra"], ["b_v"]))
    assert not [key for key in project.properties("wide") if key.startswith("dbt_multijoin.refill.")]


@pytest.mark.parametrize("path", PATHS)
def test_sync_all_columns_drops_a_column_the_model_lost(project, table_format, path):
    make_inputs(project, table_format)
    project.model("wide", model(path, "sync_all_columns", "{'a': ['a_v'], 'b': ['b_v', 'b_w']}"))
    assert (built := project.dbt("run")).success, built.describe()
    before = project.rows("wide")

    project.model("wide", model(path, "sync_all_columns", "{'a': ['a_v'], 'b': ['b_v']}"))
    project.spark.sql(f"update {project.table('b')} set b_v = b_v + 100, load = 2 where k < 10")
    run = project.dbt("run")
    if table_format == "delta":
        assert not run.success
        message = run.messages["wide"]
        assert "b_w" in message and "delta.columnMapping.mode" in message and "--full-refresh" in message, message
        assert project.rows("wide") == before
        return
    assert run.success, run.describe()
    assert "b_w" not in columns_of(project, "wide")
    assert project.rows("wide") == project.rows(full_rebuild(project, path, ["a_v"], ["b_v"]))


def test_fail_stops_the_run_and_keeps_the_table(project, table_format):
    make_inputs(project, table_format)
    project.model("wide", model("recompute", "fail", "{'a': ['a_v'], 'b': ['b_v', 'b_w']}"))
    assert (built := project.dbt("run")).success, built.describe()
    before = project.rows("wide")
    project.model("wide", model("recompute", "fail", "{'a': ['a_v'], 'b': ['b_v']}"))
    run = project.dbt("run")
    assert not run.success
    message = run.messages["wide"]
    assert "b_w" in message and "on_schema_change 'fail'" in message and "--full-refresh" in message, message
    assert project.rows("wide") == before
    assert "b_w" in columns_of(project, "wide")
