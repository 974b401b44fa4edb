"""The test kit's own promises, where a broken one would make other tests pass for nothing."""

from __future__ import annotations

import datetime
from decimal import Decimal

from testkit.differential import multiset
from testkit.frames import local_frame

SCHEMA = "k DOUBLE, d DECIMAL(38,6), dt DATE, ts TIMESTAMP, a ARRAY<INT>, s STRUCT<s: STRING, i: INT>, b BINARY, t TINYINT"
ROWS = [
    (float("nan"), Decimal("1.5"), datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 1, 9, 30), [1, None], ("x", 1), bytearray(b"ab"), 3),
    (-0.0, None, None, None, None, None, None, None),
    (0.0, Decimal("-123456789.123456"), datetime.date(2024, 1, 31), datetime.datetime(2024, 1, 1), [], (None, None), bytearray(), -7),
]


def test_local_frame_holds_the_rows_create_data_frame_makes(spark):
    built = local_frame(spark, ROWS, SCHEMA)
    assert built.schema == spark.createDataFrame(ROWS, SCHEMA).schema
    assert multiset(built.collect()) == multiset(spark.createDataFrame(ROWS, SCHEMA).collect())
    assert local_frame(spark, [], "k INT").count() == 0


def test_local_frame_is_read_without_python_workers(spark):
    """What it is for: createDataFrame's rows pass through a Python worker (a PythonRDD) on
    every read; local_frame's lineage is the JVM's alone."""
    def lineage(df) -> str:
        return df._jdf.queryExecution().toRdd().toDebugString()

    assert "PythonRDD[" in lineage(spark.createDataFrame(ROWS, SCHEMA))
    assert "PythonRDD[" not in lineage(local_frame(spark, ROWS, SCHEMA))
