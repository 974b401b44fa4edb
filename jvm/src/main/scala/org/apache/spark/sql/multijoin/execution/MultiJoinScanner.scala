package org.apache.spark.sql.multijoin.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, RowOrdering, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.plans.{FullOuter, Inner, JoinType, LeftOuter}
import org.apache.spark.sql.execution.ExternalAppendOnlyUnsafeRowArray
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.multijoin.shim.SparkShim
import org.apache.spark.sql.types.StructType

/**
 * Merges N inputs, each sorted ascending on its key, into the rows of the multi-join.
 *
 * Each step picks a key and collects, from every input whose head has that key, its group of
 * rows with that key. The output for the key is the product of the groups, an all-null row
 * standing in for each input without the key. Which key comes next depends on the join type:
 *  - FULL: the smallest key among the heads; a row whose key has a null component matches
 *    nothing and is emitted alone as soon as it reaches the head;
 *  - LEFT: the driver's (first input's) next key; the other inputs skip to it; the driver's
 *    null-key rows are emitted alone, the others' dropped;
 *  - INNER: the largest key among the heads, until every input has it (leapfrog).
 *
 * A group of one row (unique keys, the common case) is held as that row: no buffer. A larger
 * group goes into an ExternalAppendOnlyUnsafeRowArray, which spills to disk under memory
 * pressure, so a key with more matches than memory completes.
 *
 * Keys are compared as UnsafeRows with the key ordering, except a single integral, date or
 * timestamp column read straight from the row (see [[KeyAsLong]]): then as longs, with no key
 * projection per row. Each combination is handed out either as the inputs' rows themselves
 * ([[nextRows]], for code generated to read their fields) or as those rows concatenated into one
 * by [[UnsafeRowConcatenator]] ([[next]]).
 */
private[multijoin] final class MultiJoinScanner(
    joinType: JoinType,
    inputs: Array[InputInKeyOrder],
    inputSchemas: Seq[StructType],
    boundKeys: Seq[Seq[Expression]],
    inMemoryThreshold: Int,
    spillThreshold: Int,
    numOutputRows: SQLMetric,
    inputRows: Array[SQLMetric],
    spillSize: SQLMetric) extends Iterator[InternalRow] {

  private[this] val n = inputs.length
  private[this] val fieldsPerInput = inputSchemas.map(_.length).toArray

  // Each input, read ahead in batches of copied rows (see ReadAheadInput).
  private[this] val readers = Array.tabulate(n) { i =>
    new ReadAheadInput(inputs(i), MultiJoinScanner.ReadAheadBytes)
  }
  // The head of each input: its next unconsumed row and that row's key; null once the input is
  // exhausted. Two row objects per input take turns pointing at the head: the other one still
  // points at the previous head, which may be the row of the group being emitted. The key is
  // either a long (integral keys) or lives in the input's own projection buffer, valid until the
  // input's next fetch.
  private[this] val headRow = new Array[UnsafeRow](n)
  private[this] val headKey = new Array[UnsafeRow](n)
  private[this] val headLong = new Array[Long](n)
  private[this] val headKeyHasNull = new Array[Boolean](n)
  // Integral keys are read as longs; other keys are projected and compared with the generated
  // ordering, which integral keys then do not need built.
  private[this] val keyAsLong: Array[KeyAsLong] = KeyAsLong.forAll(boundKeys).orNull
  private[this] val longKeys = keyAsLong != null
  private[this] val keyProjections: Array[UnsafeProjection] =
    if (longKeys) null else boundKeys.map(key => UnsafeProjection.create(key)).toArray
  private[this] val keyOrdering =
    if (longKeys) null else RowOrdering.createNaturalAscendingOrdering(boundKeys.head.map(_.dataType))
  // The inputs whose head has the smallest key, found by nextFullGroup.
  private[this] val smallest = new Array[Int](n)
  private[this] val slots: Array[Array[UnsafeRow]] = fieldsPerInput.map { fields =>
    Array.fill(2)(new UnsafeRow(fields))
  }
  // The key of the current group: fetching overwrites the inputs' key buffers, so it is copied.
  private[this] val groupKey = emptyRow(boundKeys.head.size)
  private[this] var groupLong = 0L

  // The current group. `joined` holds each input's row of the combination to emit (null: the
  // input has no row for it); `multiRowInputs` lists the inputs whose group has several rows,
  // iterated as an odometer (the last one fastest).
  private[this] val joined = new Array[UnsafeRow](n)
  private[this] lazy val concatenator = new UnsafeRowConcatenator(inputSchemas)
  private[this] val buffers = new Array[ExternalAppendOnlyUnsafeRowArray](n)
  private[this] val bufferIterators = new Array[Iterator[UnsafeRow]](n)
  private[this] val multiRowInputs = new Array[Int](n)
  private[this] var multiRowCount = 0

  private[this] var pending = false
  private[this] var closed = false

  (0 until n).foreach(fetch)

  override def hasNext: Boolean = pending || { pending = nextCombination() || nextGroup(); pending }

  override def next(): InternalRow = concatenator.concat(nextRows())

  /**
   * The next combination as each input's row, null where the input has none for it: the array
   * and its rows are reused, valid until the next call.
   */
  def nextRows(): Array[UnsafeRow] = {
    if (!hasNext) throw new NoSuchElementException("MultiJoinScanner is exhausted")
    pending = false
    numOutputRows += 1
    joined
  }

  /** The combinations as [[nextRows]] gives them. */
  def rowsIterator: Iterator[Array[UnsafeRow]] = new Iterator[Array[UnsafeRow]] {
    override def hasNext: Boolean = MultiJoinScanner.this.hasNext
    override def next(): Array[UnsafeRow] = nextRows()
  }

  /** Releases the buffers and reports what they spilled. Called when the task completes. */
  def close(): Unit = if (!closed) {
    closed = true
    buffers.foreach { buffer =>
      if (buffer != null) {
        spillSize += buffer.spillSize
        buffer.clear()
      }
    }
  }

  private def fetch(i: Int): Unit = {
    // The slot not holding the current head: the current head may be the row being emitted.
    val slot = if (headRow(i) eq slots(i)(0)) slots(i)(1) else slots(i)(0)
    if (readers(i).next(slot)) {
      inputRows(i) += 1
      headRow(i) = slot
      if (longKeys) {
        val key = keyAsLong(i)
        headKeyHasNull(i) = slot.isNullAt(key.ordinal)
        if (!headKeyHasNull(i)) headLong(i) = key.read(slot)
      } else {
        headKey(i) = keyProjections(i)(slot)
        headKeyHasNull(i) = headKey(i).anyNull()
      }
    } else {
      headRow(i) = null
      headKey(i) = null
    }
  }

  private def emptyRow(fields: Int): UnsafeRow = {
    val row = new UnsafeRow(fields)
    row.pointTo(new Array[Byte](64), 64)
    row
  }

  /** Compares the keys of the heads of inputs i and j, both present, neither with a null. */
  private def compareHeads(i: Int, j: Int): Int =
    if (longKeys) java.lang.Long.compare(headLong(i), headLong(j))
    else keyOrdering.compare(headKey(i), headKey(j))

  /** Compares the key of input i's head (present, no null) with the current group's key. */
  private def compareToGroup(i: Int): Int =
    if (longKeys) java.lang.Long.compare(headLong(i), groupLong)
    else keyOrdering.compare(headKey(i), groupKey)

  /** Makes input i's head key the current group's key. */
  private def setGroupKey(i: Int): Unit =
    if (longKeys) groupLong = headLong(i) else groupKey.copyFrom(headKey(i))

  private def sameKey(i: Int): Boolean =
    headRow(i) != null && !headKeyHasNull(i) && compareToGroup(i) == 0

  /** Moves to the next key (or null-key row); false once there is none. */
  private def nextGroup(): Boolean = {
    multiRowCount = 0
    val found = joinType match {
      case FullOuter => nextFullGroup()
      case LeftOuter => nextLeftGroup()
      case Inner => nextInnerGroup()
      case other => throw new IllegalStateException(s"MultiJoinScanner does not support $other")
    }
    // The first combination: every buffered input at its first row.
    if (found) {
      var b = 0
      while (b < multiRowCount) { restart(multiRowInputs(b)); b += 1 }
    }
    found
  }

  private def nextFullGroup(): Boolean = {
    // One pass over the heads: a null-key row goes out at once; otherwise collect the inputs
    // whose head has the smallest key (restarting the list whenever a smaller key turns up).
    var matched = 0
    var i = 0
    while (i < n) {
      if (headRow(i) != null) {
        if (headKeyHasNull(i)) {
          emitAlone(i)
          return true
        }
        val order = if (matched == 0) -1 else compareHeads(i, smallest(0))
        if (order < 0) {
          smallest(0) = i
          matched = 1
        } else if (order == 0) {
          smallest(matched) = i
          matched += 1
        }
      }
      i += 1
    }
    if (matched == 0) return false
    setGroupKey(smallest(0))
    clearJoined()
    var m = 0
    while (m < matched) { takeGroup(smallest(m)); m += 1 }
    true
  }

  private def nextLeftGroup(): Boolean = {
    if (headRow(0) == null) return false
    if (headKeyHasNull(0)) {
      emitAlone(0)
      return true
    }
    setGroupKey(0)
    takeGroup(0)
    var i = 1
    while (i < n) {
      skipBelow(i)
      if (sameKey(i)) takeGroup(i) else joined(i) = null
      i += 1
    }
    true
  }

  private def nextInnerGroup(): Boolean = {
    while (true) {
      var largest = -1
      var i = 0
      while (i < n) {
        while (headRow(i) != null && headKeyHasNull(i)) fetch(i)
        if (headRow(i) == null) return false
        if (largest < 0 || compareHeads(i, largest) > 0) largest = i
        i += 1
      }
      setGroupKey(largest)
      var everyInputHasIt = true
      i = 0
      while (i < n) {
        skipBelow(i)
        if (headRow(i) == null) return false
        everyInputHasIt &&= sameKey(i)
        i += 1
      }
      if (everyInputHasIt) {
        i = 0
        while (i < n) { takeGroup(i); i += 1 }
        return true
      }
    }
    false
  }

  private def clearJoined(): Unit = {
    var i = 0
    while (i < n) { joined(i) = null; i += 1 }
  }

  /** A row whose key has a null component: alone, with every other input null. */
  private def emitAlone(i: Int): Unit = {
    clearJoined()
    joined(i) = headRow(i)
    fetch(i)
  }

  /** Drops input i's rows that cannot match the group's key or any key after it. */
  private def skipBelow(i: Int): Unit =
    while (headRow(i) != null && (headKeyHasNull(i) || compareToGroup(i) < 0)) fetch(i)

  /** Consumes input i's rows with the group's key: one row stays as it is, more are buffered. */
  private def takeGroup(i: Int): Unit = {
    val first = headRow(i)
    fetch(i)
    if (!sameKey(i)) {
      joined(i) = first
    } else {
      if (buffers(i) == null) {
        buffers(i) = SparkShim.newRowBuffer(inMemoryThreshold, spillThreshold)
      }
      val buffer = buffers(i)
      buffer.clear()
      buffer.add(first)
      while (sameKey(i)) {
        buffer.add(headRow(i))
        fetch(i)
      }
      multiRowInputs(multiRowCount) = i
      multiRowCount += 1
    }
  }

  private def restart(i: Int): Unit = {
    bufferIterators(i) = buffers(i).generateIterator()
    joined(i) = bufferIterators(i).next()
  }

  /** Advances the odometer over the buffered inputs; false when the group is done. */
  private def nextCombination(): Boolean = {
    var d = multiRowCount - 1
    while (d >= 0) {
      val i = multiRowInputs(d)
      if (bufferIterators(i).hasNext) {
        joined(i) = bufferIterators(i).next()
        var inner = d + 1
        while (inner < multiRowCount) { restart(multiRowInputs(inner)); inner += 1 }
        return true
      }
      d -= 1
    }
    multiRowCount = 0
    false
  }
}

private[multijoin] object MultiJoinScanner {
  /** How many bytes of rows each input reads ahead at a time (two such arenas per input). */
  val ReadAheadBytes: Int = 32 * 1024
}
