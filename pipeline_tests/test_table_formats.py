"""The operator over Delta and Iceberg scans, in a session whose extension list holds Iceberg's,
Delta's and ours (ours first in the Delta run, last in the Iceberg run): the hinted query plans a
MultiJoin over the formats' own scans and returns exactly the rows of the same query without the
hint."""

from __future__ import annotations

from collections import Counter

import pytest

from testkit.formats import EXTENSION_ORDER
from testkit.plans import plan_nodes


@pytest.fixture(scope="module")
def mixed_inputs(spark, table_format):
    """One input per format: spark_catalog's (`table_format`), the other format's catalog
    (`ice` for Iceberg in the Delta run; Delta tables by path in the Iceberg run), and parquet."""
    spark.sql("create database if not exists formats")
    spark.sql("create namespace if not exists ice.formats")
    rows = "select cast(id % 50 as int) as k, id as {0} from range({1})"
    spark.sql(f"create or replace table formats.own using {table_format} as " + rows.format("own_v", 120))
    spark.sql("create or replace table ice.formats.iceberg_t using iceberg as select * from (" + rows.format("ice_v", 90) + ") where k % 3 != 0")
    spark.sql("create table formats.parquet_t using parquet as select * from (" + rows.format("pq_v", 70) + ") where k % 4 != 1")
    return ["formats.own", "ice.formats.iceberg_t", "formats.parquet_t"]


def chain(inputs, join_type: str, hint: bool) -> str:
    aliases = [f"t{i}" for i in range(len(inputs))]
    key = "coalesce(" + ", ".join(f"{a}.k" for a in aliases) + ")" if join_type == "full" else "t0.k"
    sql = f"select {'/*+ MULTI_JOIN */ ' if hint else ''}{key} as k, t0.own_v, t1.ice_v, t2.pq_v from {inputs[0]} as t0"
    for i, table in enumerate(inputs[1:], start=1):
        left = "coalesce(" + ", ".join(f"{a}.k" for a in aliases[:i]) + ")" if join_type == "full" else "t0.k"
        sql += f" {join_type} outer join {table} as {aliases[i]} on {left} = {aliases[i]}.k"
    return sql


@pytest.mark.parametrize("join_type", ["full", "left"])
def test_multijoin_over_delta_and_iceberg_scans(spark, table_format, mixed_inputs, join_type):
    assert spark.conf.get("spark.sql.extensions").split(",") == EXTENSION_ORDER[table_format]
    hinted = spark.sql(chain(mixed_inputs, join_type, hint=True))
    plan = hinted._jdf.queryExecution().executedPlan()
    expected = Counter(tuple(r) for r in spark.sql(chain(mixed_inputs, join_type, hint=False)).collect())
    assert Counter(tuple(r) for r in hinted.collect()) == expected
    names = [node.nodeName() for node in plan_nodes(hinted._jdf.queryExecution().executedPlan())]
    assert "MultiJoin" in names, names
    assert not any("SortMergeJoin" in n or "HashJoin" in n for n in names), names
    explain = plan.toString()
    assert "iceberg_t" in explain and "parquet_t" in explain
    assert len(expected) > 0
