package org.apache.spark.sql.multijoin

import java.util.function.Supplier

import org.apache.spark.{SparkEnv, TaskContext}
import org.apache.spark.internal.config
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.ExternalAppendOnlyUnsafeRowArray
import org.apache.spark.util.collection.unsafe.sort.{PrefixComparator, RecordComparator, UnsafeExternalSorter}

/**
 * The Spark APIs the extension uses that differ between Spark versions, for Spark 4.0 (Scala
 * 2.13): the NullIntolerant trait is gone as in every 4.x, but the row buffer is still bounded
 * by row counts only, as in 3.5. Same members as jvm/src/shims/spark-3, spark-4.1 and spark-4.
 */
private[multijoin] object SparkShim {

  /** Whether `e` is null whenever one of its inputs is null: a flag of Expression since 4.0. */
  def isNullIntolerant(e: Expression): Boolean = e.nullIntolerant

  /** A buffer of rows that spills to disk past `spillThreshold` rows: row bounds only until 4.0. */
  def newRowBuffer(inMemoryThreshold: Int, spillThreshold: Int): ExternalAppendOnlyUnsafeRowArray =
    new ExternalAppendOnlyUnsafeRowArray(inMemoryThreshold, spillThreshold)

  /**
   * An external sorter of records for the running task, with the spill settings Spark's own
   * row sorter (UnsafeExternalRowSorter) gives it: until 4.0 only a number of records forces a
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
      canUseRadixSort)
  }
}
