"""changed_keys over keys of every kind: the MERGE's target filter (a key's hash bucket among the
changed keys' buckets) must never drop a row the MERGE replaces, and is only used where equal
keys hash alike. Each case builds the model, changes rows of both inputs (new keys, updated
rows, NULL keys), refreshes, and compares the table with a vanilla full rebuild; and checks from
the MERGE dbt ran whether the filter was in it.
"""

from __future__ import annotations

import pytest

# name -> (key columns, their type in a, in b, key values (None: NULL), whether the MERGE may
# filter the target by hash bucket)
CASES = {
    "int and bigint inputs": (["k"], ["int"], ["bigint"], ["1", "2", "-3", "40"], True),
    "string": (["k"], ["string"], ["string"], ["'x'", "'y'", "''", "'Z z'"], True),
    "decimal": (["k"], ["decimal(10,2)"], ["decimal(10,2)"], ["1.10", "2.00", "-3.50", "0.01"], True),
    "timestamp": (["k"], ["timestamp"], ["timestamp"],
                  ["timestamp'2024-01-01 00:00:00'", "timestamp'2024-01-01 00:00:01'", "timestamp'1999-12-31 23:59:59'", "timestamp'2030-06-15 12:00:00'"], True),
    # -0.0 = 0.0 but their bytes (and hashes) differ: no filter.
    "double with -0.0": (["k"], ["double"], ["double"], ["0.0", "-0.0", "1.5", "-2.25"], False),
    "composite string and int": (["k1", "k2"], ["string", "int"], ["string", "int"],
                                 ["'x', 1", "'x', 2", "'y', 1", "'', 0"], True),
}


def _key_values(value: str | None, width: int) -> str:
    return ", ".join(["null"] * width) if value is None else value


class Input:
    def __init__(self, project, name: str, keys: list[str], types: list[str]):
        self.spark, self.table, self.width = project.spark, project.table(name), len(keys)
        columns = ", ".join(f"{k} {t}" for k, t in zip(keys, types))
        self.spark.sql(f"create table {self.table} (id bigint, {columns}, v int, updated_at bigint) using {project.table_format}")

    def insert(self, rows: list[tuple[int, str | None, int, int]]) -> None:
        values = ", ".join(f"({i}, {_key_values(key, self.width)}, {v}, {at})" for i, key, v, at in rows)
        self.spark.sql(f"insert into {self.table} values {values}")


@pytest.mark.parametrize("case", CASES)
def test_changed_keys_by_key_type(project, case):
    keys, a_types, b_types, values, filtered = CASES[case]
    a = Input(project, "a", keys, a_types)
    b = Input(project, "b", keys, b_types)
    first, second, third, fourth = values
    a.insert([(1, first, 10, 1), (2, second, 20, 1), (3, None, 30, 1), (4, first, 40, 1)])
    b.insert([(1, second, 11, 1), (2, third, 21, 1), (3, None, 31, 1)])
    project.sources("a", "b")
    key = repr(keys[0]) if len(keys) == 1 else repr(keys)
    project.model("wide", (
        "{{ config(materialized='multijoin', incremental_strategy='changed_keys') }}\n"
        "{{ dbt_multijoin.multi_join([source('inputs', 'a'), source('inputs', 'b')], key=" + key + ",\n"
        "    columns={'a': ['id', 'v'], 'b': ['id', 'v']}, changed_since='updated_at') }}\n"
    ))
    assert_equals_full_rebuild(project, keys, project.dbt("run", "-s", "wide"))

    # A changed row of an existing key, a new key, a NULL key, and a key only b had gains an a row.
    project.spark.sql(f"update {a.table} set v = v + 100, updated_at = 2 where id = 2")
    a.insert([(5, fourth, 50, 2), (6, None, 60, 2), (7, third, 70, 2)])
    b.insert([(4, first, 41, 2)])
    run = project.dbt("run", "-s", "wide")
    assert_equals_full_rebuild(project, keys, run)
    merge = (project.root / "target" / "run" / "pipelines" / "models" / "wide.sql").read_text()
    assert merge.lstrip().lower().startswith("merge into")
    assert ("xxhash64" in merge) == filtered, merge[:2000]


def assert_equals_full_rebuild(project, keys: list[str], run) -> None:
    assert run.success, run.describe()
    on = " and ".join(f"a.{k} = b.{k}" for k in keys)
    key_columns = ", ".join(f"coalesce(a.{k}, b.{k}) as {k}" for k in keys)
    expected = project.rows(
        f"select {key_columns}, a.id as a_id, a.v as a_v, b.id as b_id, b.v as b_v "
        f"from {project.table('a')} as a full outer join {project.table('b')} as b on {on}"
    )
    built = project.rows("wide")
    assert built == expected, f"missing: {expected - built}, extra: {built - expected}"
