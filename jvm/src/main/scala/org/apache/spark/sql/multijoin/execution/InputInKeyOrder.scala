package org.apache.spark.sql.multijoin.execution

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.util.collection.unsafe.sort.UnsafeSorterIterator

/** One input of the merge, in key order. */
private[multijoin] sealed trait InputInKeyOrder

/** An input that arrives in key order (e.g. a table bucketed and sorted on the key). */
private[multijoin] final case class RowsInKeyOrder(rows: Iterator[UnsafeRow]) extends InputInKeyOrder

/**
 * An input sorted by the operator ([[InputSorter]]): the sorter's records in key order, and how
 * to free the sorter's memory, for the reader once it has copied every record out.
 */
private[multijoin] final class SortedRecords(
    val records: UnsafeSorterIterator,
    freeMemory: () => Unit) extends InputInKeyOrder {

  private[this] var released = false

  def release(): Unit = if (!released) {
    released = true
    freeMemory()
  }
}
