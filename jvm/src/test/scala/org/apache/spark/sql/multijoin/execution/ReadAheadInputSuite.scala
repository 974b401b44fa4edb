package org.apache.spark.sql.multijoin.execution

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.types.{IntegerType, StringType, StructField, StructType}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

/** How the merge reads each sorted input: in batches copied into two arenas (ReadAheadInput). */
class ReadAheadInputSuite extends AnyFunSuite {

  private val schema = StructType(Seq(StructField("id", IntegerType), StructField("text", StringType)))

  /** Rows handed over as a sorted shuffle hands them: one UnsafeRow object, overwritten each time. */
  private def input(rows: Seq[(Int, String)]): InputInKeyOrder = {
    val project = UnsafeProjection.create(schema)
    RowsInKeyOrder(rows.iterator.map { case (id, text) => project(InternalRow(id, UTF8String.fromString(text))) })
  }

  private def read(row: UnsafeRow): (Int, String) = (row.getInt(0), row.getUTF8String(1).toString)

  private def rowsOfManySizes(count: Int): Seq[(Int, String)] = {
    val random = new Random(3)
    (0 until count).map(i => (i, "x" * random.nextInt(300)))
  }

  test("every row comes back as it went in, across batch boundaries and rows larger than a batch") {
    val rows = rowsOfManySizes(500)
    for (batchBytes <- Seq(16, 100, 4096, 1 << 20)) {
      val reader = new ReadAheadInput(input(rows), batchBytes)
      val row = new UnsafeRow(2)
      val back = Iterator.continually(reader.next(row)).takeWhile(identity).map(_ => read(row)).toVector
      assert(back == rows, s"batches of $batchBytes bytes")
    }
  }

  test("the row read before the current one stays valid, as the merge's two slots per input need") {
    val rows = rowsOfManySizes(300)
    val reader = new ReadAheadInput(input(rows), 256)
    val slots = Array(new UnsafeRow(2), new UnsafeRow(2))
    assert(reader.next(slots(0)))
    for (i <- 1 until rows.size) {
      assert(reader.next(slots(i % 2)))
      assert(read(slots((i - 1) % 2)) == rows(i - 1), s"row ${i - 1} after reading row $i")
      assert(read(slots(i % 2)) == rows(i))
    }
    assert(!reader.next(slots(0)))
  }

  test("an empty input has no row, and stays exhausted") {
    val reader = new ReadAheadInput(input(Nil), 64)
    val row = new UnsafeRow(2)
    assert(!reader.next(row))
    assert(!reader.next(row))
  }
}
