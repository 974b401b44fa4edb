package org.apache.spark.sql.multijoin

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.ExternalAppendOnlyUnsafeRowArray

/**
 * The Spark APIs the extension uses that differ between Spark versions, for Spark 4.1 and later
 * (Scala 2.13; 4.0 has its own, jvm/src/shims/spark-4.0). Same members as spark-3 and spark-4.0.
 */
private[multijoin] object SparkShim {

  /** Whether `e` is null whenever one of its inputs is null: a flag of Expression since 4.0. */
  def isNullIntolerant(e: Expression): Boolean = e.nullIntolerant

  /**
   * A buffer of rows that spills to disk past `spillThreshold` rows. Spark 4.1 added bounds in
   * bytes next to the row counts; unbounded bytes keep the row-count behaviour of 3.5 and 4.0.
   */
  def newRowBuffer(inMemoryThreshold: Int, spillThreshold: Int): ExternalAppendOnlyUnsafeRowArray =
    new ExternalAppendOnlyUnsafeRowArray(inMemoryThreshold, Long.MaxValue, spillThreshold, Long.MaxValue)
}
