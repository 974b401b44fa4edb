package org.apache.spark.sql.multijoin

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, BindReferences, Expression, SortOrder, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.plans.{FullOuter, JoinType}
import org.apache.spark.sql.catalyst.plans.physical.{ClusteredDistribution, Distribution, Partitioning, UnknownPartitioning}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.types.StructType

/**
 * The k-way sort-merge join. Each child must be clustered on its own key, so EnsureRequirements
 * puts exactly one shuffle under each input and none between join levels. Unlike
 * SortMergeJoinExec, the operator sorts its inputs itself (see [[InputSorter]] for why), each
 * exactly once and only when the child does not already deliver it in key order. Execution (per
 * partition, a merge of N sorted iterators) lives in [[MultiJoinScanner]].
 */
case class MultiJoinExec(
    keys: Seq[Seq[Expression]],
    joinType: JoinType,
    children: Seq[SparkPlan],
    reportsCoalescedKey: Boolean)
  extends SparkPlan {

  override def output: Seq[Attribute] = MultiJoin.output(joinType, children.map(_.output))

  override def requiredChildDistribution: Seq[Distribution] = keys.map(ClusteredDistribution(_))

  /** The order the merge reads each input in: ascending on its key, nulls first. */
  private def keyOrder(input: Int): Seq[SortOrder] = keys(input).map(SortOrder(_, Ascending))

  /** The inputs the operator sorts: those whose child does not already deliver its key order. */
  private lazy val sortedHere: Seq[Boolean] = children.indices.map { i =>
    !SortOrder.orderingSatisfies(children(i).outputOrdering, keyOrder(i))
  }

  // LEFT and INNER: every output row carries its driver row, so the driver's hash partitioning
  // and key order hold (as SortMergeJoinExec reports its streamed side's).
  // FULL: no input's partitioning holds (a row may miss any input), but every row sits where its
  // coalesced key hashes to, when the inputs were hashed alike (see CoalescedKey).
  override def outputPartitioning: Partitioning = joinType match {
    case FullOuter =>
      coalescedKey.flatMap(CoalescedKey.partitioning(_, keys, children.map(_.outputPartitioning)))
        .getOrElse(UnknownPartitioning(children.head.outputPartitioning.numPartitions))
    case _ => children.head.outputPartitioning
  }

  // FULL: the merge emits keys in ascending order, but a row whose key has a null component as
  // soon as it reaches the head of its input. With a single key column those rows come first in
  // every input, as nulls sort first; with several they may land among the others.
  override def outputOrdering: Seq[SortOrder] = joinType match {
    case FullOuter if keys.head.size == 1 || !keys.flatten.exists(_.nullable) =>
      coalescedKey.map(_.map(SortOrder(_, Ascending))).getOrElse(Nil)
    case FullOuter => Nil
    case _ => keyOrder(0)
  }

  /** FULL: the output's key, when reported (spark.multijoin.fullOuter.outputPartitioning). */
  @transient private lazy val coalescedKey: Option[Seq[Expression]] =
    if (reportsCoalescedKey) CoalescedKey.of(keys, output) else None

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"),
    "spillSize" -> SQLMetrics.createSizeMetric(sparkContext, "spill size"),
    "sortTime" -> SQLMetrics.createTimingMetric(sparkContext, "sort time"),
    "sortPeakMemory" -> SQLMetrics.createSizeMetric(sparkContext, "peak memory of the sorts"),
    "sortSpillSize" -> SQLMetrics.createSizeMetric(sparkContext, "spill size of the sorts")) ++
    children.indices.map { i =>
      MultiJoinExec.inputRowsMetric(i) ->
        SQLMetrics.createMetric(sparkContext, s"number of rows read from input ${i + 1}")
    }

  protected override def doExecute(): RDD[InternalRow] = {
    // Everything the tasks need is computed here, so the closure does not capture the plan.
    val numOutputRows = longMetric("numOutputRows")
    val spillSize = longMetric("spillSize")
    val sortTime = longMetric("sortTime")
    val sortPeakMemory = longMetric("sortPeakMemory")
    val sortSpillSize = longMetric("sortSpillSize")
    val inputRows = children.indices.map(i => longMetric(MultiJoinExec.inputRowsMetric(i))).toArray
    val boundKeys = keys.zip(children).map { case (key, child) =>
      BindReferences.bindReferences(key, child.output)
    }
    val inputSchemas = children.map(_.schema)
    val sortsPerTask = sortedHere.count(identity)
    val sorters: Seq[Option[InputSorter]] = children.indices.map { i =>
      if (sortedHere(i)) {
        val boundOrder = boundKeys(i).map(SortOrder(_, Ascending))
        Some(new InputSorter(inputSchemas(i), boundOrder, conf.enableRadixSort, sortsPerTask))
      } else None
    }
    val inMemoryThreshold = conf.getConf(MultiJoinConf.BUFFER_IN_MEMORY_THRESHOLD)
    val spillThreshold = conf.getConf(MultiJoinConf.BUFFER_SPILL_THRESHOLD)

    new MultiZippedPartitionsRDD[InternalRow, InternalRow](
      sparkContext,
      children.map(_.execute()),
      (context, inputs) => {
        val sortedInputs = inputs.indices.map { i =>
          val rows = MultiJoinExec.asUnsafeRows(inputs(i), inputSchemas(i))
          sorters(i).fold(rows)(_.sort(rows, sortTime, sortPeakMemory, sortSpillSize))
        }
        val scanner = new MultiJoinScanner(
          joinType = joinType,
          inputs = sortedInputs.toArray,
          inputSchemas = inputSchemas,
          boundKeys = boundKeys,
          inMemoryThreshold = inMemoryThreshold,
          spillThreshold = spillThreshold,
          numOutputRows = numOutputRows,
          inputRows = inputRows,
          spillSize = spillSize)
        context.addTaskCompletionListener[Unit](_ => scanner.close())
        scanner
      })
  }

  override def simpleString(maxFields: Int): String = {
    val sorted = sortedHere.zipWithIndex.collect { case (true, i) => i + 1 }
    val sorts = if (sorted.size == children.size) "all"
      else if (sorted.isEmpty) "none (all arrive in key order)"
      else sorted.mkString("[", ", ", "]")
    s"${MultiJoin.describe(joinType, keys)}, sorts inputs: $sorts"
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[SparkPlan]): MultiJoinExec =
    copy(children = newChildren)
}

object MultiJoinExec {
  /** The key of input `input`'s row count (0-based), numbered from 1 as its label is. */
  def inputRowsMetric(input: Int): String = s"numInputRows${input + 1}"

  /**
   * The sorter and the merge work on UnsafeRows, which Spark's operators emit; this converts the
   * rows of any child that does not.
   */
  private def asUnsafeRows(rows: Iterator[InternalRow], schema: StructType): Iterator[UnsafeRow] = {
    lazy val toUnsafe = UnsafeProjection.create(schema)
    rows.map {
      case unsafe: UnsafeRow => unsafe
      case other => toUnsafe(other)
    }
  }
}
