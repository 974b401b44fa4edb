package org.apache.spark.sql.multijoin.execution

import java.nio.file.Files

import org.apache.spark.sql.catalyst.expressions.{Ascending, SortOrder}
import org.apache.spark.sql.catalyst.plans.{FullOuter, Inner, LeftOuter}
import org.apache.spark.sql.catalyst.plans.physical.{ClusteredDistribution, HashPartitioning, UnknownPartitioning}
import org.apache.spark.sql.execution.{SortExec, SparkPlan}
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.multijoin.{ExtensionSession, MultiJoinConf}
import org.apache.spark.util.Utils
import org.scalatest.funsuite.AnyFunSuite

/**
 * The operator of a collapsed chain (MultiJoinExec), planned and run in a local session with the
 * extension: what it asks of its inputs and reports of its output (the contract EnsureRequirements
 * and the operators above plan against), and the rows of small FULL, LEFT and INNER multi-joins,
 * with each key's duplicates and null keys, against the rows docs/semantics.md gives them, through
 * generated code and without it. Adaptive execution is off, so the plans are the ones that run.
 */
class MultiJoinExecSuite extends AnyFunSuite with ExtensionSession {

  private lazy val warehouse = Files.createTempDirectory("multijoin-exec-suite").toFile

  override protected def sessionConfs: Map[String, String] = Map(
    "spark.sql.adaptive.enabled" -> "false",
    "spark.sql.warehouse.dir" -> warehouse.toURI.toString)

  override def beforeAll(): Unit = {
    super.beforeAll()
    views(
      "t1" -> "SELECT * FROM VALUES (1, 10), (2, 20), (2, 21), (CAST(NULL AS INT), 90) AS t(k, a)",
      "t2" -> "SELECT * FROM VALUES (2, 200), (3, 300), (CAST(NULL AS INT), 900) AS t(k, b)",
      "t3" -> "SELECT * FROM VALUES (1, 1000), (2, 2000), (3, 3000), (4, 4000) AS t(k, c)",
      "u1" -> "SELECT id AS k, id + 100 AS j, id AS a FROM range(10)",
      "u2" -> "SELECT id AS k, id + 100 AS j, id AS b FROM range(5, 15)")
  }

  override def afterAll(): Unit = {
    try super.afterAll()
    finally Utils.deleteRecursively(warehouse)
  }

  private val full = "SELECT /*+ MULTI_JOIN */ coalesce(t1.k, t2.k, t3.k) AS k, a, b, c FROM t1 " +
    "FULL JOIN t2 ON t1.k = t2.k FULL JOIN t3 ON coalesce(t1.k, t2.k) = t3.k"
  private val left = "SELECT /*+ MULTI_JOIN */ t1.k, a, b, c FROM t1 " +
    "LEFT JOIN t2 ON t1.k = t2.k LEFT JOIN t3 ON t1.k = t3.k"
  private val inner = "SELECT /*+ MULTI_JOIN */ t1.k, a, b, c FROM t1 " +
    "JOIN t2 ON t1.k = t2.k JOIN t3 ON t2.k = t3.k"

  private type Row = Seq[Option[Any]]
  private def row(values: Any*): Row = values.map(Option(_))

  // Worked out from the semantics: each key's rows of every input, multiplied; an input without
  // the key stands as nulls; a null key matches nothing (FULL keeps every such row, alone).
  private val fullRows = Seq(row(1, 10, null, 1000), row(2, 20, 200, 2000), row(2, 21, 200, 2000),
    row(3, null, 300, 3000), row(4, null, null, 4000), row(null, 90, null, null), row(null, null, 900, null))
  private val leftRows = Seq(row(1, 10, null, 1000), row(2, 20, 200, 2000), row(2, 21, 200, 2000),
    row(null, 90, null, null))
  private val innerRows = Seq(row(2, 20, 200, 2000), row(2, 21, 200, 2000))

  /** The plan `sql` runs with, its rows (in no order) and its one MultiJoinExec after the run. */
  private def run(sql: String): (SparkPlan, Seq[Row], MultiJoinExec) = {
    val execution = query(sql)
    val plan = execution.executedPlan
    val schema = execution.analyzed.schema
    val rows = plan.executeCollect().toSeq.map(_.toSeq(schema).map(Option(_)))
    val operators = plan.collect { case m: MultiJoinExec => m }
    assert(operators.size == 1, plan.treeString)
    (plan, rows, operators.head)
  }

  /** The rows as a multiset: the merge's order within a key and across partitions is free. */
  private def bag(rows: Seq[Row]): Map[Row, Int] = rows.groupBy(identity).map { case (r, copies) => r -> copies.size }

  /** Whether the operator is the source of a whole-stage codegen stage, as EXPLAIN shows it. */
  private def generated(plan: SparkPlan): Boolean =
    plan.treeString.linesIterator.exists(_.matches(""".*\*\(\d+\) MultiJoin .*"""))

  for ((name, sql, expected) <- Seq(("FULL", full, fullRows), ("LEFT", left, leftRows), ("INNER", inner, innerRows))) {
    test(s"$name: the rows the semantics give, through generated code and without it") {
      val (plan, rows, _) = run(sql)
      assert(generated(plan), plan.treeString)
      assert(bag(rows) == bag(expected))
      withConfs(MultiJoinConf.CODEGEN_ENABLED.key -> "false") {
        val (concatenated, rowsAgain, _) = run(sql)
        assert(!generated(concatenated), concatenated.treeString)
        assert(bag(rowsAgain) == bag(expected))
      }
    }
  }

  test("each input is asked to be clustered on its own key, and for no order: one shuffle each, no sort") {
    val planned = query(full).sparkPlan.collectFirst { case m: MultiJoinExec => m }.get
    assert(planned.requiredChildDistribution == planned.keys.map(ClusteredDistribution(_)))
    assert(planned.requiredChildOrdering.forall(_.isEmpty))
    val (plan, _, operator) = run(full)
    assert(plan.collect { case e: ShuffleExchangeExec => e }.size == 3, plan.treeString)
    assert(plan.collect { case s: SortExec => s }.isEmpty, plan.treeString)
    assert(operator.simpleString(100) ==
      s"MultiJoin FullOuter, 3 inputs, keys=${operator.keys.map(_.map(_.sql).mkString("(", ", ", ")")).mkString("[", ", ", "]")}, " +
        s"key columns=[${operator.keyColumns.head}], sorts inputs: all")
  }

  test("the metrics count the rows put out and the rows read from each input") {
    val (_, rows, operator) = run(full)
    assert(operator.metrics("numOutputRows").value == rows.size)
    assert((1 to 3).map(i => operator.metrics(s"numInputRows$i").value) == Seq(4L, 3L, 4L))
  }

  test("FULL reports its output hash-partitioned and sorted on its key column: a GROUP BY on it needs no shuffle") {
    val (_, _, operator) = run(full)
    val Seq(keyColumn) = operator.keyColumns
    assert(operator.output.last == keyColumn)
    assert(operator.outputPartitioning == HashPartitioning(Seq(keyColumn), 4))
    assert(operator.outputOrdering == Seq(SortOrder(keyColumn, Ascending)))
    val (grouped, _, _) = run(s"SELECT k, count(*) FROM ($full) q GROUP BY k")
    assert(grouped.collect { case e: ShuffleExchangeExec => e }.size == 3, grouped.treeString)
    withConfs(MultiJoinConf.FULL_OUTPUT_PARTITIONING.key -> "false") {
      val (_, _, unreported) = run(full)
      assert(unreported.outputPartitioning.isInstanceOf[UnknownPartitioning])
      val (regrouped, _, _) = run(s"SELECT k, count(*) FROM ($full) q GROUP BY k")
      assert(regrouped.collect { case e: ShuffleExchangeExec => e }.size == 4, regrouped.treeString)
    }
  }

  test("FULL on a key of two columns reports no order when a column can be null, and the order when none can") {
    val nullable = run("SELECT /*+ MULTI_JOIN */ * FROM t1 FULL JOIN t2 ON t1.k = t2.k AND t1.a = t2.b")._3
    assert(nullable.outputOrdering.isEmpty)
    val notNull = run("SELECT /*+ MULTI_JOIN */ coalesce(u1.k, u2.k) AS k, coalesce(u1.j, u2.j) AS j, a, b " +
      "FROM u1 FULL JOIN u2 ON u1.k = u2.k AND u1.j = u2.j")._3
    assert(notNull.keys.flatten.forall(!_.nullable))
    assert(notNull.outputOrdering.map(_.child) == notNull.keyColumns)
  }

  test("LEFT and INNER keep the driver's partitioning and key order") {
    for (sql <- Seq(left, inner)) {
      val (_, _, operator) = run(sql)
      assert(Seq(LeftOuter, Inner).contains(operator.joinType))
      assert(operator.outputPartitioning == operator.children.head.outputPartitioning)
      assert(operator.outputOrdering == operator.keys.head.map(SortOrder(_, Ascending)))
    }
  }

  test("an input that arrives in key order (bucketed and sorted on the key) is not sorted again") {
    // A bucket's one file is in key order; Spark reports that order only under this setting.
    withConfs("spark.sql.legacy.bucketedTableScan.outputOrdering" -> "true") {
      spark.table("t3").repartition(4, col("k")).write.bucketBy(4, "k").sortBy("k").saveAsTable("bucketed")
      try {
        val sql = "SELECT /*+ MULTI_JOIN */ coalesce(t1.k, t2.k, bucketed.k) AS k, a, b, c FROM t1 " +
          "FULL JOIN t2 ON t1.k = t2.k FULL JOIN bucketed ON coalesce(t1.k, t2.k) = bucketed.k"
        val (plan, rows, operator) = run(sql)
        assert(operator.simpleString(100).endsWith("sorts inputs: [1, 2]"), plan.treeString)
        assert(plan.collect { case e: ShuffleExchangeExec => e }.size == 2, plan.treeString)
        assert(bag(rows) == bag(fullRows))
      } finally spark.sql("DROP TABLE IF EXISTS bucketed")
    }
  }
}
