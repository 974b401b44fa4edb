package org.apache.spark.sql.multijoin.execution

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.types.StructType
import org.apache.spark.unsafe.Platform

/**
 * Writes N UnsafeRows side by side as one UnsafeRow, the N-way counterpart of the two-row joiner
 * Spark generates for its joins. An input given as null stands for a missing input: its fields
 * are null.
 *
 * An UnsafeRow is [null bits, 8-byte words][one 8-byte slot per field][variable-length data];
 * a variable-length field's slot holds (offset from the row's start << 32 | size). So the output
 * is built with block copies: each input's fixed slots go to its place in the output's fixed
 * region, its variable-length data is appended, its null bits are shifted into place, and the
 * offsets of its non-null variable-length fields move by how far its data moved. There is no
 * per-field work for fixed-width fields, which is what the generic projection spends its time on.
 *
 * The returned row points into a buffer reused by the next call, as a projection's result does.
 */
private[multijoin] final class UnsafeRowConcatenator(schemas: Seq[StructType]) {

  private[this] val n = schemas.length
  private[this] val fields: Array[Int] = schemas.map(_.length).toArray
  private[this] val totalFields = fields.sum
  // Where each input's fields start among the output's fields.
  private[this] val firstField: Array[Int] = fields.scanLeft(0)(_ + _).init
  private[this] val inBitSetBytes: Array[Int] = fields.map(UnsafeRow.calculateBitSetWidthInBytes)
  private[this] val varLengthOrdinals: Array[Array[Int]] = schemas.map { schema =>
    schema.fields.indices.filterNot(f => UnsafeRow.isFixedLength(schema.fields(f).dataType)).toArray
  }.toArray

  private[this] val outBitSetBytes = UnsafeRow.calculateBitSetWidthInBytes(totalFields)
  private[this] val outFixedBytes = outBitSetBytes + 8 * totalFields

  private[this] var buffer = new Array[Byte](math.max(outFixedBytes, 64))
  private[this] val result = new UnsafeRow(totalFields)

  def concat(rows: Array[UnsafeRow]): UnsafeRow = {
    var size = outFixedBytes
    var i = 0
    while (i < n) {
      if (rows(i) != null) size += rows(i).getSizeInBytes - inBitSetBytes(i) - 8 * fields(i)
      i += 1
    }
    if (buffer.length < size) buffer = new Array[Byte](math.max(size, 2 * buffer.length))
    val out = buffer
    zero(Platform.BYTE_ARRAY_OFFSET, outBitSetBytes)

    var varCursor = outFixedBytes
    i = 0
    while (i < n) {
      val slots = Platform.BYTE_ARRAY_OFFSET + outBitSetBytes + 8L * firstField(i)
      val row = rows(i)
      if (row == null) {
        setNullBits(firstField(i), fields(i))
        zero(slots, 8 * fields(i))
      } else {
        val base = row.getBaseObject
        val offset = row.getBaseOffset
        copyNullBits(base, offset, i)
        val fixedEnd = inBitSetBytes(i) + 8 * fields(i)
        Platform.copyMemory(base, offset + inBitSetBytes(i), out, slots, 8L * fields(i))
        val varBytes = row.getSizeInBytes - fixedEnd
        if (varBytes > 0) {
          Platform.copyMemory(base, offset + fixedEnd, out, Platform.BYTE_ARRAY_OFFSET + varCursor,
            varBytes)
        }
        // The data moved from fixedEnd to varCursor, and offsets are stored in the upper half.
        val shift = (varCursor - fixedEnd).toLong << 32
        val ordinals = varLengthOrdinals(i)
        var v = 0
        while (v < ordinals.length) {
          val ordinal = ordinals(v)
          if (!row.isNullAt(ordinal)) {
            val slot = slots + 8L * ordinal
            Platform.putLong(out, slot, Platform.getLong(out, slot) + shift)
          }
          v += 1
        }
        varCursor += varBytes
      }
      i += 1
    }
    result.pointTo(out, size)
    result
  }

  /**
   * Zeroes `bytes` (a multiple of 8) of the buffer from `offset`, a word at a time: a few words
   * per call, where Unsafe.setMemory would be a native call each time (not intrinsic in JDK 17).
   */
  private def zero(offset: Long, bytes: Int): Unit = {
    var word = 0
    while (word < bytes) {
      Platform.putLong(buffer, offset + word, 0L)
      word += 8
    }
  }

  /** ORs `bits` (bit b for field b) into the output's null bits from field `at` on. */
  private def orNullBits(at: Int, bits: Long): Unit = if (bits != 0L) {
    val word = Platform.BYTE_ARRAY_OFFSET + 8L * (at >>> 6)
    val shift = at & 63
    Platform.putLong(buffer, word, Platform.getLong(buffer, word) | (bits << shift))
    if (shift != 0 && (bits >>> (64 - shift)) != 0L) {
      Platform.putLong(buffer, word + 8, Platform.getLong(buffer, word + 8) | (bits >>> (64 - shift)))
    }
  }

  private def copyNullBits(base: AnyRef, offset: Long, input: Int): Unit = {
    var remaining = fields(input)
    var w = 0
    while (remaining > 0) {
      val mask = if (remaining >= 64) -1L else (1L << remaining) - 1
      orNullBits(firstField(input) + 64 * w, Platform.getLong(base, offset + 8L * w) & mask)
      remaining -= 64
      w += 1
    }
  }

  private def setNullBits(from: Int, count: Int): Unit = {
    var remaining = count
    var at = from
    while (remaining > 0) {
      orNullBits(at, if (remaining >= 64) -1L else (1L << remaining) - 1)
      remaining -= 64
      at += 64
    }
  }
}
