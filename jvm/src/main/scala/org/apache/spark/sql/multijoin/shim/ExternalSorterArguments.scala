package org.apache.spark.sql.multijoin.shim

import java.util.function.Supplier

import org.apache.spark.{SparkEnv, TaskContext}
import org.apache.spark.internal.config
import org.apache.spark.util.collection.unsafe.sort.{PrefixComparator, RecordComparator}

/**
 * The arguments of `UnsafeExternalSorter.create` that every supported Spark takes, for a sorter
 * of the running task, with the settings Spark's own row sorter (UnsafeExternalRowSorter) gives
 * its sorter. Spark 4.1 and 4.2 each added an argument to `create` (a spill bound in bytes, then
 * a spill merge factor), so the call itself is in the shims, `SparkShim.newExternalSorter`, each
 * reading the settings its version added; what they share is read here once.
 */
private[multijoin] final class ExternalSorterArguments(
    val comparator: Supplier[RecordComparator],
    val prefixComparator: PrefixComparator,
    val pageSize: Long,
    val canUseRadixSort: Boolean) {
  val env: SparkEnv = SparkEnv.get
  val context: TaskContext = TaskContext.get()
  val initialSize: Int = env.conf.get(config.SHUFFLE_SORT_INIT_BUFFER_SIZE).toInt
  val numElementsForSpillThreshold: Int = env.conf.get(config.SHUFFLE_SPILL_NUM_ELEMENTS_FORCE_SPILL_THRESHOLD)
}
