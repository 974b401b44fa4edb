package org.apache.spark.sql.multijoin.storage

import org.apache.spark.{NarrowDependency, Partition, TaskContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, SortOrder}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}
import org.apache.spark.sql.multijoin.shim.SparkShim

/**
 * An input read grouped by key, re-indexed onto `values` (the union of every input's partition
 * values): its partition `i` is the child's partition of value `values(i)`, or empty when the
 * child has none. The child's rows are not touched, so its order within a partition holds.
 *
 * `childValues` are the child's partition values when this node was made. Spark may later push
 * partition values of its own down to the scans of the plan: a storage-partitioned join above
 * the multi-join gives every scan of that side the same ones (the union of both sides', maybe
 * reduced or projected), through this node (EnsureRequirements' populateCommonPartitionInfo),
 * and each scan then reads one partition per such value. Every input then lists the same values
 * already, and this node passes its child on as it is: re-indexing it onto `values` would take
 * it out of line with the other side of that join.
 */
case class KeyGroupedInputExec(child: SparkPlan, values: Seq[InternalRow], childValues: Seq[InternalRow])
  extends UnaryExecNode {

  override def output: Seq[Attribute] = child.output

  /** Whether the child no longer lists the partition values this node re-indexes from. */
  @transient private lazy val regroupedBySpark: Boolean =
    SparkShim.keyGroupedPartitioning(child.outputPartitioning).forall { case (expressions, current) =>
      // Projected onto some of the key columns (a join on part of the key), the values changed arity.
      !childValues.forall(_.numFields == expressions.size) ||
        KeyGroupedInputs.comparable(expressions, current) != KeyGroupedInputs.comparable(expressions, childValues)
    }

  override def outputPartitioning: Partitioning =
    if (regroupedBySpark) child.outputPartitioning
    else SparkShim.withPartitionValues(child.outputPartitioning, values)

  override def outputOrdering: Seq[SortOrder] = child.outputOrdering

  override protected def doExecute(): RDD[InternalRow] = {
    if (regroupedBySpark) return child.execute()
    val (expressions, childValues) = SparkShim.keyGroupedPartitioning(child.outputPartitioning).getOrElse(
      throw new IllegalStateException(s"$nodeName over a child no longer grouped by key"))
    val index = KeyGroupedInputs.comparable(expressions, childValues).zipWithIndex.toMap
    val sources = KeyGroupedInputs.comparable(expressions, values).map(index.getOrElse(_, -1)).toArray
    val rows = child.execute()
    // The scan's partitions are its partition values, in order: anything else would pair the
    // inputs' partitions wrongly, so it fails instead.
    if (rows.getNumPartitions != childValues.size) {
      throw new IllegalStateException(s"$nodeName: the child reads ${rows.getNumPartitions} " +
        s"partitions for ${childValues.size} partition values")
    }
    new PartitionsByValueRDD(rows, sources)
  }

  override def simpleString(maxFields: Int): String =
    if (regroupedBySpark) s"$nodeName (partitions as Spark grouped the scan)"
    else s"$nodeName ${values.size} partitions"

  override protected def withNewChildInternal(newChild: SparkPlan): KeyGroupedInputExec =
    copy(child = newChild)
}

private class PartitionByValue(override val index: Int, val source: Option[Partition])
  extends Partition

/** Partition `i` is `prev`'s partition `sources(i)`, or empty where that is -1. */
private class PartitionsByValueRDD(prev: RDD[InternalRow], sources: Array[Int])
  extends RDD[InternalRow](prev.context, Seq(new NarrowDependency(prev) {
    override def getParents(partitionId: Int): Seq[Int] =
      if (sources(partitionId) < 0) Nil else Seq(sources(partitionId))
  })) {

  override protected def getPartitions: Array[Partition] = {
    val parents = prev.partitions
    sources.indices.map { i =>
      new PartitionByValue(i, if (sources(i) < 0) None else Some(parents(sources(i)))): Partition
    }.toArray
  }

  override def compute(split: Partition, context: TaskContext): Iterator[InternalRow] =
    split.asInstanceOf[PartitionByValue].source.fold(Iterator.empty: Iterator[InternalRow])(
      prev.iterator(_, context))

  override protected def getPreferredLocations(split: Partition): Seq[String] =
    split.asInstanceOf[PartitionByValue].source.map(prev.preferredLocations).getOrElse(Nil)
}
