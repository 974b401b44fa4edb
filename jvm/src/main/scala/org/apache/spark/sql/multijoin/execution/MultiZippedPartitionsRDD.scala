package org.apache.spark.sql.multijoin.execution

import java.io.{IOException, ObjectOutputStream}

import scala.reflect.ClassTag

import org.apache.spark.{OneToOneDependency, Partition, SparkContext, TaskContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.util.Utils

/** Partition `index` of every parent, computed together. */
private[multijoin] class MultiZippedPartition(
    override val index: Int,
    @transient private val parents: Seq[RDD[_]]) extends Partition {

  var parentPartitions: Array[Partition] = parents.map(_.partitions(index)).toArray

  @throws(classOf[IOException])
  private def writeObject(out: ObjectOutputStream): Unit = Utils.tryOrIOException {
    // Refresh the parents' partitions in case a parent was checkpointed since (as Spark's
    // ZippedPartitionsPartition does).
    parentPartitions = parents.map(_.partitions(index)).toArray
    out.defaultWriteObject()
  }
}

/**
 * Zips any number of co-partitioned parents: RDD.zipPartitions stops at four and Spark's own
 * ZippedPartitionsBaseRDD is private. One OneToOneDependency per parent keeps the whole join in
 * the stage that reads the N shuffles.
 */
private[multijoin] class MultiZippedPartitionsRDD[T: ClassTag, U: ClassTag](
    sc: SparkContext,
    private var parents: Seq[RDD[T]],
    private var compute: (TaskContext, Seq[Iterator[T]]) => Iterator[U])
  extends RDD[U](sc, parents.map(parent => new OneToOneDependency(parent))) {

  override protected def getPartitions: Array[Partition] = {
    val counts = parents.map(_.partitions.length).distinct
    require(counts.size == 1,
      s"MultiJoin inputs must have the same number of partitions, got ${counts.mkString(", ")}")
    Array.tabulate[Partition](counts.head)(index => new MultiZippedPartition(index, parents))
  }

  override def compute(split: Partition, context: TaskContext): Iterator[U] = {
    val partitions = split.asInstanceOf[MultiZippedPartition].parentPartitions
    compute(context, parents.zip(partitions).map { case (parent, p) => parent.iterator(p, context) })
  }

  override protected def getPreferredLocations(split: Partition): Seq[String] = {
    val partitions = split.asInstanceOf[MultiZippedPartition].parentPartitions
    val locations = parents.zip(partitions).map { case (parent, p) => parent.preferredLocations(p) }
    val everywhere = locations.reduce(_ intersect _)
    if (everywhere.nonEmpty) everywhere else locations.flatten.distinct
  }

  override def clearDependencies(): Unit = {
    super.clearDependencies()
    parents = null
    compute = null
  }
}
