package org.apache.spark.sql.multijoin

import java.util.function.Supplier

import org.apache.spark.{SparkEnv, TaskContext}
import org.apache.spark.internal.config
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.ExternalAppendOnlyUnsafeRowArray
import org.apache.spark.util.collection.unsafe.sort.{PrefixComparator, RecordComparator, UnsafeExternalSorter}

/**
 * The Spark APIs the extension uses that differ between Spark versions, for Spark 4.1 (Scala
 * 2.13): the row buffer of 4.2 and later, the external sorter's factory of 4.1 only. Same
 * members as spark-3, spark-4.0 and spark-4.
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

  /**
   * An external sorter of records for the running task, with the spill settings Spark's own
   * row sorter (UnsafeExternalRowSorter) gives it: 4.1 added a bound in bytes that forces a
   * spill.
   */
  def newExternalSorter(
      comparator: Supplier[RecordComparator],
      prefixComparator: PrefixComparator,
      pageSize: Long,
      canUseRadixSort: Boolean): UnsafeExternalSorter = {
    val env = SparkEnv.get
    val context = TaskContext.get()
    UnsafeExternalSorter.create(context.taskMemoryManager(), env.blockManager, env.serializerManager,
      context, comparator, prefixComparator, env.conf.get(config.SHUFFLE_SORT_INIT_BUFFER_SIZE).toInt,
      pageSize, env.conf.get(config.SHUFFLE_SPILL_NUM_ELEMENTS_FORCE_SPILL_THRESHOLD),
      env.conf.get(config.SHUFFLE_SPILL_MAX_SIZE_FORCE_SPILL_THRESHOLD),
      canUseRadixSort)
  }
}
