package org.apache.spark.sql.multijoin.execution

import java.util.concurrent.TimeoutException

import scala.concurrent.Await
import scala.concurrent.duration._
import scala.reflect.ClassTag
import scala.util.Random

import org.apache.spark.{SparkConf, SparkContext}
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Cast}
import org.apache.spark.sql.catalyst.plans.{FullOuter, Inner, JoinType, LeftOuter}
import org.apache.spark.sql.types._
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * The merge of a multi-join (MultiJoinScanner, fed by ReadAheadInput): FULL, LEFT and INNER over
 * sorted inputs, against the semantics worked out directly (MergeHarness.expected).
 *
 * The merges run in a task of a local SparkContext: a key with several rows in an input is
 * buffered in memory the task manages, which spills through the block manager.
 */
class MultiJoinScannerSuite extends AnyFunSuite with BeforeAndAfterAll {
  import MergeHarness._

  private var spark: SparkContext = _

  override def beforeAll(): Unit = {
    super.beforeAll()
    spark = new SparkContext(new SparkConf()
      // A slot per merge that may spin forever (see inTask) before the suite gives up on them.
      .setMaster("local[2]")
      .setAppName(getClass.getSimpleName)
      .set("spark.ui.enabled", "false")
      .set("spark.driver.host", "127.0.0.1")
      .set("spark.driver.bindAddress", "127.0.0.1"))
  }

  override def afterAll(): Unit = {
    try if (spark != null) spark.stop()
    finally super.afterAll()
  }

  /**
   * Runs `work` in one task and returns its result. A broken merge can loop forever (INNER's
   * leapfrog that never meets): the test then fails after a minute instead of hanging the run.
   */
  private def inTask[T: ClassTag](work: () => T): T = {
    val job = spark.parallelize(Seq(0), 1).map(_ => work()).collectAsync()
    try Await.result(job, 1.minute).head
    catch {
      case _: TimeoutException =>
        job.cancel()
        fail("the merge did not finish within a minute")
    }
  }

  private def row(key: Int, tag: String): Row = (Some(key), tag)
  private def nullKey(tag: String): Row = (None, tag)

  /** Merges with both ways of reading keys, checks they agree, and returns the combinations. */
  private def merged(joinType: JoinType, inputs: Seq[Row]*): Seq[Combination] = {
    val (asLongs, throughOrdering) = inTask(() =>
      (merge(joinType, inputs, keysAsLongs = true), merge(joinType, inputs, keysAsLongs = false)))
    assert(asLongs.combinations == throughOrdering.combinations)
    asLongs.combinations
  }

  private def assertSameRows(actual: Seq[Combination], expected: Seq[Combination]): Unit =
    assert(asBag(actual) == asBag(expected))

  test("FULL: a key missing from an input gets that input's null row; keys come out in order") {
    val t1 = Seq(row(1, "a1"), row(3, "a3"))
    val t2 = Seq(row(2, "b2"), row(3, "b3"))
    val t3 = Seq(row(3, "c3"), row(4, "c4"))
    val out = merged(FullOuter, t1, t2, t3)
    assert(out == Seq(
      Seq(Some(row(1, "a1")), None, None),
      Seq(None, Some(row(2, "b2")), None),
      Seq(Some(row(3, "a3")), Some(row(3, "b3")), Some(row(3, "c3"))),
      Seq(None, None, Some(row(4, "c4")))))
  }

  test("FULL: duplicate keys give the product of every input's group") {
    val t1 = Seq(row(1, "a"), row(1, "b"))
    val t2 = Seq(row(1, "x"), row(1, "y"), row(1, "z"))
    val t3 = Seq(row(1, "only"))
    val out = merged(FullOuter, t1, t2, t3)
    assert(out.size == 6)
    assertSameRows(out, for (a <- t1; b <- t2) yield Seq(Some(a), Some(b), Some(t3.head)))
  }

  test("FULL: a null-key row matches nothing and comes out alone, once") {
    val t1 = Seq(nullKey("a-null"), row(1, "a1"))
    val t2 = Seq(nullKey("b-null1"), nullKey("b-null2"), row(1, "b1"))
    val out = merged(FullOuter, t1, t2)
    assertSameRows(out, Seq(
      Seq(Some(nullKey("a-null")), None),
      Seq(None, Some(nullKey("b-null1"))),
      Seq(None, Some(nullKey("b-null2"))),
      Seq(Some(row(1, "a1")), Some(row(1, "b1")))))
  }

  test("LEFT: exactly the driver's rows, matched or null-padded; the others' other keys and null keys dropped") {
    val driver = Seq(nullKey("d-null"), row(1, "d1"), row(3, "d3a"), row(3, "d3b"))
    val t2 = Seq(nullKey("x-null"), row(0, "x0"), row(3, "x3"), row(5, "x5"))
    val t3 = Seq(row(1, "y1"), row(2, "y2"))
    val out = merged(LeftOuter, driver, t2, t3)
    assertSameRows(out, Seq(
      Seq(Some(nullKey("d-null")), None, None),
      Seq(Some(row(1, "d1")), None, Some(row(1, "y1"))),
      Seq(Some(row(3, "d3a")), Some(row(3, "x3")), None),
      Seq(Some(row(3, "d3b")), Some(row(3, "x3")), None)))
  }

  test("INNER: only the keys every input has, skipping the gaps of each") {
    val t1 = Seq(nullKey("a-null"), row(1, "a1"), row(2, "a2"), row(4, "a4"), row(7, "a7"))
    val t2 = Seq(row(2, "b2"), row(3, "b3"), row(4, "b4a"), row(4, "b4b"), row(7, "b7"))
    val t3 = Seq(nullKey("c-null"), row(0, "c0"), row(4, "c4"), row(6, "c6"), row(7, "c7"))
    val out = merged(Inner, t1, t2, t3)
    assertSameRows(out, Seq(
      Seq(Some(row(4, "a4")), Some(row(4, "b4a")), Some(row(4, "c4"))),
      Seq(Some(row(4, "a4")), Some(row(4, "b4b")), Some(row(4, "c4"))),
      Seq(Some(row(7, "a7")), Some(row(7, "b7")), Some(row(7, "c7")))))
  }

  test("empty inputs: FULL pads around them, LEFT needs the driver, INNER gives nothing") {
    val t1 = Seq(row(1, "a1"), row(2, "a2"))
    val empty = Seq.empty[Row]
    assert(merged(FullOuter, empty, t1) == Seq(Seq(None, Some(row(1, "a1"))), Seq(None, Some(row(2, "a2")))))
    assert(merged(FullOuter, empty, empty, empty).isEmpty)
    assert(merged(LeftOuter, empty, t1).isEmpty)
    assert(merged(LeftOuter, t1, empty) == Seq(Seq(Some(row(1, "a1")), None), Seq(Some(row(2, "a2")), None)))
    assert(merged(Inner, t1, empty).isEmpty)
    assert(merged(Inner, empty, t1).isEmpty)
  }

  test("random inputs of every join type give the rows the semantics define, keys in order") {
    val (cases, failures) = inTask { () =>
      val random = new Random(7)
      val results = for {
        joinType <- Seq[JoinType](FullOuter, LeftOuter, Inner)
        _ <- 1 to 150
      } yield {
        val inputs = randomInputs(random, inputs = 2 + random.nextInt(3), maxRows = 8)
        val expectedRows = asBag(expected(joinType, inputs))
        val failed = Seq(true, false).exists { asLongs =>
          val out = merge(joinType, inputs, keysAsLongs = asLongs).combinations
          val keys = keysInOrder(out)
          asBag(out) != expectedRows || keys != keys.sorted
        }
        if (failed) Some(s"$joinType over $inputs") else None
      }
      (results.size, results.flatten)
    }
    assert(cases == 450)
    assert(failures.isEmpty, failures.take(3).mkString("\n"))
  }

  test("a key group past the in-memory threshold spills and still gives every combination") {
    val t1 = (1 to 6).map(i => row(5, s"a$i"))
    val t2 = (1 to 5).map(i => row(5, s"b$i")) :+ row(6, "b6")
    val result = inTask(() => merge(FullOuter, Seq(t1, t2), keysAsLongs = true, inMemoryThreshold = 1, spillThreshold = 2))
    assert(result.spillBytes > 0)
    assertSameRows(result.combinations, expected(FullOuter, Seq(t1, t2)))
  }

  test("the metrics count the rows put out and every row read from each input") {
    val t1 = Seq(nullKey("n"), row(1, "a1"), row(2, "a2"))
    val t2 = Seq(row(2, "b2"), row(2, "b2'"), row(9, "b9"))
    val result = inTask(() => merge(LeftOuter, Seq(t1, t2), keysAsLongs = true))
    assert(result.outputRows == result.combinations.size && result.outputRows == 4)
    assert(result.inputRows == Seq(3, 3))
    assert(result.spillBytes == 0)
  }

  test("as single rows, each combination is the inputs' fields side by side, a missing input's null") {
    val t1 = Seq(row(1, "a1"), row(2, "a2"))
    val t2 = Seq(row(2, "b2"), row(3, "b3"))
    val rows = inTask(() => mergeConcatenated(FullOuter, Seq(t1, t2)))
    assert(rows == Seq(
      Seq(1, "a1", null, null),
      Seq(2, "a2", 2, "b2"),
      Seq(null, null, 3, "b3")))
  }

  test("keys read as longs: a column of an integral, date or timestamp type, or an exact integral widening of one") {
    def reader(key: org.apache.spark.sql.catalyst.expressions.Expression) = KeyAsLong.of(Seq(key))
    assert(reader(BoundReference(2, IntegerType, nullable = true)) == Some(KeyAsLong(2, 4)))
    assert(reader(BoundReference(0, TimestampType, nullable = true)) == Some(KeyAsLong(0, 8)))
    assert(reader(BoundReference(0, DateType, nullable = true)) == Some(KeyAsLong(0, 4)))
    assert(reader(Cast(BoundReference(1, ShortType, nullable = true), LongType)) == Some(KeyAsLong(1, 2)))
    assert(reader(Cast(BoundReference(1, LongType, nullable = true), IntegerType)).isEmpty) // narrowing
    assert(reader(BoundReference(0, StringType, nullable = true)).isEmpty)
    assert(reader(BoundReference(0, DoubleType, nullable = true)).isEmpty)
    assert(KeyAsLong.of(Seq(BoundReference(0, IntegerType, true), BoundReference(1, IntegerType, true))).isEmpty)
    assert(KeyAsLong.forAll(Seq(Seq(BoundReference(0, LongType, true)), Seq(BoundReference(0, StringType, true)))).isEmpty)
  }
}
