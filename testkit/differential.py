"""What the differential tests share: generated inputs, the FULL chain over them in its three
spellings (written by testkit.chains), and the comparison of a hinted query's rows with vanilla
Spark's as multisets.

The inputs are registered as temporary views t1..tN built by `testkit.frames.local_frame`, so
reading them costs the JVM alone.
"""

from __future__ import annotations

import datetime
import math
from collections import Counter
from decimal import Decimal

from hypothesis import strategies as st

from testkit.chains import join_chain_sql
from testkit.frames import local_frame
from testkit.plans import uses_multijoin

SPELLINGS = ["flat", "nested", "using"]

# A small pool per type, so that keys collide across inputs and repeat within one.
KEY_POOLS = {
    "TINYINT": [0, 1, 2, 3, -7],
    "SMALLINT": [0, 1, 2, 3, -300],
    "INT": [0, 1, 2, 3, -7],
    "BIGINT": [0, 1, 2, 3, 2**40],
    "STRING": ["", "a", "b", "ab", "é"],
    "DECIMAL(10,2)": [Decimal("0.00"), Decimal("1.00"), Decimal("1.50"), Decimal("-2.25"), Decimal("3.00")],
    "DATE": [datetime.date(2024, 1, d) for d in (1, 2, 3, 29, 31)],
    "TIMESTAMP": [datetime.datetime(2024, 1, 1, h, m) for h, m in ((0, 0), (0, 1), (9, 30), (23, 59))],
    "DOUBLE": [0.0, -0.0, 1.0, 1.5, float("nan"), float("inf"), 3.0],
}
# Families of types that Spark widens into each other exactly (no two keys become equal, none
# becomes null), so they may meet on one key through the chain's implicit casts. BIGINT with
# DOUBLE is not one: it falls back (see test_operator_fallbacks.py).
MIXABLE_TYPES = [["TINYINT", "SMALLINT", "INT", "BIGINT", "DECIMAL(10,2)"], ["INT", "DOUBLE"]]

@st.composite
def typed_inputs(draw, n: int):
    """Key types per input and key column, and each input's rows: (key columns..., value)."""
    arity = draw(st.sampled_from([1, 1, 2]))
    if draw(st.booleans()):
        # Mixed: each input may have its own type per key column, within one family.
        families = [draw(st.sampled_from(MIXABLE_TYPES)) for _ in range(arity)]
        types = [[draw(st.sampled_from(family)) for family in families] for _ in range(n)]
    else:
        shared = [draw(st.sampled_from(list(KEY_POOLS))) for _ in range(arity)]
        types = [list(shared) for _ in range(n)]
    inputs = []
    for i in range(n):
        key_columns = [st.one_of(st.none(), st.sampled_from(KEY_POOLS[t])) for t in types[i]]
        row = st.tuples(*key_columns, st.integers(-5, 5))
        inputs.append(draw(st.lists(row, min_size=0, max_size=draw(st.sampled_from([0, 1, 4, 8])))))
    return types, inputs



def key_names(arity: int) -> list[str]:
    return [f"k{c + 1}" for c in range(arity)]



def chain_sql(
    n: int, arity: int, spelling: str, hint: bool, tables: list[str] | None = None, how: str = "full"
) -> str:
    """The chain (FULL by default) over the views of `register_inputs`, t1..tN with columns k1..,
    v<i>, or over `tables` with those columns; spelled as `join_chain_sql` says (SPELLINGS for FULL
    chains, "flat" or "using" for LEFT and INNER)."""
    aliases = [f"t{i + 1}" for i in range(n)]
    values = [[f"v{i + 1}"] for i in range(n)]
    return join_chain_sql(how, tables or aliases, key_names(arity), values, hint=hint, spelling=spelling, aliases=aliases)


def canonical(value):
    """Make rows comparable as multiset members: NaN equal to NaN, -0.0 distinct from 0.0;
    arrays, structs and binaries as hashable tuples and bytes."""
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else repr(value)
    if isinstance(value, (list, tuple)):  # arrays, and structs (Row is a tuple)
        return tuple(canonical(v) for v in value)
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def multiset(rows) -> Counter:
    return Counter(tuple(canonical(v) for v in row) for row in rows)


def register_inputs(spark, types, inputs) -> None:
    for i, (column_types, rows) in enumerate(zip(types, inputs)):
        columns = [f"k{c + 1} {t}" for c, t in enumerate(column_types)] + [f"v{i + 1} INT"]
        local_frame(spark, rows, ", ".join(columns)).createOrReplaceTempView(f"t{i + 1}")


def assert_same_rows_as_vanilla(spark, hinted_sql: str, vanilla_sql: str):
    """Returns the executed hinted query."""
    hinted = spark.sql(hinted_sql)
    assert uses_multijoin(hinted), f"MultiJoin not planned for:\n{hinted_sql}"
    expected = multiset(spark.sql(vanilla_sql).collect())
    actual = multiset(hinted.collect())
    assert actual == expected, (
        f"\nquery: {hinted_sql}\nmissing: {expected - actual}\nextra: {actual - expected}"
    )
    return hinted



def spark_minor(spark) -> tuple[int, int]:
    major, minor = spark.version.split(".")[:2]
    return int(major), int(minor)


def vanilla_sql(how: str, keys: list[list[str]], columns: list[list[str]], outputs: list[list[str]]) -> str:
    """The chain over views t1..tN without the hint (see `join_chain_sql`): keys[i] are input i's
    spellings of the key columns, columns[i] its value columns, outputs[i] their output names."""
    views = [f"t{i + 1}" for i in range(len(keys))]
    values = [[f"{column} AS {output}" for column, output in zip(columns[i], outputs[i])] for i in range(len(keys))]
    return join_chain_sql(how, views, keys, values)
