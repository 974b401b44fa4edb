"""The SQL of the package's generic tests that compare rows, against what it must find, on generated
data: multijoin_row_count over the vanilla FULL OUTER chain of the inputs (nothing) and over that
output with a row left out or doubled (one row: expected against actual),
multijoin_keys_preserved over that output with a key left out (every input row of that key, NULL
parts compared null-safe), multijoin_equal_rowsets between a rowset and a perturbed copy (every
surplus row, as often as it is in surplus, and its side). Inputs with composite keys, NULL key
parts (in several inputs at once), duplicate keys, empty inputs, NaN and -0.0.

The macros render in plain Jinja (testkit/macros.py): no dbt, so that many examples cost seconds. The dbt
integration project runs the same tests through dbt, on models that violate them on purpose
(tests/test_dbt_integration.py).
"""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testkit.macros import macro_package
from testkit.properties import examples

# The macro files the tests call into: their own and the helpers they use.
MACRO_FILES = ("generic_tests/multijoin_row_count.sql", "generic_tests/multijoin_equal_rowsets.sql",
               "generic_tests/multijoin_keys_preserved.sql", "internal/_quoting.sql", "internal/_spec.sql")


@pytest.fixture(scope="module")
def package(spark):
    """The macros, dbt's adapter stood in for by one that reads a relation's columns from `spark`."""
    adapter = SimpleNamespace(get_columns_in_relation=lambda relation: [
        SimpleNamespace(name=field.name) for field in spark.table(str(relation)).schema.fields])
    return macro_package(MACRO_FILES, adapter=adapter, execute=True)


@pytest.fixture(autouse=True)
def _drop_views(spark):
    """The suite shares one session: the temporary views of these tests end with each test."""
    yield
    for view in ("t1", "t2", "t3", "model_output", "model_rows", "compare_rows"):
        spark.catalog.dropTempView(view)


KEYS = ["region_id", "device_id"]


@st.composite
def inputs(draw):
    """1-3 inputs: a composite key (int, string), both parts nullable, few distinct values so that
    keys repeat within and across inputs; a double payload with NaN and -0.0."""
    key_part = st.tuples(st.sampled_from([None, 1, 2, 3]), st.sampled_from([None, "a", "b"]))
    value = st.sampled_from([None, 0.0, -0.0, 1.5, float("nan")])
    return [draw(st.lists(st.tuples(key_part, value), max_size=7)) for _ in range(draw(st.integers(1, 3)))]


def _register(spark, name: str, rows, schema: str) -> None:
    spark.createDataFrame(rows, schema).createOrReplaceTempView(name)


def _register_inputs(spark, tables) -> list[str]:
    """Each input as the temporary view t<i>; their names."""
    for index, rows in enumerate(tables, start=1):
        _register(spark, f"t{index}", [(r, d, v) for (r, d), v in rows], "region_id int, device_id string, v double")
    return [f"t{index}" for index in range(1, len(tables) + 1)]


def _vanilla_full_chain(count: int) -> str:
    """The FULL OUTER chain of t1..t<count> on the composite key, each key part coalesced over the
    inputs joined before (the multi-join's semantics)."""
    sql = "select coalesce({}) as region_id, coalesce({}) as device_id from t1".format(
        ", ".join(f"t{i}.region_id" for i in range(1, count + 1)), ", ".join(f"t{i}.device_id" for i in range(1, count + 1)))
    for i in range(2, count + 1):
        before = range(1, i)
        sql += (f" full outer join t{i} on coalesce({', '.join(f't{j}.region_id' for j in before)}) = t{i}.region_id"
                f" and coalesce({', '.join(f't{j}.device_id' for j in before)}) = t{i}.device_id")
    return sql


@settings(max_examples=examples(1 / 16))
@given(tables=inputs(), tamper=st.sampled_from(["none", "drop", "double"]))
def test_row_count_finds_exactly_a_wrong_count(spark, package, tables, tamper):
    names = _register_inputs(spark, tables)
    output = spark.sql(_vanilla_full_chain(len(tables))).collect()
    expected = len(output)
    if tamper == "drop":
        output = output[1:]
    elif tamper == "double":
        output = output + output[:1]
    _register(spark, "model_output", [tuple(row) for row in output], "region_id int, device_id string")
    sql = package.default__test_multijoin_row_count("model_output", names, KEYS)
    found = [tuple(row) for row in spark.sql(sql).collect()]
    assert found == ([] if len(output) == expected else [(expected, len(output))]), (sql, found)


@settings(max_examples=examples(1 / 16))
@given(tables=inputs(), data=st.data())
def test_keys_preserved_finds_every_input_row_of_a_missing_key(spark, package, tables, data):
    names = _register_inputs(spark, tables)
    output = [tuple(row) for row in spark.sql(_vanilla_full_chain(len(tables))).collect()]
    lost = data.draw(st.sampled_from(sorted(set(output), key=repr))) if output and data.draw(st.booleans()) else None
    kept = [row for row in output if row != lost]
    _register(spark, "model_output", kept, "region_id int, device_id string")
    sql = package.default__test_multijoin_keys_preserved("model_output", names, KEYS)
    found = Counter(tuple(row) for row in spark.sql(sql).collect())
    expected = Counter((index, r, d) for index, rows in enumerate(tables, start=1) for (r, d), _ in rows if (r, d) == lost)
    assert found == expected, (sql, found, expected)


def _normalized(row) -> tuple:
    """A row as a multiset element: NaN equal to NaN, -0.0 to 0.0 (as Spark's grouping does)."""
    return tuple("NaN" if isinstance(v, float) and v != v else (0.0 if v == 0.0 and isinstance(v, float) else v) for v in row)


@settings(max_examples=examples(1 / 10))
@given(tables=inputs(), data=st.data())
def test_equal_rowsets_finds_every_surplus_row(spark, package, tables, data):
    rows = [(r, d, v) for (r, d), v in tables[0]]
    # The compare side: some of those rows, in another order, and a few of them again.
    other = []
    if rows:
        kept = data.draw(st.permutations(rows))[: data.draw(st.integers(0, len(rows)))]
        other = kept + data.draw(st.lists(st.sampled_from(rows), max_size=3))
    extra = [(r, d, v) for (r, d), v in (tables[1] if len(tables) > 1 else [])]
    _register(spark, "model_rows", rows + extra, "region_id int, device_id string, v double")
    _register(spark, "compare_rows", other, "region_id int, device_id string, v double")
    sql = package.default__test_multijoin_equal_rowsets("model_rows", "compare_rows", ["region_id", "device_id", "v"])
    found = Counter((row[0], _normalized(row[1:])) for row in spark.sql(sql).collect())
    model, compare = Counter(map(_normalized, rows + extra)), Counter(map(_normalized, other))
    expected = Counter({("only in model", row): n for row, n in (model - compare).items()})
    expected.update({("only in compare_model", row): n for row, n in (compare - model).items()})
    assert found == expected, (sql, found, expected)
