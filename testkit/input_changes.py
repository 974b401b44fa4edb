"""Random changes to the inputs of a changed_keys model, and the model's rows from scratch: what
the changed_keys property tests (pipeline_tests on the session target, tests/test_pipeline_thrift.py
on a Thrift server) apply between runs and compare with.

Three inputs, `id` (unique per input), a nullable key `k` from a small domain (duplicates and
NULL keys are common), a payload `v` and `updated_at`. Inputs `a` and `c` are tracked by their
`updated_at` column: they get inserts and in-place updates (a column cannot show a delete or a key
an update moved away from). Input `b` is read through its table's change feed (Delta's change data
feed, Iceberg's changelog) and also gets deletes and updates that move a key.
"""

from __future__ import annotations

from typing import Callable

from hypothesis import strategies as st

INPUTS = ["a", "b", "c"]
KEYS = st.one_of(st.none(), st.integers(0, 6))

insert = st.tuples(st.just("insert"), st.sampled_from(INPUTS), KEYS, st.integers(0, 99))
update = st.tuples(st.just("update"), st.sampled_from(INPUTS), st.integers(0, 50), st.integers(0, 99))
move = st.tuples(st.just("move"), st.just("b"), st.integers(0, 50), KEYS)
delete = st.tuples(st.just("delete"), st.just("b"), st.integers(0, 50), st.just(None))
BATCHES = st.lists(st.lists(st.one_of(insert, insert, update, move, delete), min_size=1, max_size=6), min_size=1, max_size=3)


def model_sql(feed_input: str = "b") -> str:
    """The changed_keys model over inputs a, `feed_input` (read through its change feed) and c."""
    names = ["a", feed_input, "c"]
    sources = ", ".join(f"source('inputs', '{name}')" for name in names)
    columns = ", ".join(f"'{name}': ['id', 'v']" for name in names)
    return (
        "{{ config(materialized='multijoin', incremental_strategy='changed_keys') }}\n"
        f"{{{{ dbt_multijoin.multi_join([{sources}], key='k',\n"
        f"    columns={{{columns}}},\n"
        f"    changed_since={{'a': 'updated_at', '{feed_input}': 'change_feed', 'c': 'updated_at'}}) }}}}\n"
    )


def full_rebuild(schema: str) -> str:
    """The same model's rows computed from scratch, by Spark's vanilla joins."""
    return (
        "select coalesce(a.k, b.k, c.k) as k, a.id as a_id, a.v as a_v, b.id as b_id, b.v as b_v, c.id as c_id, c.v as c_v "
        f"from {schema}.a as a full outer join {schema}.b as b on a.k = b.k "
        f"full outer join {schema}.c as c on coalesce(a.k, b.k) = c.k"
    )


class Inputs:
    """The three input tables; every write stamps a fresh updated_at. `execute` runs a statement
    and `query` returns a query's rows as tuples, in whatever session the test writes with."""

    def __init__(self, execute: Callable[[str], None], query: Callable[[str], list], schema: str,
                 table_format: str):
        self.execute, self.query, self.schema = execute, query, schema
        self.clock = 1000
        self.next_id = 1
        for name in INPUTS:
            # Iceberg's changelog needs nothing switched on; Delta's change data feed does.
            feed = name == "b" and table_format == "delta"
            properties = " tblproperties ('delta.enableChangeDataFeed' = 'true')" if feed else ""
            execute(f"create table {schema}.{name} (id bigint, k int, v int, updated_at bigint) using {table_format}{properties}")
            self.insert(name, [0, 1, 1, 2, None], 7)

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    def insert(self, name: str, keys, value: int) -> None:
        rows = []
        for key in keys if isinstance(keys, list) else [keys]:
            rows.append(f"({self.next_id}, {'null' if key is None else key}, {value}, {self.tick()})")
            self.next_id += 1
        self.execute(f"insert into {self.schema}.{name} values {', '.join(rows)}")

    def row_id(self, name: str, pick: int):
        ids = [row[0] for row in self.query(f"select id from {self.schema}.{name} order by id")]
        return ids[pick % len(ids)] if ids else None

    def apply(self, op) -> None:
        kind, name, arg, value = op
        if kind == "insert":
            self.insert(name, arg, value)
            return
        row = self.row_id(name, arg)
        if row is None:
            return
        table = f"{self.schema}.{name}"
        if kind == "update":
            self.execute(f"update {table} set v = {value}, updated_at = {self.tick()} where id = {row}")
        elif kind == "move":
            key_sql = "null" if value is None else str(value)
            self.execute(f"update {table} set k = {key_sql}, updated_at = {self.tick()} where id = {row}")
        elif kind == "delete":
            self.execute(f"delete from {table} where id = {row}")
