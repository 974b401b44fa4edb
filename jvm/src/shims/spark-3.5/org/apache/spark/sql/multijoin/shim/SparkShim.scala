package org.apache.spark.sql.multijoin.shim

import org.apache.spark.sql.execution.ExternalAppendOnlyUnsafeRowArray
import org.apache.spark.util.collection.unsafe.sort.UnsafeExternalSorter

/**
 * The shim of Spark 3.5 and 4.0: the base of the line (shims/spark-3 or spark-4), with the row
 * buffer and the external sorter these two minors share, which only a number of rows or records
 * makes spill.
 */
private[multijoin] object SparkShim extends SparkLineShim {

  override def newRowBuffer(inMemoryThreshold: Int, spillThreshold: Int): ExternalAppendOnlyUnsafeRowArray =
    new ExternalAppendOnlyUnsafeRowArray(inMemoryThreshold, spillThreshold)

  override def newExternalSorter(args: ExternalSorterArguments): UnsafeExternalSorter =
    UnsafeExternalSorter.create(args.context.taskMemoryManager(), args.env.blockManager,
      args.env.serializerManager, args.context, args.comparator, args.prefixComparator,
      args.initialSize, args.pageSize, args.numElementsForSpillThreshold,
      args.canUseRadixSort)
}
