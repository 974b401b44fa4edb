package org.apache.spark.sql.multijoin.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Cast, Expression, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.plans.{FullOuter, Inner, JoinType, LeftOuter}
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/**
 * The merge (MultiJoinScanner) run on plain Scala values, and what it must give, worked out
 * directly from the semantics (docs/semantics.md) instead of by merging.
 *
 * Every input row is (key, tag): an int key, None for null, and a tag naming the row. The inputs
 * must be sorted as Spark sorts them for the operator: ascending, nulls first.
 */
object MergeHarness {
  type Row = (Option[Int], String)
  /** One output row: each input's row, None where that input has none. */
  type Combination = Seq[Option[Row]]

  val Schema: StructType = StructType(Seq(
    StructField("key", IntegerType, nullable = true),
    StructField("tag", StringType, nullable = false)))

  /** What the merge gave, with its metrics. */
  case class Merged(combinations: Seq[Combination], outputRows: Long, inputRows: Seq[Long], spillBytes: Long)

  /**
   * Merges `inputs` with the scanner. `keysAsLongs`: the key is the int column itself, which the
   * scanner reads as a long; otherwise it is that column cast to a decimal, which the scanner
   * compares with the key ordering on projected keys. The rows are handed over the way a sorted
   * shuffle hands them: one UnsafeRow object, overwritten for each row.
   *
   * Must run in a Spark task: a key group of several rows goes into a buffer that takes the
   * task's memory and can spill through the block manager.
   */
  def merge(
      joinType: JoinType,
      inputs: Seq[Seq[Row]],
      keysAsLongs: Boolean,
      inMemoryThreshold: Int = 4096,
      spillThreshold: Int = Int.MaxValue): Merged = {
    val column = BoundReference(0, IntegerType, nullable = true)
    val key: Expression = if (keysAsLongs) column else Cast(column, DecimalType(12, 0))
    val boundKeys = Seq.fill(inputs.size)(Seq(key))
    require(KeyAsLong.forAll(boundKeys).isDefined == keysAsLongs, "the key is not read the way the test means")
    val outputRows = new SQLMetric("sum", 0L)
    val inputRows = Array.fill(inputs.size)(new SQLMetric("sum", 0L))
    val spillBytes = new SQLMetric("size", 0L)
    val scanner = new MultiJoinScanner(joinType, inputs.map(toInput).toArray, Seq.fill(inputs.size)(Schema),
      boundKeys, inMemoryThreshold, spillThreshold, outputRows, inputRows, spillBytes)
    val combinations = scanner.rowsIterator.map(_.toSeq.map(row => Option(row).map(read))).toVector
    scanner.close()
    Merged(combinations, outputRows.value, inputRows.map(_.value).toSeq, spillBytes.value)
  }

  /** The merge's output as single rows (its `next()`): every input's two fields side by side. */
  def mergeConcatenated(joinType: JoinType, inputs: Seq[Seq[Row]]): Seq[Seq[Any]] = {
    val key = BoundReference(0, IntegerType, nullable = true)
    val metric = () => new SQLMetric("sum", 0L)
    val scanner = new MultiJoinScanner(joinType, inputs.map(toInput).toArray, Seq.fill(inputs.size)(Schema),
      Seq.fill(inputs.size)(Seq(key)), 4096, Int.MaxValue, metric(), Array.fill(inputs.size)(metric()), metric())
    val fields = 2 * inputs.size
    val rows = scanner.map { row =>
      (0 until fields).map { f =>
        if (row.isNullAt(f)) null else if (f % 2 == 0) row.getInt(f) else row.getUTF8String(f).toString
      }
    }.toVector
    scanner.close()
    rows
  }

  private def toInput(rows: Seq[Row]): InputInKeyOrder = {
    val project = UnsafeProjection.create(Schema)
    RowsInKeyOrder(rows.iterator.map { case (key, tag) =>
      project(InternalRow(key.map(Int.box).orNull, UTF8String.fromString(tag)))
    })
  }

  private def read(row: UnsafeRow): Row =
    (if (row.isNullAt(0)) None else Some(row.getInt(0)), row.getUTF8String(1).toString)

  /** The output of the multi-join of `inputs`, in no particular order. */
  def expected(joinType: JoinType, inputs: Seq[Seq[Row]]): Seq[Combination] = {
    val n = inputs.size
    def withKey(input: Int, key: Int): Seq[Option[Row]] = inputs(input).filter(_._1.contains(key)).map(Some(_))
    def orMissing(group: Seq[Option[Row]]): Seq[Option[Row]] = if (group.isEmpty) Seq(None) else group
    def product(groups: Seq[Seq[Option[Row]]]): Seq[Combination] =
      groups.foldLeft(Seq(Seq.empty[Option[Row]])) { (done, group) => for (d <- done; r <- group) yield d :+ r }
    def alone(input: Int, row: Row): Combination = Seq.tabulate(n)(i => if (i == input) Some(row) else None)
    def nullKeyRows(input: Int): Seq[Combination] = inputs(input).filter(_._1.isEmpty).map(alone(input, _))
    joinType match {
      case FullOuter =>
        val keys = inputs.flatMap(_.flatMap(_._1)).distinct
        keys.flatMap(key => product(inputs.indices.map(i => orMissing(withKey(i, key))))) ++
          inputs.indices.flatMap(nullKeyRows)
      case LeftOuter =>
        inputs.head.flatMap {
          case row @ (Some(key), _) => product(Seq(Some(row)) +: (1 until n).map(i => orMissing(withKey(i, key))))
          case row => Seq(alone(0, row))
        }
      case Inner =>
        val keys = inputs.map(_.flatMap(_._1).toSet).reduce(_ intersect _).toSeq
        keys.flatMap(key => product(inputs.indices.map(i => withKey(i, key))))
    }
  }

  /** The combinations as a multiset, for comparing outputs whose order within a key is free. */
  def asBag(combinations: Seq[Combination]): Map[Combination, Int] =
    combinations.groupBy(identity).map { case (combination, copies) => combination -> copies.size }

  /** The key of each combination that has one (the first present row's), in output order. */
  def keysInOrder(combinations: Seq[Combination]): Seq[Int] = combinations.flatMap(_.flatten.headOption.flatMap(_._1))

  /** Random sorted inputs: `inputs` of up to `maxRows` rows, keys from a small range, some null. */
  def randomInputs(random: scala.util.Random, inputs: Int, maxRows: Int): Seq[Seq[Row]] =
    (0 until inputs).map { i =>
      val keys = Seq.fill(random.nextInt(maxRows + 1)) {
        if (random.nextInt(8) == 0) None else Some(random.nextInt(6) - 2)
      }
      // Spark's ascending sort: nulls first.
      keys.sortBy(key => (key.isDefined, key.getOrElse(0))).zipWithIndex.map { case (key, j) => (key, s"$i.$j") }
    }
}
