package org.apache.spark.sql.multijoin

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayData, MapData}
import org.apache.spark.sql.types.{DataType, Decimal}
import org.apache.spark.unsafe.types.{CalendarInterval, UTF8String}

/**
 * N rows seen as one, the way JoinedRow shows two: field `i` is field `offsetInRow(i)` of row
 * `rowOf(i)`. The lookups are precomputed so each access is O(1) whatever N is (nesting
 * JoinedRows would cost one hop per input).
 */
private[multijoin] final class MultiJoinedRow(fieldsPerRow: Array[Int]) extends InternalRow {

  val rows: Array[InternalRow] = new Array[InternalRow](fieldsPerRow.length)

  private[this] val rowOf: Array[Int] =
    fieldsPerRow.zipWithIndex.flatMap { case (n, row) => Array.fill(n)(row) }
  private[this] val offsetInRow: Array[Int] = fieldsPerRow.flatMap(n => 0 until n)

  override def numFields: Int = rowOf.length

  @inline private def row(i: Int): InternalRow = rows(rowOf(i))

  override def isNullAt(i: Int): Boolean = row(i).isNullAt(offsetInRow(i))
  override def getBoolean(i: Int): Boolean = row(i).getBoolean(offsetInRow(i))
  override def getByte(i: Int): Byte = row(i).getByte(offsetInRow(i))
  override def getShort(i: Int): Short = row(i).getShort(offsetInRow(i))
  override def getInt(i: Int): Int = row(i).getInt(offsetInRow(i))
  override def getLong(i: Int): Long = row(i).getLong(offsetInRow(i))
  override def getFloat(i: Int): Float = row(i).getFloat(offsetInRow(i))
  override def getDouble(i: Int): Double = row(i).getDouble(offsetInRow(i))
  override def getDecimal(i: Int, precision: Int, scale: Int): Decimal =
    row(i).getDecimal(offsetInRow(i), precision, scale)
  override def getUTF8String(i: Int): UTF8String = row(i).getUTF8String(offsetInRow(i))
  override def getBinary(i: Int): Array[Byte] = row(i).getBinary(offsetInRow(i))
  override def getInterval(i: Int): CalendarInterval = row(i).getInterval(offsetInRow(i))
  override def getStruct(i: Int, numFields: Int): InternalRow =
    row(i).getStruct(offsetInRow(i), numFields)
  override def getArray(i: Int): ArrayData = row(i).getArray(offsetInRow(i))
  override def getMap(i: Int): MapData = row(i).getMap(offsetInRow(i))
  override def get(i: Int, dataType: DataType): AnyRef = row(i).get(offsetInRow(i), dataType)

  override def setNullAt(i: Int): Unit = row(i).setNullAt(offsetInRow(i))
  override def update(i: Int, value: Any): Unit = row(i).update(offsetInRow(i), value)

  override def copy(): InternalRow = {
    val copied = new MultiJoinedRow(fieldsPerRow)
    rows.indices.foreach(r => copied.rows(r) = if (rows(r) == null) null else rows(r).copy())
    copied
  }

  override def toString: String = rows.mkString("[", ", ", "]")
}
