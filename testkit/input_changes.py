"""Random changes to the inputs of a changed_keys model, and the model's rows from scratch: what
the changed_keys property tests (pipeline_tests on the session target, tests/test_pipeline_thrift.py
on a Thrift server) apply between runs and compare with.

Three inputs, `id` (unique per input), a nullable key `k` from a small domain (duplicates and
NULL keys are common), payloads `v` and `w` (`w` NULL until a `shift` moves `v` into it, a change
that a row hash skipping NULLs would not see) and `updated_at`. Inputs `a` and `c` are tracked by
their `updated_at` column: they get inserts and in-place updates (a column cannot show a delete or
a key an update moved away from). Input `b` is read through its table's change feed (Delta's
change data feed, Iceberg's changelog) and also gets deletes and updates that move a key.

`updated_at` comes from a coarse clock, as a daily load's date or a load id does: it moves on only
when a batch says so (`advance`), so the rows written after a run often carry the very value the
run recorded as its mark: late rows of the mark's day, in-place updates stamped with the mark.
Input `c`'s `updated_at` is a string (`STAMP`: the clock's value inside text holding `*/` and both
quotes, in the clock's order), so its mark is such a string. A row written later with an OLDER
value than the mark is never generated: a column cannot show it (docs/dbt_package.md says so).
"""

from __future__ import annotations

import contextlib
import re
from typing import Callable, Iterator

from hypothesis import strategies as st

INPUTS = ["a", "b", "c"]
KEYS = st.one_of(st.none(), st.integers(0, 6))

insert = st.tuples(st.just("insert"), st.sampled_from(INPUTS), KEYS, st.integers(0, 99))
update = st.tuples(st.just("update"), st.sampled_from(INPUTS), st.integers(0, 50), st.integers(0, 99))
# v moves into w and v becomes NULL: (v, w) = (7, NULL) becomes (NULL, 7).
shift = st.tuples(st.just("shift"), st.sampled_from(INPUTS), st.integers(0, 50), st.just(0))
move = st.tuples(st.just("move"), st.just("b"), st.integers(0, 50), KEYS)
delete = st.tuples(st.just("delete"), st.just("b"), st.integers(0, 50), st.just(None))
advance = st.tuples(st.just("advance"), st.just("a"), st.just(0), st.just(0))
# Changes that tie the mark, pinned in an example of both properties: a run records updated_at
# 1000 as the mark, then inputs a and c get new rows by appends alone (on Delta the next run tells
# a's apart by its row tracking, and keeps c's rows at the mark in the appended files, with no
# read of the older version), all stamped 1000 (the clock has not moved on); then input c an
# in-place update and a row of a key it holds already, a row of c whose v moves into w, and
# in-place updates of a's and c's fourth rows (on Delta, a's told apart by its row tracking),
# stamped 1000 as well. With one row per key the fourth rows are the inputs' NULL-keyed ones, which
# a partial update replaces only when its changes hold one; otherwise they are rows of key 2.
TIES_AT_THE_MARK = [[("insert", "a", 3, 5), ("insert", "c", 4, 3)],
                    [("update", "c", 0, 9), ("insert", "c", 5, 1), ("shift", "c", 2, 0), ("update", "a", 3, 6), ("update", "c", 3, 4)]]
# A batch that writes no input and only moves the clock on, pinned in an example of both
# properties: the run after it finds no input's table moved, and reads and writes nothing.
ONLY_THE_CLOCK = [[("advance", "a", 0, 0)]]
# The MERGE's filter of the target's rows (_mj_replaced_rows_filter, set up by merge_filter): the
# changed keys' exact hashes, looked up by multijoin_hash_in (under the default limit, more keys
# than any test changes); the same hashes as an IN list, as in a session whose jar predates that
# function; or, above the project var dbt_multijoin_hash_list_limit (here 0), a bloom filter.
# An example's runs take them in turn from a drawn first one, so that every example of 3 runs
# or more, pinned ones included, goes through all three.
MERGE_FILTERS = ("exact", "in_list", "bloom")
# What a run's log says of each filter, after "... through ".
MERGE_FILTER_WORDS = {"exact": "the exact hashes", "in_list": "an IN list", "bloom": "a bloom filter"}
FIRST_MERGE_FILTER = st.integers(0, len(MERGE_FILTERS) - 1)


def nth_merge_filter(first: int, run: int) -> str:
    return MERGE_FILTERS[(first + run) % len(MERGE_FILTERS)]


BATCHES = st.lists(st.lists(st.one_of(insert, insert, update, shift, move, delete, advance), min_size=1, max_size=6), min_size=1, max_size=3)


def model_sql(feed_input: str = "b", one_row_per_key: bool = False, layout: str | None = None,
              **compaction: float) -> str:
    """The changed_keys model over inputs a, `feed_input` (read through its change feed) and c;
    with `one_row_per_key`, declared so (refreshed by partial updates); with `layout`, in that
    layout ('merge_on_read', with the `compaction` settings given: compaction_share,
    compaction_max_delta_rows, compaction_buckets, compaction_max_delta_files)."""
    names = ["a", feed_input, "c"]
    sources = ", ".join(f"source('inputs', '{name}')" for name in names)
    columns = ", ".join(f"'{name}': ['id', 'v', 'w']" for name in names)
    declared = (", one_row_per_key=true" if one_row_per_key else "") + (f", layout='{layout}'" if layout else "") \
        + "".join(f", {name}={value}" for name, value in compaction.items() if value is not None)
    return (
        f"{{{{ config(materialized='multijoin', incremental_strategy='changed_keys'{declared}) }}}}\n"
        f"{{{{ dbt_multijoin.multi_join([{sources}], key='k',\n"
        f"    columns={{{columns}}},\n"
        f"    changed_since={{'a': 'updated_at', '{feed_input}': 'change_feed', 'c': 'updated_at'}}) }}}}\n"
    )


def full_rebuild(schema: str, one_row_per_key: bool = False) -> str:
    """The same model's rows computed from scratch, by Spark's vanilla joins; with
    `one_row_per_key`, with the presence column of each input a partial-update model carries."""
    if not one_row_per_key:
        return (
            "select coalesce(a.k, b.k, c.k) as k, a.id as a_id, a.v as a_v, a.w as a_w, b.id as b_id, b.v as b_v, b.w as b_w, "
            "c.id as c_id, c.v as c_v, c.w as c_w "
            f"from {schema}.a as a full outer join {schema}.b as b on a.k = b.k "
            f"full outer join {schema}.c as c on coalesce(a.k, b.k) = c.k"
        )
    columns = ", ".join(f"{n}.id as {n}_id, {n}.v as {n}_v, {n}.w as {n}_w, {n}.present as dbt_multijoin_has_{n}" for n in INPUTS)
    tables = {n: f"(select *, true as present from {schema}.{n}) as {n}" for n in INPUTS}
    return (
        f"select coalesce(a.k, b.k, c.k) as k, {columns} "
        f"from {tables['a']} full outer join {tables['b']} on a.k = b.k "
        f"full outer join {tables['c']} on coalesce(a.k, b.k) = c.k"
    )


# Input c's updated_at: the clock's value in text that a SQL comment, a string literal or a
# quoted identifier would end at ('*/', both quotes, a backslash), in the clock's order.
STAMP = "load */ '\\\" {clock}"


class Inputs:
    """The three input tables; every write stamps updated_at with the clock. `execute` runs a statement
    and `query` returns a query's rows as tuples, in whatever session the test writes with."""

    def __init__(self, execute: Callable[[str], None], query: Callable[[str], list], schema: str,
                 table_format: str, one_row_per_key: bool = False):
        """With `one_row_per_key`, every input keeps at most one row per key: an insert of a key
        the input holds updates that row instead, and a move onto such a key is skipped."""
        self.query, self.schema = query, schema
        self.one_row_per_key = one_row_per_key
        # Statements written to the inputs so far: a batch of `advance` alone writes none, and the
        # run after it has no input to read (assert_merge_filter).
        self.writes = 0

        def write(sql: str) -> None:
            self.writes += 1
            execute(sql)

        self.execute = write
        self.clock = 1000
        self.next_id = 1
        for name in INPUTS:
            # Iceberg's changelog needs nothing switched on; Delta's change data feed does. On
            # Delta, input a tracks its rows: its ties at the mark are told apart by row tracking,
            # input c's by the compare with the version the last run read (source_column.sql).
            properties = {"b": " tblproperties ('delta.enableChangeDataFeed' = 'true')",
                          "a": " tblproperties ('delta.enableRowTracking' = 'true')"}.get(name, "") if table_format == "delta" else ""
            stamp_type = "string" if name == "c" else "bigint"
            execute(f"create table {schema}.{name} (id bigint, k int, v int, w int, updated_at {stamp_type}) using {table_format}{properties}")
            self.insert(name, [0, 1, 2, None] if one_row_per_key else [0, 1, 1, 2, None], 7)

    def stamp(self, name: str) -> str:
        """The clock's value as input `name`'s updated_at, a SQL literal: the same until the next
        `advance`."""
        if name != "c":
            return str(self.clock)
        text = STAMP.format(clock=self.clock)
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"

    def insert(self, name: str, keys, value: int) -> None:
        rows = []
        for key in keys if isinstance(keys, list) else [keys]:
            rows.append(f"({self.next_id}, {'null' if key is None else key}, {value}, null, {self.stamp(name)})")
            self.next_id += 1
        self.execute(f"insert into {self.schema}.{name} values {', '.join(rows)}")

    def holder(self, name: str, key):
        """With one_row_per_key, the id of the row of input `name` that holds `key`, or None."""
        if not self.one_row_per_key or key is None:
            return None
        rows = self.query(f"select id from {self.schema}.{name} where k = {key}")
        return rows[0][0] if rows else None

    def row_id(self, name: str, pick: int):
        ids = [row[0] for row in self.query(f"select id from {self.schema}.{name} order by id")]
        return ids[pick % len(ids)] if ids else None

    def apply(self, op) -> None:
        kind, name, arg, value = op
        if kind == "advance":
            self.clock += 1
            return
        if kind == "insert":
            held = self.holder(name, arg)
            if held is None:
                self.insert(name, arg, value)
            else:
                self.execute(f"update {self.schema}.{name} set v = {value}, updated_at = {self.stamp(name)} where id = {held}")
            return
        row = self.row_id(name, arg)
        if row is None:
            return
        table = f"{self.schema}.{name}"
        if kind == "update":
            self.execute(f"update {table} set v = {value}, updated_at = {self.stamp(name)} where id = {row}")
        elif kind == "shift":
            self.execute(f"update {table} set w = v, v = null, updated_at = {self.stamp(name)} where id = {row}")
        elif kind == "move":
            if self.holder(name, value) is not None:
                return
            key_sql = "null" if value is None else str(value)
            self.execute(f"update {table} set k = {key_sql}, updated_at = {self.stamp(name)} where id = {row}")
        elif kind == "delete":
            self.execute(f"delete from {table} where id = {row}")


@contextlib.contextmanager
def merge_filter(spark, kind: str) -> Iterator[int]:
    """A run whose MERGE filters its target by `kind` (MERGE_FILTERS): yields the
    dbt_multijoin_hash_list_limit to run it with. For "in_list", multijoin_hash_in is dropped from
    the session's function registry while the run lasts (a jar older than the function), and put
    back after."""
    limit = 0 if kind == "bloom" else 50000
    if kind != "in_list":
        yield limit
        return
    registry = spark._jsparkSession.sessionState().functionRegistry()
    name = spark._jvm.org.apache.spark.sql.catalyst.FunctionIdentifier("multijoin_hash_in")
    info, builder = registry.lookupFunction(name).get(), registry.lookupFunctionBuilder(name).get()
    registry.dropFunction(name)
    try:
        yield limit
    finally:
        registry.registerFunction(name, info, builder)


def assert_merge_filter(output: str, kind: str, wrote: bool) -> None:
    """A run that changed keys filtered the MERGE's target by `kind` (merge_filter), and said so.
    After a batch that wrote no input (`wrote` false: it only moved the clock on), no input's table
    moved: the run reads and writes nothing, and says so."""
    counts = [int(m.group(1)) for m in re.finditer(r": (\d+) changed keys", output)]
    if not wrote:
        assert "no input changed since the last run: nothing to read or write" in output, output
        assert not counts and "the MERGE reads the target" not in output, output
        return
    assert counts, output
    for each, words in MERGE_FILTER_WORDS.items():
        assert (f"the MERGE reads the target through {words}" in output) == (counts[-1] > 0 and each == kind), output
