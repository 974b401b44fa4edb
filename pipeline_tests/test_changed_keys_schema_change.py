"""on_schema_change for changed_keys (macros/changed_keys/schema_change.sql), on both paths:
'append_new_columns' adds a column an input brings and fills it from that input, read in full
once; 'sync_all_columns' drops a column the model no longer has by building the whole table;
'fail' stops the run and leaves the table.
After every successful run the table equals a full rebuild of the model.

The cases are models over the same two inputs in one project, built by one `dbt run` and changed
and refreshed by a second (a project per case would cost the pipeline runs minutes)."""

from __future__ import annotations

import pytest

PATHS = ["recompute", "partial_update"]
# Each case: its on_schema_change, its `columns` before and after the change.
CASES = {
    "append": ("append_new_columns", "{'b': ['b_v']}", "{'b': ['b_v']}"),
    "sync": ("sync_all_columns", "{'a': ['a_v'], 'b': ['b_v', 'b_w']}", "{'a': ['a_v'], 'b': ['b_v']}"),
    "fail": ("fail", "{'a': ['a_v'], 'b': ['b_v', 'b_w']}", "{'a': ['a_v'], 'b': ['b_v']}"),
}


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


def name(case: str, path: str) -> str:
    return f"{case}_{path}"


@pytest.fixture(scope="module")
def runs(spark, table_format, tmp_path_factory) -> dict:
    """Inputs a (40 keys: a_v, load) and b (40 even keys: b_v, b_w, load), loaded once (load =
    1); a model per case and path, built; then a gains a column filled in every row (its load
    unchanged: only a full read of a fills it), 10 rows of b a new load, and the models of the
    sync and fail cases drop b_w; the second run."""
    from testkit.dbt import PipelineProject

    project = PipelineProject.create(spark, tmp_path_factory.mktemp("schema-change"), table_format)
    spark.sql(f"create table {project.table('a')} using {table_format} as "
              "select cast(id as int) as k, cast(id as int) as a_v, 1 as load from range(40)")
    spark.sql(f"create table {project.table('b')} using {table_format} as "
              "select cast(id * 2 as int) as k, cast(id as int) as b_v, cast(id as int) as b_w, 1 as load from range(40)")
    project.sources("a", "b")
    for case, (setting, before, _) in CASES.items():
        for path in (PATHS if case != "fail" else ["recompute"]):
            project.model(name(case, path), model(path, setting, before))
    built = project.dbt("run")
    assert built.success, built.describe()
    before = {model: project.rows(model) for model in built.statuses}

    spark.sql(f"alter table {project.table('a')} add columns (a_extra int)")
    spark.sql(f"update {project.table('a')} set a_extra = k * 3")
    spark.sql(f"update {project.table('b')} set b_v = b_v + 100, load = 2 where k < 10")
    for case, (setting, _, after) in CASES.items():
        for path in (PATHS if case != "fail" else ["recompute"]):
            project.model(name(case, path), model(path, setting, after))
    return {"project": project, "before": before, "changed": project.dbt("run")}


def columns_of(project, model: str) -> list[str]:
    return [c.name for c in project.spark.catalog.listColumns(f"{project.schema}.{model}")]


@pytest.mark.parametrize("path", PATHS)
def test_append_new_columns_fills_the_new_column_from_its_input(runs, path):
    project, run, model = runs["project"], runs["changed"], name("append", path)
    assert run.status(model) == "success", run.describe()
    assert f"dbt_multijoin: {model}: " in run.output and "read whole once: it brings column a_extra" in run.output, run.output
    # The new column comes last in the table: read in the model's order.
    presence = path == "partial_update"
    columns = "k, a_v, load, a_extra" + (", dbt_multijoin_has_a" if presence else "") + ", b_v" + (", dbt_multijoin_has_b" if presence else "")
    assert project.rows(f"select {columns} from {project.table(model)}") == \
        project.rows(full_rebuild(project, path, ["a_v", "load", "a_extra"], ["b_v"]))
    assert not [key for key in project.properties(model) if key.startswith("dbt_multijoin.refill.")]


@pytest.mark.parametrize("path", PATHS)
def test_sync_all_columns_drops_a_column_the_model_lost(runs, path):
    project, run, model = runs["project"], runs["changed"], name("sync", path)
    assert run.status(model) == "success", run.describe()
    assert f"dbt_multijoin: {model}: building the whole table: on_schema_change sync_all_columns drops b_w" in run.output, run.output
    assert "b_w" not in columns_of(project, model)
    assert project.rows(model) == project.rows(full_rebuild(project, path, ["a_v"], ["b_v"]))


def test_fail_stops_the_run_and_keeps_the_table(runs):
    project, run, model = runs["project"], runs["changed"], name("fail", "recompute")
    assert run.status(model) == "error", run.describe()
    message = run.message(model)
    assert "b_w" in message and "on_schema_change 'fail'" in message and "--full-refresh" in message, message
    assert project.rows(model) == runs["before"][model]
    assert "b_w" in columns_of(project, model)
