package org.apache.spark.sql.multijoin.execution

import org.apache.spark.{SparkEnv, TaskContext}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{RowOrdering, SortOrder, SortPrefix, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.SortPrefixUtils
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.multijoin.shim.{ExternalSorterArguments, SparkShim}
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.collection.unsafe.sort.{PrefixComparator, RecordComparator}

/**
 * Sorts one input of a multi-join within a task, as SortExec would, with two differences.
 *
 * The size of the sorter's memory pages: a task of the multi-join sorts all N of its inputs at
 * once, and an external sorter takes a whole page (spark.buffer.pageSize, 64 MB with a few GB of
 * execution memory) for its first row. N SortExecs under one join would hold N such pages per
 * task: 1 GB at N = 16, mostly empty, zeroed on allocation, and taken from the execution memory
 * the sorts need. Here each input's sorter gets 1/N of a page (1 MB at least), so the N sorts of
 * a task start with the memory of one.
 *
 * How the sorted rows are handed out: as the sorter's own records ([[SortedRecords]]), which the
 * merge copies out in batches, instead of through Spark's row sorter and its row iterator, whose
 * calls and lock per row keep the CPU from overlapping the reads of consecutive rows (see
 * [[ReadAheadInput]]).
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
      spillSize: SQLMetric): SortedRecords = {
    val first = order.head
    val prefix = SortPrefix(first)
    val prefixProjection = UnsafeProjection.create(Seq(prefix))
    val ordering = RowOrdering.create(order, Nil)
    val fields = schema.length
    // A radix sort on the prefix is exact only when the prefix is the whole key.
    val radixSort = radixSortEnabled && order.length == 1 && SortPrefixUtils.canSortFullyWithPrefix(first)
    val pageSize = math.max(1L << 20, SparkEnv.get.memoryManager.pageSizeBytes / inputsPerTask)
    val sorter = SparkShim.newExternalSorter(new ExternalSorterArguments(
      () => new InputSorter.RowComparator(ordering, fields), SortPrefixUtils.getPrefixComparator(first),
      pageSize, radixSort))
    val taskMetrics = TaskContext.get().taskMetrics()
    val spilledBefore = taskMetrics.memoryBytesSpilled
    try {
      while (rows.hasNext) {
        val row = rows.next()
        val projected = prefixProjection(row)
        val prefixIsNull = projected.isNullAt(0)
        sorter.insertRecord(row.getBaseObject, row.getBaseOffset, row.getSizeInBytes,
          if (prefixIsNull) prefix.nullValue else projected.getLong(0), prefixIsNull)
      }
      val sorted = new SortedRecords(sorter.getSortedIterator(), () => sorter.cleanupResources())
      sortTime += sorter.getSortTimeNanos / 1000000
      peakMemory += sorter.getPeakMemoryUsedBytes
      spillSize += taskMetrics.memoryBytesSpilled - spilledBefore
      taskMetrics.incPeakExecutionMemory(sorter.getPeakMemoryUsedBytes)
      sorted
    } catch {
      case e: Throwable =>
        sorter.cleanupResources()
        throw e
    }
  }
}

private[multijoin] object InputSorter {
  /** Compares two records of the sorter, each an UnsafeRow of the input, in the key order. */
  private final class RowComparator(ordering: Ordering[InternalRow], fields: Int) extends RecordComparator {
    private[this] val left = new UnsafeRow(fields)
    private[this] val right = new UnsafeRow(fields)

    override def compare(
        leftBase: AnyRef, leftOffset: Long, leftLength: Int,
        rightBase: AnyRef, rightOffset: Long, rightLength: Int): Int = {
      left.pointTo(leftBase, leftOffset, leftLength)
      right.pointTo(rightBase, rightOffset, rightLength)
      ordering.compare(left, right)
    }
  }
}
