package org.apache.spark.sql.multijoin.recognition

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/** Which key types the chain may compare in a wider type without changing which keys are equal. */
class KeyTypesSuite extends AnyFunSuite {
  import KeyTypes._

  test("an integral type widens exactly to itself and to every wider integral type, not narrower") {
    val integrals = Seq(ByteType, ShortType, IntegerType, LongType)
    for ((from, i) <- integrals.zipWithIndex; (to, j) <- integrals.zipWithIndex) {
      assert(isExactWidening(from, to) == (i <= j), s"$from -> $to")
    }
  }

  test("integral and decimal types widen only to a decimal that holds every value") {
    assert(isExactWidening(IntegerType, DecimalType(10, 0)))
    assert(!isExactWidening(IntegerType, DecimalType(9, 0)))
    assert(isExactWidening(LongType, DecimalType(20, 0)))
    assert(!isExactWidening(LongType, DecimalType(19, 1)))
    assert(isExactWidening(DecimalType(5, 2), DecimalType(7, 3)))
    assert(!isExactWidening(DecimalType(5, 2), DecimalType(5, 1)))
  }

  test("floating point: float to double and small integrals are exact; bigint to double is not") {
    assert(isExactWidening(FloatType, DoubleType))
    assert(isExactWidening(IntegerType, DoubleType))
    assert(isExactWidening(ShortType, FloatType))
    assert(!isExactWidening(IntegerType, FloatType)) // 2^24 + 1 and 2^24 meet
    assert(!isExactWidening(LongType, DoubleType)) // 2^53 + 1 and 2^53 meet
    assert(!isExactWidening(DoubleType, FloatType))
  }

  test("no cast from or to string is exact") {
    assert(!isExactWidening(IntegerType, StringType))
    assert(!isExactWidening(StringType, IntegerType))
    assert(isExactWidening(StringType, StringType))
  }

  test("the common exact type is the widest of the types when one holds them all") {
    assert(commonExactType(Seq(IntegerType, LongType, ShortType)) == Some(LongType))
    assert(commonExactType(Seq(FloatType, DoubleType)) == Some(DoubleType))
    assert(commonExactType(Seq(IntegerType)) == Some(IntegerType))
  }

  test("the common exact type of integrals and decimals is the smallest decimal holding them all") {
    // int needs 10 integer digits, decimal(5,2) two decimal places: decimal(12,2).
    assert(commonExactType(Seq(IntegerType, DecimalType(5, 2))) == Some(DecimalType(12, 2)))
    assert(commonExactType(Seq(DecimalType(38, 0), DecimalType(38, 38))).isEmpty) // 76 digits
  }

  test("there is no common exact type across unrelated types") {
    assert(commonExactType(Seq(LongType, DoubleType)).isEmpty)
    assert(commonExactType(Seq(IntegerType, StringType)).isEmpty)
    assert(commonExactType(Seq(DateType, TimestampType)).isEmpty)
  }

  test("keys must be orderable: maps are not, arrays and structs of orderable types are") {
    assert(isOrderable(IntegerType) && isOrderable(StringType))
    assert(isOrderable(ArrayType(IntegerType)))
    assert(isOrderable(StructType(Seq(StructField("a", LongType)))))
    assert(!isOrderable(MapType(IntegerType, IntegerType)))
  }
}
