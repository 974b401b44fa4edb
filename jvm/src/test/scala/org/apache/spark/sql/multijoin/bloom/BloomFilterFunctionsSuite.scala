package org.apache.spark.sql.multijoin.bloom

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Literal}
import org.apache.spark.sql.types.{Decimal, DecimalType, LongType}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The SQL functions the changed_keys MERGE filters its target with above the hash-list limit
 * (BloomFilterFunctions): a filter built by multijoin_bloom_filter and written as a literal lets
 * every hash it was built from through multijoin_might_contain, and few others.
 */
class BloomFilterFunctionsSuite extends AnyFunSuite {
  private val (_, _, aggregate) = BloomFilterFunctions.aggregate
  private val (_, _, probe) = BloomFilterFunctions.probe

  /** The filter multijoin_bloom_filter(hash, fpp, max_bits) builds from `hashes`, as bytes. */
  private def filterOf(hashes: Seq[Long], fpp: Literal, maxBits: Literal): Array[Byte] = {
    val function = aggregate(Seq(BoundReference(0, LongType, nullable = true), fpp, maxBits))
      .asInstanceOf[DriverKeysBloomFilterAggregate]
    val buffer = function.createAggregationBuffer()
    hashes.foreach(hash => function.update(buffer, InternalRow(hash)))
    function.eval(buffer).asInstanceOf[Array[Byte]]
  }

  private def mightContain(filter: Array[Byte], hash: Long): Boolean =
    probe(Seq(Literal(filter), Literal(hash))).eval().asInstanceOf[Boolean]

  // SQL writes 0.01 as a decimal literal.
  private val onePercent = Literal(Decimal(BigDecimal("0.01")), DecimalType(3, 2))

  test("every hash the filter was built from passes, and about the false positive rate of the others") {
    val random = new Random(7)
    val changed = Seq.fill(20000)(random.nextLong())
    val filter = filterOf(changed, onePercent, Literal(8388608))
    assert(changed.forall(mightContain(filter, _)))
    val others = Seq.fill(20000)(random.nextLong())
    val passed = others.count(mightContain(filter, _)).toDouble / others.size
    assert(passed < 0.02, s"$passed of other hashes passed a filter sized for 1%")
  }

  test("the filter is sized for the distinct hashes, at most max_bits") {
    val random = new Random(8)
    val hashes = Seq.fill(1000)(random.nextLong())
    val sized = filterOf(hashes ++ hashes, onePercent, Literal(8388608L))
    // About 9.6 bits a key at 1%, in whole longs, plus the serialized header.
    assert(sized.length < 1000 * 10 / 8 + 64, s"${sized.length} bytes for 1000 keys")
    val capped = filterOf(hashes, onePercent, Literal(1024))
    assert(capped.length < 1024 / 8 + 64, s"${capped.length} bytes under a cap of 1024 bits")
    assert(hashes.forall(mightContain(capped, _)))
  }

  test("bad arguments fail naming the function and the argument") {
    val hash = BoundReference(0, LongType, nullable = true)
    val notConstant = intercept[IllegalArgumentException](aggregate(Seq(hash, hash, Literal(64))))
    assert(notConstant.getMessage.contains("multijoin_bloom_filter: fpp must be a constant number"))
    val outOfRange = intercept[IllegalArgumentException](aggregate(Seq(hash, Literal(1.5), Literal(64))))
    assert(outOfRange.getMessage.contains("fpp must be in (0, 1)"))
    val tooFewBits = intercept[IllegalArgumentException](aggregate(Seq(hash, onePercent, Literal(8))))
    assert(tooFewBits.getMessage.contains("max_bits at least 64"))
    assert(intercept[IllegalArgumentException](aggregate(Seq(hash))).getMessage.contains("three arguments"))
    assert(intercept[IllegalArgumentException](probe(Seq(hash))).getMessage.contains("two arguments"))
  }
}
