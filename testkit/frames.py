"""Test inputs as DataFrames that the JVM reads without Python workers.

`spark.createDataFrame(list_of_rows, schema)` plans as a `LogicalRDD` whose partitions pass
through a Python worker (an identity map that re-pickles them) every time a query reads them.
The differential tests read each input several times per example (the hinted query, the vanilla
one, their plans), over thousands of examples: on 2 cores those workers took more CPU than Spark.

`local_frame` builds the same `LogicalRDD` from the same pickled rows, but lets the JVM unpickle
them itself (`SerDeUtil.pythonToJava`, Pyrolite), as `createDataFrame` does after its Python
pass: same rows, same types, same plan shape (a scan Spark cannot see through, so nothing is
folded into constants or pruned as empty at planning time), and no Python process at run time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType, _make_type_verifier, _parse_datatype_string


def local_frame(spark: SparkSession, rows: Iterable[Sequence], schema: str | StructType) -> DataFrame:
    """A DataFrame of `rows` (tuples in the order of `schema`, a DDL string or a StructType),
    checked against the schema as `createDataFrame` checks them."""
    struct = _parse_datatype_string(schema) if isinstance(schema, str) else schema
    verify = _make_type_verifier(struct)
    internal = []
    for row in rows:
        verify(tuple(row))
        internal.append(struct.toInternal(tuple(row)))
    jvm = spark.sparkContext._jvm
    # parallelize ships the rows as pickled batches; the JVM unpickles them, no Python pass.
    pickled = spark.sparkContext.parallelize(internal)._jrdd
    java_rows = jvm.SerDeUtil.toJavaArray(jvm.SerDeUtil.pythonToJava(pickled, True))
    return DataFrame(spark._jsparkSession.applySchemaToPythonRDD(java_rows.rdd(), struct.json()), spark)
