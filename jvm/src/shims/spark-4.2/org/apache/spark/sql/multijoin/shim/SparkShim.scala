package org.apache.spark.sql.multijoin.shim

import org.apache.spark.internal.config
import org.apache.spark.sql.execution.ExternalAppendOnlyUnsafeRowArray
import org.apache.spark.util.collection.unsafe.sort.UnsafeExternalSorter

/**
 * The shim of Spark 4.2, and of every later 4.x minor without a directory of its own: the base
 * of its line (shims/spark-4), with the row buffer of 4.1 and the external sorter of 4.2, which
 * also takes how many spill files are merged at once.
 */
private[multijoin] object SparkShim extends SparkLineShim {

  /** Unbounded bytes keep the row-count behaviour of 3.5 and 4.0. */
  override def newRowBuffer(inMemoryThreshold: Int, spillThreshold: Int): ExternalAppendOnlyUnsafeRowArray =
    new ExternalAppendOnlyUnsafeRowArray(inMemoryThreshold, Long.MaxValue, spillThreshold, Long.MaxValue)

  /** With the spill bound in bytes and the merge factor Spark's own row sorter gives its sorter. */
  override def newExternalSorter(args: ExternalSorterArguments): UnsafeExternalSorter =
    UnsafeExternalSorter.create(args.context.taskMemoryManager(), args.env.blockManager,
      args.env.serializerManager, args.context, args.comparator, args.prefixComparator,
      args.initialSize, args.pageSize, args.numElementsForSpillThreshold,
      args.env.conf.get(config.SHUFFLE_SPILL_MAX_SIZE_FORCE_SPILL_THRESHOLD),
      args.env.conf.get(config.UNSAFE_SORTER_SPILL_MERGE_FACTOR),
      args.canUseRadixSort)
}
