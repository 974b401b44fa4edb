package org.apache.spark.sql.multijoin.recognition

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.catalyst.plans.{FullOuter, Inner, JoinType, LeftOuter}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, LogicalPlan}
import org.apache.spark.sql.multijoin.{ExtensionSession, MultiJoinConf}
import org.apache.spark.sql.multijoin.logical.{MultiJoin, MultiJoinHint}
import org.apache.spark.sql.types.{DataType, IntegerType, LongType}
import org.scalatest.funsuite.AnyFunSuite

/**
 * Which hinted chains collapse into one MultiJoin and which fall back, and why (the rule
 * CollapseMultiJoinChain with the hint's rules around it), on the optimized plans of queries in
 * a local session with the extension: the plans the rule really sees, after Spark's own join
 * rules (filter inference, column pruning, implicit casts).
 */
class CollapseMultiJoinChainSuite extends AnyFunSuite with ExtensionSession {

  override def beforeAll(): Unit = {
    super.beforeAll()
    views(
      "t1" -> "SELECT CAST(id AS INT) AS k, id AS a FROM range(8)",
      "t2" -> "SELECT CAST(id AS INT) AS k, id AS b FROM range(2, 10)",
      "t3" -> "SELECT CAST(id AS INT) AS k, id AS c FROM range(4, 12)",
      "wide" -> "SELECT id AS k, id AS d FROM range(8)",
      "doubles" -> "SELECT CAST(id AS DOUBLE) AS k, id AS e FROM range(8)")
  }

  private val fullChain =
    "SELECT /*+ MULTI_JOIN */ coalesce(t1.k, t2.k, t3.k) AS k, a, b, c FROM t1 " +
      "FULL JOIN t2 ON t1.k = t2.k FULL JOIN t3 ON coalesce(t1.k, t2.k) = t3.k"

  private def optimized(sql: String): LogicalPlan = query(sql).optimizedPlan

  private def multiJoins(plan: LogicalPlan): Seq[MultiJoin] = plan.collect { case m: MultiJoin => m }

  /** The one MultiJoin `sql` collapses into, checked to have left no join nor hint behind. */
  private def collapsed(sql: String): MultiJoin = {
    val plan = optimized(sql)
    assert(plan.collect { case j: Join => j }.isEmpty, plan.treeString)
    assert(plan.collect { case h: MultiJoinHint => h }.isEmpty, plan.treeString)
    val found = multiJoins(plan)
    assert(found.size == 1, plan.treeString)
    found.head
  }

  /** Why `sql` does not collapse: the error spark.multijoin.failOnFallback makes of it. */
  private def fallbackReason(sql: String): String =
    withConfs(MultiJoinConf.FAIL_ON_FALLBACK.key -> "true") {
      intercept[AnalysisException](optimized(sql)).getMessage
    }

  /** Asserts that `sql` falls back, and what it then runs: Spark's own joins, with no marker left. */
  private def assertFallsBack(sql: String, joins: Int): Unit = {
    val plan = optimized(sql)
    assert(multiJoins(plan).isEmpty, plan.treeString)
    assert(plan.collect { case j: Join => j }.size == joins, plan.treeString)
    assert(plan.collect { case h: MultiJoinHint => h }.isEmpty, plan.treeString)
  }

  /** The input (0-based) of `join` that reads column `name`. */
  private def inputWith(join: MultiJoin, name: String): Int =
    join.children.indexWhere(_.output.exists(_.name == name))

  private def assertShape(join: MultiJoin, joinType: JoinType, keyType: DataType, columns: String*): Unit = {
    assert(join.joinType == joinType)
    assert(columns.map(inputWith(join, _)) == columns.indices, "one input per table, in the query's order")
    assert(join.keys.forall(key => key.size == 1 && key.head.dataType == keyType), join.keys)
    // Each input's key is over that input's columns only.
    assert(join.keys.zip(join.children).forall { case (key, input) => key.head.references.subsetOf(input.outputSet) })
  }

  test("a FULL chain joined on the coalesce of the keys below each level collapses into one MultiJoin of every input") {
    assertShape(collapsed(fullChain), FullOuter, IntegerType, "a", "b", "c")
    // The query's columns stay as it named them.
    assert(optimized(fullChain).output.map(_.name) == Seq("k", "a", "b", "c"))
  }

  test("a LEFT chain joined on the first input's key collapses, the first input driving") {
    val join = collapsed("SELECT /*+ MULTI_JOIN */ t1.k, a, b, c FROM t1 " +
      "LEFT JOIN t2 ON t1.k = t2.k LEFT JOIN t3 ON t1.k = t3.k")
    assertShape(join, LeftOuter, IntegerType, "a", "b", "c")
  }

  test("INNER joins whose equalities put every input on one key, through another input's key, collapse") {
    val join = collapsed("SELECT /*+ MULTI_JOIN */ t1.k, a, b, c FROM t1 " +
      "JOIN t2 ON t1.k = t2.k JOIN t3 ON t2.k = t3.k")
    assert(join.joinType == Inner && join.children.size == 3)
  }

  test("keys of an int and a bigint column are compared as bigints, which keeps every key apart") {
    val join = collapsed("SELECT /*+ MULTI_JOIN */ coalesce(t1.k, wide.k) AS k, a, d FROM t1 " +
      "FULL JOIN wide ON t1.k = wide.k")
    assertShape(join, FullOuter, LongType, "a", "d")
  }

  test("a filter written around the hinted query reaches the inputs below the MultiJoin") {
    val join = collapsed("SELECT * FROM (SELECT /*+ MULTI_JOIN */ t1.k, a, b FROM t1 " +
      "LEFT JOIN t2 ON t1.k = t2.k) q WHERE q.a > 3")
    assert(join.children(inputWith(join, "a")).collect { case f: Filter => f }.nonEmpty, join.treeString)
  }

  test("a FULL chain that joins every level on the first input's key is another query: it falls back, saying why") {
    val sql = "SELECT /*+ MULTI_JOIN */ t1.k, a, b, c FROM t1 " +
      "FULL JOIN t2 ON t1.k = t2.k FULL JOIN t3 ON t1.k = t3.k"
    assertFallsBack(sql, joins = 2)
    val reason = fallbackReason(sql)
    assert(reason.contains("MULTI_JOIN hint not applied"), reason)
    assert(reason.contains("which is not the coalesce of the keys of the inputs joined below it"), reason)
    assert(reason.contains(s"(${MultiJoinConf.FAIL_ON_FALLBACK.key} is true)"), reason)
  }

  test("a join condition that is not an equality of keys falls back") {
    val sql = "SELECT /*+ MULTI_JOIN */ t1.k, a, b FROM t1 FULL JOIN t2 ON t1.k = t2.k AND t1.a < t2.b"
    assertFallsBack(sql, joins = 1)
    assert(fallbackReason(sql).contains("which is not an equality between an expression of each side"))
  }

  test("levels that compare the key in different types fall back: bigints, then doubles, where 2^53 + 1 and 2^53 meet") {
    val sql = "SELECT /*+ MULTI_JOIN */ * FROM wide FULL JOIN t1 ON wide.k = t1.k " +
      "FULL JOIN doubles ON coalesce(wide.k, t1.k) = doubles.k"
    assertFallsBack(sql, joins = 2)
    assert(fallbackReason(sql).contains("which is not the coalesce of the keys of the inputs joined below it"))
  }

  test("a RIGHT join and a hint over no join fall back, each naming what it found") {
    val right = "SELECT /*+ MULTI_JOIN */ t2.k, a, b FROM t1 RIGHT JOIN t2 ON t1.k = t2.k"
    assertFallsBack(right, joins = 1)
    assert(fallbackReason(right).contains("is RIGHT OUTER; MULTI_JOIN collapses chains of"))
    assert(fallbackReason("SELECT /*+ MULTI_JOIN */ k, a FROM t1").contains("no join below the hint"))
  }

  test("with spark.multijoin.enabled false the hint is ignored, never an error") {
    withConfs(MultiJoinConf.ENABLED.key -> "false", MultiJoinConf.FAIL_ON_FALLBACK.key -> "true") {
      assertFallsBack(fullChain, joins = 2)
    }
  }

  test("the hint takes no parameters") {
    val error = intercept[AnalysisException](query(
      "SELECT /*+ MULTI_JOIN(t2) */ t1.k, a, b FROM t1 FULL JOIN t2 ON t1.k = t2.k").analyzed)
    assert(error.getMessage.contains("The MULTI_JOIN hint takes no parameters, got: "), error.getMessage)
  }
}
