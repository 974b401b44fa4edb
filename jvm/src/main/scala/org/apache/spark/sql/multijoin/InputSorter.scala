package org.apache.spark.sql.multijoin

import org.apache.spark.{SparkEnv, TaskContext}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{RowOrdering, SortOrder, SortPrefix, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.{SortPrefixUtils, UnsafeExternalRowSorter}
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.types.StructType

/**
 * Sorts one input of a multi-join within a task, as SortExec would, with one difference: the
 * size of the sorter's memory pages.
 *
 * A task of the multi-join sorts all N of its inputs at once, and an external sorter takes a
 * whole page (spark.buffer.pageSize, 64 MB with a few GB of execution memory) for its first
 * row. N SortExecs under one join would hold N such pages per task: 1 GB at N = 16, mostly
 * empty, zeroed on allocation, and taken from the execution memory the sorts need. Here each
 * input's sorter gets 1/N of a page (1 MB at least), so the N sorts of a task start with the
 * memory of one.
 *
 * @param order the input's key order, bound to the input's columns
 */
private[multijoin] final class InputSorter(
    schema: StructType,
    order: Seq[SortOrder],
    radixSortEnabled: Boolean,
    inputsPerTask: Int) extends Serializable {

  /** Sorts `rows` and returns them in key order; updates the metrics once the sort is done. */
  def sort(
      rows: Iterator[UnsafeRow],
      sortTime: SQLMetric,
      peakMemory: SQLMetric,
      spillSize: SQLMetric): Iterator[UnsafeRow] = {
    val sorter = createSorter()
    val taskMetrics = TaskContext.get().taskMetrics()
    val spilledBefore = taskMetrics.memoryBytesSpilled
    // The sorter hands back its rows as UnsafeRows, typed as InternalRow.
    val sorted = sorter.sort(rows).asInstanceOf[Iterator[UnsafeRow]]
    sortTime += sorter.getSortTimeNanos / 1000000
    peakMemory += sorter.getPeakMemoryUsage
    spillSize += taskMetrics.memoryBytesSpilled - spilledBefore
    taskMetrics.incPeakExecutionMemory(sorter.getPeakMemoryUsage)
    sorted
  }

  private def createSorter(): UnsafeExternalRowSorter = {
    val first = order.head
    val prefix = SortPrefix(first)
    val prefixProjection = UnsafeProjection.create(Seq(prefix))
    val prefixComputer = new UnsafeExternalRowSorter.PrefixComputer {
      private val result = new UnsafeExternalRowSorter.PrefixComputer.Prefix
      override def computePrefix(row: InternalRow): UnsafeExternalRowSorter.PrefixComputer.Prefix = {
        val projected = prefixProjection(row)
        result.isNull = projected.isNullAt(0)
        result.value = if (result.isNull) prefix.nullValue else projected.getLong(0)
        result
      }
    }
    // A radix sort on the prefix is exact only when the prefix is the whole key.
    val radixSort = radixSortEnabled && order.length == 1 &&
      SortPrefixUtils.canSortFullyWithPrefix(first)
    val pageSize = math.max(1L << 20, SparkEnv.get.memoryManager.pageSizeBytes / inputsPerTask)
    UnsafeExternalRowSorter.create(schema, RowOrdering.create(order, Nil),
      SortPrefixUtils.getPrefixComparator(first), prefixComputer, pageSize, radixSort)
  }
}
