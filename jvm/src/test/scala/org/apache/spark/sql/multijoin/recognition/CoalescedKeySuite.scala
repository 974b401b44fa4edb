package org.apache.spark.sql.multijoin.recognition

import org.apache.spark.sql.catalyst.expressions.{Add, Alias, AttributeReference, Cast, Coalesce, Literal}
import org.apache.spark.sql.catalyst.plans.{FullOuter, LeftOuter}
import org.apache.spark.sql.catalyst.plans.logical.{LocalRelation, Project}
import org.apache.spark.sql.catalyst.plans.physical.{CoalescedBoundary, CoalescedHashPartitioning, HashPartitioning, RoundRobinPartitioning}
import org.apache.spark.sql.multijoin.logical.MultiJoin
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/** The coalesced key of a FULL multi-join and the output partitioning it proves (CoalescedKey). */
class CoalescedKeySuite extends AnyFunSuite {
  import CoalescedKey._

  private val a1 = AttributeReference("a", IntegerType, nullable = false)()
  private val b1 = AttributeReference("b", StringType, nullable = false)()
  private val a2 = AttributeReference("a", IntegerType, nullable = false)()
  private val b2 = AttributeReference("b", StringType, nullable = false)()
  private val keys = Seq(Seq(a1, b1), Seq(a2, b2))
  private val output = MultiJoin.output(FullOuter, Seq(Seq(a1, b1), Seq(a2, b2)))
  private val coalescedKey = of(keys, output).get

  test("the coalesced key is, per component, the coalesce of every input's key over the nullable output") {
    assert(coalescedKey == Seq(
      Coalesce(Seq(a1.withNullability(true), a2.withNullability(true))),
      Coalesce(Seq(b1.withNullability(true), b2.withNullability(true)))))
  }

  test("there is no coalesced key when an input's key is not null for a missing row") {
    assert(of(Seq(Seq(Coalesce(Seq(a1, Literal(0)))), Seq(a2)), output).isEmpty)
  }

  test("inputs hashed alike on the whole key give the output that partitioning on the coalesced key") {
    val inputs = Seq(HashPartitioning(Seq(a1, b1), 8), HashPartitioning(Seq(a2, b2), 8))
    assert(partitioning(coalescedKey, keys, inputs) == Some(HashPartitioning(coalescedKey, 8)))
  }

  test("inputs hashed alike on part of the key give the partitioning on that part of the coalesced key") {
    val inputs = Seq(HashPartitioning(Seq(b1), 4), HashPartitioning(Seq(b2), 4))
    assert(partitioning(coalescedKey, keys, inputs) == Some(HashPartitioning(Seq(coalescedKey(1)), 4)))
  }

  test("AQE's coalescing is kept when every input has the same ranges") {
    val ranges = Seq(CoalescedBoundary(0, 3), CoalescedBoundary(3, 8))
    val inputs = Seq(
      CoalescedHashPartitioning(HashPartitioning(Seq(a1), 8), ranges),
      CoalescedHashPartitioning(HashPartitioning(Seq(a2), 8), ranges))
    assert(partitioning(coalescedKey, keys, inputs) ==
      Some(CoalescedHashPartitioning(HashPartitioning(Seq(coalescedKey(0)), 8), ranges)))
  }

  test("no partitioning when the inputs are partitioned differently") {
    def check(inputs: Seq[org.apache.spark.sql.catalyst.plans.physical.Partitioning]): Unit =
      assert(partitioning(coalescedKey, keys, inputs).isEmpty, inputs)
    check(Seq(HashPartitioning(Seq(a1), 8), HashPartitioning(Seq(a2), 16))) // partition counts
    check(Seq(HashPartitioning(Seq(a1), 8), HashPartitioning(Seq(b2), 8))) // components
    check(Seq(HashPartitioning(Seq(a1), 8), RoundRobinPartitioning(8))) // not a hash
    check(Seq(HashPartitioning(Seq(Add(a1, Literal(1))), 8), HashPartitioning(Seq(Add(a2, Literal(1))), 8)))
    val ranges = Seq(CoalescedBoundary(0, 8))
    check(Seq(
      CoalescedHashPartitioning(HashPartitioning(Seq(a1), 8), ranges),
      HashPartitioning(Seq(a2), 8))) // coalesced by AQE on one side only
  }

  test("the key column: the query's own spelling of the coalesced key reads it, and nothing else above does") {
    val k1 = AttributeReference("k", IntegerType, nullable = false)()
    val k2 = AttributeReference("k", IntegerType, nullable = false)()
    val join = MultiJoin(Seq(LocalRelation(k1), LocalRelation(k2)), Seq(Seq(k1), Seq(k2)), FullOuter)
    val Seq(n1, n2) = join.output
    // The query names the key the other way round, with the implicit cast of a wider union.
    val query = Project(Seq(Alias(Coalesce(Seq(Cast(n2, IntegerType), n1)), "key")(), n1), join)
    val withColumns = addKeyColumns(query)
    val full = withColumns.collectFirst { case m: MultiJoin => m }.get
    assert(full.keyColumns.map(_.dataType) == Seq(IntegerType))
    assert(full.output.last == full.keyColumns.head)
    assert(!full.references.contains(full.keyColumns.head), "produced, not read")
    assert(withColumns.output == query.output, "the query's columns are unchanged")
    assert(withColumns.expressions.flatMap(_.collect { case c: Coalesce => c }).isEmpty)
    assert(withColumns.references.contains(full.keyColumns.head))
    // A query that does not name the coalesced key gets no key column.
    val unnamed = addKeyColumns(Project(Seq(n1), join))
    assert(unnamed.collectFirst { case m: MultiJoin => m.keyColumns }.get.isEmpty)
  }

  test("no key column for floating point keys nor LEFT multi-joins") {
    val d1 = AttributeReference("d", DoubleType, nullable = false)()
    val d2 = AttributeReference("d", DoubleType, nullable = false)()
    val full = MultiJoin(Seq(LocalRelation(d1), LocalRelation(d2)), Seq(Seq(d1), Seq(d2)), FullOuter)
    val Seq(n1, n2) = full.output
    val onDoubles = Project(Seq(Alias(Coalesce(Seq(n2, n1)), "key")()), full)
    assert(addKeyColumns(onDoubles) == onDoubles) // -0.0 and 0.0 are equal keys but not the same value
    val left = full.copy(joinType = LeftOuter)
    val onLeft = Project(Seq(Alias(Coalesce(Seq(left.output(1), left.output(0))), "key")()), left)
    assert(addKeyColumns(onLeft) == onLeft)
  }
}
