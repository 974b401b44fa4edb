package org.apache.spark.sql.multijoin.bloom

import java.nio.ByteBuffer

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Literal}
import org.apache.spark.sql.catalyst.expressions.codegen.GenerateUnsafeProjection
import org.apache.spark.sql.types.{BinaryType, LongType}
import org.scalatest.funsuite.AnyFunSuite

/**
 * multijoin_hash_in, the changed_keys MERGE's exact target filter: the same answer as set
 * membership, interpreted and in generated code, for any longs (0 and the extremes included),
 * and NULL for a NULL hash.
 */
class MultiJoinHashInSuite extends AnyFunSuite {
  private val (_, _, build) = MultiJoinHashIn.function
  private val hash = BoundReference(0, LongType, nullable = true)

  private def bytesOf(values: Seq[Long]): Array[Byte] = {
    val buffer = ByteBuffer.allocate(values.size * 8)
    values.foreach(buffer.putLong)
    buffer.array()
  }

  /** The function's answers for `probes`, interpreted and generated. */
  private def answers(members: Seq[Long], probes: Seq[java.lang.Long]): (Seq[Any], Seq[Any]) = {
    val expression = build(Seq(Literal(bytesOf(members)), hash))
    val interpreted = probes.map(p => expression.eval(InternalRow(p)))
    val projection = GenerateUnsafeProjection.generate(Seq(expression))
    val generated = probes.map { p =>
      val row = projection(InternalRow(p))
      if (row.isNullAt(0)) null else row.getBoolean(0)
    }
    (interpreted, generated)
  }

  test("membership of random longs, the extremes and 0, for sets of many sizes") {
    val random = new Random(11)
    val edges = Seq(0L, 1L, -1L, Long.MinValue, Long.MaxValue)
    for (size <- Seq(0, 1, 7, 16, 1000, 50000)) {
      val members = Seq.fill(size)(random.nextLong()) ++ edges.filter(_ => random.nextBoolean())
      val others = Seq.fill(2000)(random.nextLong())
      val probes = (members.take(2000) ++ others ++ edges).map(Long.box)
      val expected = probes.map(p => members.contains(p.longValue))
      val (interpreted, generated) = answers(members ++ members.take(10), probes)
      assert(interpreted == expected, s"interpreted, $size members")
      assert(generated == expected, s"generated code, $size members")
    }
  }

  test("a NULL hash gives NULL") {
    val (interpreted, generated) = answers(Seq(1L, 2L), Seq(null, 2L))
    assert(interpreted == Seq(null, true))
    assert(generated == Seq(null, true))
  }

  test("bad arguments fail naming the function") {
    val partial = intercept[IllegalArgumentException](
      build(Seq(Literal(Array[Byte](1, 2, 3)), hash)).eval(InternalRow(1L)))
    assert(partial.getMessage.contains("multijoin_hash_in: hashes must be whole 8-byte longs, got 3 bytes"))
    val notConstant = build(Seq(BoundReference(1, BinaryType, nullable = true), hash))
    assert(notConstant.checkInputDataTypes().isFailure)
    assert(intercept[IllegalArgumentException](build(Seq(hash))).getMessage.contains("two arguments"))
  }
}
