package org.apache.spark.sql.multijoin.execution

import org.apache.spark.sql.catalyst.expressions.{BoundReference, Cast, Expression, UnsafeRow}
import org.apache.spark.sql.multijoin.recognition.KeyTypes
import org.apache.spark.sql.types._

/**
 * A key of one integral, date or timestamp column, read straight from the row as a long (whose
 * order is the key's order): the column itself, or an exact widening cast of an integral column
 * to a wider integral type, which leaves the value as it is.
 */
private[multijoin] final case class KeyAsLong(ordinal: Int, bytes: Int) {
  def read(row: UnsafeRow): Long = bytes match {
    case 8 => row.getLong(ordinal)
    case 4 => row.getInt(ordinal)
    case 2 => row.getShort(ordinal)
    case _ => row.getByte(ordinal)
  }
}

private[multijoin] object KeyAsLong {
  /** How many bytes the column's value takes in an UnsafeRow slot, for the types read as longs. */
  private def bytes(t: DataType): Option[Int] = t match {
    case LongType | TimestampType | TimestampNTZType => Some(8)
    case IntegerType | DateType => Some(4)
    case ShortType => Some(2)
    case ByteType => Some(1)
    case _ => None
  }

  /** The reader of a bound key, if it is such a column; None otherwise. */
  def of(boundKey: Seq[Expression]): Option[KeyAsLong] = boundKey match {
    case Seq(column: BoundReference) => bytes(column.dataType).map(KeyAsLong(column.ordinal, _))
    case Seq(cast: Cast) => cast.child match {
      case column: BoundReference if column.dataType.isInstanceOf[IntegralType] &&
          cast.dataType.isInstanceOf[IntegralType] &&
          KeyTypes.isExactWidening(column.dataType, cast.dataType) =>
        bytes(column.dataType).map(KeyAsLong(column.ordinal, _))
      case _ => None
    }
    case _ => None
  }

  /** Readers for every input, or None unless every input's key has one. */
  def forAll(boundKeys: Seq[Seq[Expression]]): Option[Array[KeyAsLong]] = {
    val readers = boundKeys.map(of)
    if (readers.forall(_.isDefined)) Some(readers.map(_.get).toArray) else None
  }
}
