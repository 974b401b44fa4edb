package org.apache.spark.sql.multijoin.shim

import org.apache.spark.internal.config
import org.apache.spark.sql.execution.ExternalAppendOnlyUnsafeRowArray
import org.apache.spark.util.collection.unsafe.sort.UnsafeExternalSorter

/**
 * The shim of Spark 4.1: the base of the line (shims/spark-4), with the row buffer and the
 * external sorter of 4.1, which added bounds in bytes that force a spill.
 */
private[multijoin] object SparkShim extends SparkLineShim {

  /** Unbounded bytes keep the row-count behaviour of 3.5 and 4.0. */
  override def newRowBuffer(inMemoryThreshold: Int, spillThreshold: Int): ExternalAppendOnlyUnsafeRowArray =
    new ExternalAppendOnlyUnsafeRowArray(inMemoryThreshold, Long.MaxValue, spillThreshold, Long.MaxValue)

  /** With the bound in bytes Spark's own row sorter gives its sorter. */
  override def newExternalSorter(args: ExternalSorterArguments): UnsafeExternalSorter =
    UnsafeExternalSorter.create(args.context.taskMemoryManager(), args.env.blockManager,
      args.env.serializerManager, args.context, args.comparator, args.prefixComparator,
      args.initialSize, args.pageSize, args.numElementsForSpillThreshold,
      args.env.conf.get(config.SHUFFLE_SPILL_MAX_SIZE_FORCE_SPILL_THRESHOLD),
      args.canUseRadixSort)
}
