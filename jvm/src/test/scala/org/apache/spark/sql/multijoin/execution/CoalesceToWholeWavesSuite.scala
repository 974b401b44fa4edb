package org.apache.spark.sql.multijoin.execution

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/** How the merge stage's shuffle partitions are regrouped into whole task waves (CoalesceToWholeWaves). */
class CoalesceToWholeWavesSuite extends AnyFunSuite {
  import CoalesceToWholeWaves.ranges

  /** What every split must be: `count` contiguous, non-empty ranges covering every partition. */
  private def assertCovers(split: Seq[(Int, Int)], partitions: Int, count: Int): Unit = {
    assert(split.size == count, split)
    assert(split.head._1 == 0 && split.last._2 == partitions, split)
    assert(split.forall { case (start, end) => start < end }, split)
    assert(split.zip(split.tail).forall { case (a, b) => a._2 == b._1 }, split)
  }

  private def bytesOf(bytes: Array[Long], range: (Int, Int)): Long = bytes.slice(range._1, range._2).sum

  test("equal partitions split into ranges of equal size") {
    assert(ranges(Array.fill(12)(100L), 4) == Seq((0, 3), (3, 6), (6, 9), (9, 12)))
    assert(ranges(Array.fill(10)(1L), 5) == Seq((0, 2), (2, 4), (4, 6), (6, 8), (8, 10)))
  }

  test("one range is everything, and as many ranges as partitions is one partition each") {
    val bytes = Array(5L, 1L, 9L, 3L)
    assert(ranges(bytes, 1) == Seq((0, 4)))
    assert(ranges(bytes, 4) == Seq((0, 1), (1, 2), (2, 3), (3, 4)))
  }

  test("a partition larger than its share ends its range; the rest is shared out after it") {
    val bytes = Array(1000L, 10L, 10L, 10L, 10L, 10L, 10L)
    val split = ranges(bytes, 3)
    assertCovers(split, bytes.length, 3)
    assert(split.head == ((0, 1)))
  }

  test("partitions with no bytes still give non-empty ranges") {
    assertCovers(ranges(Array.fill(6)(0L), 3), 6, 3)
    assertCovers(ranges(Array(0L, 0L, 0L, 50L), 2), 4, 2)
  }

  test("each range ends where the running total reaches its share: no range exceeds its share by more than one partition") {
    val random = new Random(42)
    for (_ <- 1 to 500) {
      val partitions = 1 + random.nextInt(60)
      val bytes = Array.fill(partitions)(if (random.nextInt(4) == 0) 0L else random.nextInt(1000).toLong)
      val count = 1 + random.nextInt(partitions)
      val split = ranges(bytes, count)
      assertCovers(split, partitions, count)
      val share = bytes.sum.toDouble / count
      split.foreach { range =>
        assert(bytesOf(bytes, range) <= share + bytes.max, s"${bytes.toSeq} into $count: $split")
      }
    }
  }
}
