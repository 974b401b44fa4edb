"""What the differential tests share: generated inputs, the FULL chain in its three spellings, and
the comparison of a hinted query's rows with vanilla Spark's as multisets.

The inputs are registered as temporary views t1..tN built by `testkit.frames.local_frame`, so
reading them costs the JVM alone.
"""

from __future__ import annotations

import datetime
import math
from collections import Counter
from decimal import Decimal

from hypothesis import strategies as st

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



def chain_sql(n: int, arity: int, spelling: str, hint: bool, tables: list[str] | None = None) -> str:
    """The nested-coalesce FULL OUTER chain over views t1..tN in one of the three spellings."""
    tables = tables or [f"t{i + 1}" for i in range(n)]
    aliases = [f"t{i + 1}" for i in range(n)]
    keys = key_names(arity)
    hint_sql = "/*+ MULTI_JOIN */ " if hint else ""
    values = [f"v{i + 1}" for i in range(n)]
    if spelling == "using":
        joins = " ".join(
            f"FULL OUTER JOIN {tables[i]} AS {aliases[i]} USING ({', '.join(keys)})" for i in range(1, n)
        )
        return f"SELECT {hint_sql}* FROM {tables[0]} AS {aliases[0]} {joins}"
    if spelling == "flat":
        def coalesced(key: str, upto: int) -> str:
            operands = [f"{aliases[j]}.{key}" for j in range(upto)]
            return operands[0] if upto == 1 else f"coalesce({', '.join(operands)})"

        select = [f"{coalesced(k, n)} AS {k}" for k in keys] + [f"{aliases[i]}.{values[i]}" for i in range(n)]
        joins = " ".join(
            f"FULL OUTER JOIN {tables[i]} AS {aliases[i]} ON "
            + " AND ".join(f"{coalesced(k, i)} = {aliases[i]}.{k}" for k in keys)
            for i in range(1, n)
        )
        return f"SELECT {hint_sql}{', '.join(select)} FROM {tables[0]} AS {aliases[0]} {joins}"
    # nested: each level a subquery that projects the coalesced key
    inner = f"{tables[0]}"
    for level in range(1, n):
        left = "j" if level > 1 else aliases[0]
        select = [f"coalesce({left}.{k}, {aliases[level]}.{k}) AS {k}" for k in keys]
        select += [f"{left}.{v}" for v in values[:level]] + [f"{aliases[level]}.{values[level]}"]
        condition = " AND ".join(f"{left}.{k} = {aliases[level]}.{k}" for k in keys)
        top = level == n - 1
        inner = (
            f"SELECT {hint_sql if top else ''}{', '.join(select)} "
            f"FROM {inner if level == 1 else '(' + inner + ')'} AS {left} "
            f"FULL OUTER JOIN {tables[level]} AS {aliases[level]} ON {condition}"
        )
    return inner



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
    """The chain over views t1..tN written by hand, without the hint: FULL joins each level on the
    coalesce of the keys below it, LEFT and INNER on the first input's key. keys[i] are input
    i's spellings of the key columns, columns[i] its value columns, outputs[i] their output names."""
    n = len(keys)
    arity = len(keys[0])
    if how == "full":
        select = [f"coalesce({', '.join(f't{i + 1}.{keys[i][c]}' for i in range(n))}) AS {keys[0][c]}" for c in range(arity)]
    else:
        select = [f"t1.{keys[0][c]} AS {keys[0][c]}" for c in range(arity)]
    select += [f"t{i + 1}.{col} AS {out}" for i in range(n) for col, out in zip(columns[i], outputs[i])]
    keyword = {"full": "FULL OUTER JOIN", "left": "LEFT OUTER JOIN", "inner": "INNER JOIN"}[how]
    joins = []
    for i in range(1, n):
        below = range(i) if how == "full" else range(1)
        conditions = []
        for c in range(arity):
            refs = [f"t{j + 1}.{keys[j][c]}" for j in below]
            left = refs[0] if len(refs) == 1 else f"coalesce({', '.join(refs)})"
            conditions.append(f"{left} = t{i + 1}.{keys[i][c]}")
        joins.append(f"{keyword} t{i + 1} ON {' AND '.join(conditions)}")
    return f"SELECT {', '.join(select)} FROM t1 {' '.join(joins)}"
