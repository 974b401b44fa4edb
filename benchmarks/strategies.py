"""The five ways of computing (or bounding) the FULL multi-join of inputs t1..tk on key `k`.

Every builder takes the SparkSession and `Inputs` (view names and their value columns) and
returns a DataFrame; the harness writes it to the noop sink. All but `floor` return the rows of
the nested-coalesce FULL multi-join (DESIGN.md section 2): key `k`, then every input's columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce


@dataclass(frozen=True)
class Inputs:
    views: list[str]  # t1..tk, each with key column `k`
    columns: list[list[str]]  # value columns of each view, names unique across views


def _coalesced_key(views: list[str]) -> str:
    return views[0] + ".k" if len(views) == 1 else "coalesce(" + ", ".join(f"{v}.k" for v in views) + ")"


def chain_sql(inputs: Inputs, hint: bool = False) -> str:
    """The flat nested-coalesce spelling: input j joins on the coalesce of the keys before it."""
    views = inputs.views
    select = [f"{_coalesced_key(views)} AS k"] + [
        f"{view}.{column}" for view, columns in zip(views, inputs.columns) for column in columns
    ]
    sql = f"SELECT {'/*+ MULTI_JOIN */ ' if hint else ''}{', '.join(select)}\nFROM {views[0]}"
    for j in range(1, len(views)):
        sql += f"\nFULL OUTER JOIN {views[j]} ON {_coalesced_key(views[:j])} = {views[j]}.k"
    return sql


def balanced_sql(inputs: Inputs) -> str:
    """Pairs joined as a balanced tree; each inner node outputs coalesce(l.k, r.k) AS k."""

    def build(lo: int, hi: int) -> tuple[str, list[str]]:
        if hi - lo == 1:
            return inputs.views[lo], list(inputs.columns[lo])
        mid = (lo + hi) // 2
        left, left_columns = build(lo, mid)
        right, right_columns = build(mid, hi)
        wrap = lambda side: side if side in inputs.views else f"(\n{side}\n)"  # noqa: E731
        select = ["coalesce(l.k, r.k) AS k"] + [f"l.{c}" for c in left_columns] + [
            f"r.{c}" for c in right_columns]
        sql = (f"SELECT {', '.join(select)}\nFROM {wrap(left)} l\n"
               f"FULL OUTER JOIN {wrap(right)} r ON l.k = r.k")
        return sql, left_columns + right_columns

    return build(0, len(inputs.views))[0]


def union_group_sql(inputs: Inputs) -> str:
    """UNION ALL of every input padded with NULLs, then GROUP BY k with max(): the FULL
    multi-join only when keys are unique within each input and never NULL."""
    every = [column for columns in inputs.columns for column in columns]
    branches = []
    for view, columns in zip(inputs.views, inputs.columns):
        own = set(columns)
        select = ["k"] + [c if c in own else f"CAST(NULL AS DOUBLE) AS {c}" for c in every]
        branches.append(f"SELECT {', '.join(select)} FROM {view}")
    union = "\nUNION ALL\n".join(branches)
    aggregates = ", ".join(f"max({c}) AS {c}" for c in every)
    return f"SELECT k, {aggregates}\nFROM (\n{union}\n) u\nGROUP BY k"


def strategy_sql(name: str, inputs: Inputs) -> str | None:
    return {
        "chain": lambda: chain_sql(inputs),
        "balanced": lambda: balanced_sql(inputs),
        "union_group": lambda: union_group_sql(inputs),
        "multiway": lambda: chain_sql(inputs, hint=True),
    }.get(name, lambda: None)()


def floor_df(spark, inputs: Inputs):
    """The unavoidable work: every input shuffled by key once and sorted within partitions, then
    consumed. repartition(col) without a number uses spark.sql.shuffle.partitions and lets AQE
    coalesce, like the joins' own shuffles. The inputs have the same column types, so UNION ALL
    by position is valid (the result is not a join, only a lower bound on its cost)."""
    parts = [spark.table(view).repartition("k").sortWithinPartitions("k") for view in inputs.views]
    return reduce(lambda a, b: a.unionAll(b), parts)


def build(spark, name: str, inputs: Inputs):
    if name == "floor":
        return floor_df(spark, inputs)
    return spark.sql(strategy_sql(name, inputs))
