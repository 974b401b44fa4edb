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
 *
 * With a `reduction` the child is bucketed into a multiple of the others' count (see
 * [[KeyGroupedInputs.reducibleOnto]]): partition `i` reads, one after the other, every partition
 * of the child whose value maps to `values(i)`, so it reports no order. It reports the others'
 * layout (flagged as possibly holding values it does not list, as an input shuffled into it is),
 * and the multi-join above then reports none: a storage-partitioned join above it would push
 * partition values down into the child's scan, which would then read only its buckets of those
 * values. Should the child's values change all the same, the query fails rather than pair
 * partitions wrongly.
 */
case class KeyGroupedInputExec(child: SparkPlan, values: Seq[InternalRow], childValues: Seq[InternalRow],
    reduction: Option[KeyGroupedInputExec.Reduction] = None)
  extends UnaryExecNode {

  override def output: Seq[Attribute] = child.output

  /** Whether the child no longer lists the partition values this node re-indexes from. */
  @transient private lazy val regroupedBySpark: Boolean =
    SparkShim.keyGroupedPartitioning(child.outputPartitioning).forall { case (expressions, current) =>
      // Projected onto some of the key columns (a join on part of the key), the values changed arity.
      !childValues.forall(_.numFields == expressions.size) ||
        KeyGroupedInputs.comparable(expressions, current) != KeyGroupedInputs.comparable(expressions, childValues)
    }

  override def outputPartitioning: Partitioning = reduction match {
    case Some(r) => r.partitioning
    case None if regroupedBySpark => child.outputPartitioning
    case None => SparkShim.withPartitionValues(child.outputPartitioning, values)
  }

  override def outputOrdering: Seq[SortOrder] = if (reduction.isDefined) Nil else child.outputOrdering

  override protected def doExecute(): RDD[InternalRow] = {
    if (regroupedBySpark && reduction.isEmpty) return child.execute()
    if (regroupedBySpark) {
      throw new IllegalStateException(s"$nodeName: the partition values of a child bucketed into " +
        "a multiple of the others' count changed after planning; its partitions cannot be paired")
    }
    val (expressions, current) = SparkShim.keyGroupedPartitioning(child.outputPartitioning).getOrElse(
      throw new IllegalStateException(s"$nodeName over a child no longer grouped by key"))
    // Each child partition's value in the layout of `values`: its own, or where reduced, its
    // value mapped onto the others' bucket count.
    val (valueExpressions, childPartitionValues) = reduction match {
      case Some(r) => (SparkShim.keyGroupedPartitioning(r.partitioning).get._1, r.reducedChildValues)
      case None => (expressions, current)
    }
    val index = KeyGroupedInputs.comparable(valueExpressions, childPartitionValues).zipWithIndex
      .groupBy(_._1).map { case (value, partitions) => value -> partitions.map(_._2).toArray }
    val sources = KeyGroupedInputs.comparable(valueExpressions, values).map(index.getOrElse(_, Array.empty[Int])).toArray
    val rows = child.execute()
    // The scan's partitions are its partition values, in order: anything else would pair the
    // inputs' partitions wrongly, so it fails instead.
    if (rows.getNumPartitions != childValues.size) {
      throw new IllegalStateException(s"$nodeName: the child reads ${rows.getNumPartitions} " +
        s"partitions for ${childValues.size} partition values")
    }
    new PartitionsByValueRDD(rows, sources)
  }

  override def simpleString(maxFields: Int): String = reduction match {
    case Some(_) => s"$nodeName ${values.size} partitions from ${childValues.size}"
    case None if regroupedBySpark => s"$nodeName (partitions as Spark grouped the scan)"
    case None => s"$nodeName ${values.size} partitions"
  }

  override protected def withNewChildInternal(newChild: SparkPlan): KeyGroupedInputExec =
    copy(child = newChild)
}

object KeyGroupedInputExec {
  /**
   * A child bucketed into a multiple of the others' count, read in their layout: `partitioning`
   * is theirs over this child's key, at the common values, flagged as possibly holding values it
   * does not list; `reducedChildValues` are the child's partition values mapped onto theirs, in
   * the child's partition order.
   */
  case class Reduction(partitioning: Partitioning, reducedChildValues: Seq[InternalRow])
}

private class PartitionByValue(override val index: Int, val sources: Seq[Partition])
  extends Partition

/** Partition `i` reads `prev`'s partitions `sources(i)` one after the other (none: it is empty). */
private class PartitionsByValueRDD(prev: RDD[InternalRow], sources: Array[Array[Int]])
  extends RDD[InternalRow](prev.context, Seq(new NarrowDependency(prev) {
    override def getParents(partitionId: Int): Seq[Int] = sources(partitionId).toSeq
  })) {

  override protected def getPartitions: Array[Partition] = {
    val parents = prev.partitions
    sources.indices.map(i => new PartitionByValue(i, sources(i).toSeq.map(parents(_))): Partition).toArray
  }

  override def compute(split: Partition, context: TaskContext): Iterator[InternalRow] =
    split.asInstanceOf[PartitionByValue].sources.iterator.flatMap(prev.iterator(_, context))

  override protected def getPreferredLocations(split: Partition): Seq[String] =
    split.asInstanceOf[PartitionByValue].sources.flatMap(prev.preferredLocations).distinct
}
