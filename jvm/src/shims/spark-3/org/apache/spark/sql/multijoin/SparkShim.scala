package org.apache.spark.sql.multijoin

import java.util.function.Supplier

import org.apache.spark.{SparkEnv, TaskContext}
import org.apache.spark.internal.config
import org.apache.spark.sql.catalyst.expressions.{Expression, NullIntolerant}
import org.apache.spark.sql.execution.ExternalAppendOnlyUnsafeRowArray
import org.apache.spark.util.collection.unsafe.sort.{PrefixComparator, RecordComparator, UnsafeExternalSorter}

/**
 * The Spark APIs the extension uses that differ between Spark versions, for Spark 3.5 (Scala
 * 2.12). Every shim directory (jvm/src/shims/spark-<version>) defines this object with the same
 * members; dbt_multijoin/jar.py compiles the one of the Spark it builds for.
 */
private[multijoin] object SparkShim {

  /**
   * Whether `e` is null whenever one of its inputs is null. Spark 3.5 marks such expressions
   * with the NullIntolerant trait; Spark 4.0 replaced it with `Expression.nullIntolerant`.
   */
  def isNullIntolerant(e: Expression): Boolean = e.isInstanceOf[NullIntolerant]

  /**
   * A buffer of rows that spills to disk past `spillThreshold` rows. Spark 3.5 and 4.0 bound it
   * by row counts only; Spark 4.1 added byte bounds.
   */
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
