package org.apache.spark.sql.multijoin.execution

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.unsafe.Platform

/**
 * One sorted input of the merge, read ahead in batches: about `batchBytes` of rows are copied
 * from the input at a time, back to back, into one of two arenas that take turns.
 *
 * Why: reading N sorted runs one row at a time in merge order costs more per row than reading
 * each run on its own: every row of a sorted run is a random access into the sorter's memory,
 * and interleaving N runs defeats the caches and prefetchers that help a single run. Batches
 * turn that into N short sequential reads, and the merge then reads rows that sit together in a
 * small arena.
 *
 * An input sorted here ([[SortedRecords]]) is read straight from the sorter's records, under
 * the sorter iterator's lock for the whole batch. Through Spark's row iterator each row costs
 * several calls and a lock of its own (the iterator locks against a concurrent spill), which
 * keeps the CPU from overlapping one row's memory accesses with the next row's: that way the
 * merge stage cost clearly more CPU than sorting the same inputs one by one, read this way about
 * the same (the figures: benchmarks/results/k16-memory-spark3.5.9/notes.md). A spill of the
 * sorter is requested by its own task, mostly on this thread (the lock is reentrant); one
 * requested from another of the task's threads (a Python runner's writer) waits for at most one
 * batch, which is ours once copied.
 *
 * The row the merge is given stays valid until the batch after the next one is read: the
 * previous head, which may be the row being emitted, lives in the other arena. The input's rows
 * are copied here anyway, since the input reuses its row object.
 */
private[multijoin] final class ReadAheadInput(
    input: InputInKeyOrder,
    batchBytes: Int) {

  private[this] val arenas = Array.fill(2)(new Array[Byte](batchBytes))
  // Row r of arena a is bytes [starts(a)(r), starts(a)(r + 1)).
  private[this] val starts = Array.fill(2)(new Array[Int](64))
  private[this] val counts = new Array[Int](2)
  private[this] var reading = 1
  private[this] var position = 0
  private[this] var exhausted = false
  // The batch being read in (see readBatch): its arena, row bounds, rows and bytes so far.
  private[this] var arena: Array[Byte] = _
  private[this] var bounds: Array[Int] = _
  private[this] var count = 0
  private[this] var used = 0

  /** Points `row` at the input's next row; false once there is none. */
  def next(row: UnsafeRow): Boolean = {
    if (position == counts(reading) && !readBatch()) return false
    val begin = starts(reading)(position)
    row.pointTo(arenas(reading), Platform.BYTE_ARRAY_OFFSET + begin,
      starts(reading)(position + 1) - begin)
    position += 1
    true
  }

  /** Copies the next batch into the arena not being read; false if the input has no more rows. */
  private def readBatch(): Boolean = {
    if (exhausted) return false
    val target = 1 - reading
    arena = arenas(target)
    bounds = starts(target)
    count = 0
    used = 0
    input match {
      case sorted: SortedRecords =>
        val records = sorted.records
        records.synchronized {
          while (used < batchBytes && records.hasNext) {
            records.loadNext()
            append(records.getBaseObject, records.getBaseOffset, records.getRecordLength)
          }
        }
        exhausted = !records.hasNext
        // Every record is copied out: the sorter's memory can go before the merge ends.
        if (exhausted) sorted.release()
      case RowsInKeyOrder(rows) =>
        while (used < batchBytes && rows.hasNext) {
          val row = rows.next()
          append(row.getBaseObject, row.getBaseOffset, row.getSizeInBytes)
        }
        exhausted = !rows.hasNext
    }
    bounds(count) = used
    arenas(target) = arena
    starts(target) = bounds
    counts(target) = count
    reading = target
    position = 0
    count > 0
  }

  /** Copies one row to the end of the batch being read, growing the arena if it is full. */
  private def append(base: AnyRef, offset: Long, size: Int): Unit = {
    if (used + size > arena.length) {
      arena = java.util.Arrays.copyOf(arena, math.max(2 * arena.length, used + size))
    }
    if (count + 2 > bounds.length) bounds = java.util.Arrays.copyOf(bounds, 2 * bounds.length)
    Platform.copyMemory(base, offset, arena, Platform.BYTE_ARRAY_OFFSET + used, size)
    bounds(count) = used
    used += size
    count += 1
  }
}
