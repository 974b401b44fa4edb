"""A Delta MERGE bug, and the shape the package uses instead (macros/changed_keys/recompute.sql).

Delta's MERGE with deletion vectors (merge-on-read) evaluates the MERGE condition again on the rows
of its outer join of source and target, the target's columns NULL where a source row matched
nothing. A source row whose condition is TRUE there is classed as matched and not matched at once,
and Delta 4.4 (the release for Spark 4.1) fails the MERGE with "Unexpected row: did not match any
merge clause"; Delta 3.3 (Spark 3.5) applies it. The key-recompute MERGE's marker for the table's
NULL-keyed rows was such a row (`source.k <=> if(target.k is null, null, target.k)` is TRUE for a
NULL source key against a NULL-padded target) whenever the table held no NULL-keyed row. The
package now leaves that marker out on Delta when the table has none: it would delete nothing.

When a Delta release fixes the bug, the first assertion below fails: the workaround may then go.
"""

from __future__ import annotations

import pyspark
import pytest

MERGE = """merge into {table} as target using (
  select true as replaced, 1 as k, cast(null as int) as v
  {null_marker}
  union all select false, 1, 10) as source
on source.replaced and source.k <=> if(target.k is null, null, target.k)
when matched then delete
when not matched and not source.replaced then insert (k, v) values (source.k, source.v)"""
NULL_MARKER = "union all select true, null, null"


@pytest.fixture
def table(spark, table_format):
    if table_format != "delta":
        pytest.skip("a Delta bug: the Iceberg run has no Delta tables")
    spark.sql("create database if not exists delta_merge_condition")
    name = "delta_merge_condition.merged"
    spark.sql(f"drop table if exists {name}")
    spark.sql(f"create table {name} (k int, v int) using delta tblproperties ('delta.enableDeletionVectors' = 'true')")
    spark.sql(f"insert into {name} values (1, 1), (2, 2)")
    return name


def test_a_source_row_true_against_a_padded_target_fails_on_delta_4(spark, table):
    """The statement and the table state that trigger it: a MERGE that matches a target row
    (so Delta rewrites with deletion vectors), and a NULL marker that matches none."""
    statement = MERGE.format(table=table, null_marker=NULL_MARKER)
    if pyspark.__version__.startswith("3."):
        spark.sql(statement)
        assert sorted(spark.table(table).collect()) == [(1, 10), (2, 2)]
    else:
        with pytest.raises(Exception, match="Unexpected row: did not match any merge clause"):
            spark.sql(statement)
        assert sorted(spark.table(table).collect()) == [(1, 1), (2, 2)]


def test_without_the_marker_the_merge_applies_on_every_line(spark, table):
    """The package's shape: no NULL marker where the table holds no NULL-keyed row."""
    spark.sql(MERGE.format(table=table, null_marker=""))
    assert sorted(spark.table(table).collect()) == [(1, 10), (2, 2)]
