package org.apache.spark.sql.multijoin.recognition

import org.apache.spark.sql.catalyst.expressions.RowOrdering
import org.apache.spark.sql.types._

/**
 * Which key types can be compared in one wider type without changing which keys are equal.
 * A cast is an exact widening when it is injective and turns no value into null: integral to a
 * wider integral, integral or decimal to a decimal that holds it, float to double, small
 * integrals to floating point. bigint to double is not one (2^53 + 1 and 2^53 meet), nor is any
 * cast from or to string.
 */
private[multijoin] object KeyTypes {

  private def integralRank(t: DataType): Int = t match {
    case ByteType => 1
    case ShortType => 2
    case IntegerType => 3
    case LongType => 4
    case _ => 0
  }

  def isExactWidening(from: DataType, to: DataType): Boolean = (from, to) match {
    case (f, t) if f == t => true
    case (f: IntegralType, t: IntegralType) => integralRank(f) <= integralRank(t)
    case (f: IntegralType, t: DecimalType) => t.isWiderThan(f)
    case (f: DecimalType, t: DecimalType) => t.isWiderThan(f)
    case (FloatType, DoubleType) => true
    case (ByteType | ShortType | IntegerType, DoubleType) => true
    case (ByteType | ShortType, FloatType) => true
    case _ => false
  }

  /** The type among `types` (or the smallest decimal holding them all) every type widens to. */
  def commonExactType(types: Seq[DataType]): Option[DataType] = {
    val decimalCandidate = if (types.forall(t => t.isInstanceOf[DecimalType] ||
        t.isInstanceOf[IntegralType])) {
      val decimals = types.map {
        case d: DecimalType => d
        case integral => DecimalType.forType(integral)
      }
      val integerDigits = decimals.map(d => d.precision - d.scale).max
      val scale = decimals.map(_.scale).max
      if (integerDigits + scale <= DecimalType.MAX_PRECISION) {
        Some(DecimalType(integerDigits + scale, scale))
      } else None
    } else None
    (types ++ decimalCandidate).find(target => types.forall(isExactWidening(_, target)))
  }

  def isOrderable(t: DataType): Boolean = RowOrdering.isOrderable(t)
}
