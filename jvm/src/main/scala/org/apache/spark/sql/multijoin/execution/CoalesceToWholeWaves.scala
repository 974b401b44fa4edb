package org.apache.spark.sql.multijoin.execution

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.{CoalescedPartitionSpec, ShufflePartitionSpec, SparkPlan}
import org.apache.spark.sql.execution.adaptive.{AQEShuffleReadExec, AQEShuffleReadRule, ShuffleQueryStageExec}
import org.apache.spark.sql.execution.exchange.{ENSURE_REQUIREMENTS, ShuffleOrigin}
import org.apache.spark.sql.multijoin.MultiJoinConf

/**
 * Re-coalesces the shuffle reads under a [[MultiJoinExec]] into a whole number of task waves.
 *
 * AQE coalesces the N shuffles of a multi-join as one group, into partitions of about the
 * advisory size. The merge stage then often ends in a wave that leaves cores idle: 9 tasks on 2
 * cores run in 5 waves, the last on one core, where 10 smaller tasks of the same work keep both
 * cores busy in every wave.
 * (The shuffle+sort of the inputs without the join coalesces each input on its own into small,
 * even tasks, so it does not pay this.) After Spark's own coalescing, this rule regroups the
 * shuffle partitions into the next multiple of the cluster's task slots (Spark's default
 * parallelism), in contiguous ranges of about equal bytes over all N inputs, the same ranges for
 * every input. It never makes fewer tasks than AQE chose, nor more than there are shuffle
 * partitions, and touches only reads of shuffles that EnsureRequirements added (a user's
 * `repartition(n)` keeps its n). Being an AQE shuffle-read rule, its result is kept only if the
 * plan still meets its required distribution.
 */
case class CoalesceToWholeWaves(session: SparkSession) extends AQEShuffleReadRule {

  override val supportedShuffleOrigins: Seq[ShuffleOrigin] = Seq(ENSURE_REQUIREMENTS)

  override def apply(plan: SparkPlan): SparkPlan = {
    if (!session.sessionState.conf.getConf(MultiJoinConf.COALESCE_TO_WHOLE_WAVES)) return plan
    val slots = session.sparkContext.defaultParallelism
    plan.transformUp {
      case join: MultiJoinExec => regroup(join, slots).getOrElse(join)
    }
  }

  /** The join over re-coalesced reads, or None when its reads are not AQE's plain coalescing. */
  private def regroup(join: MultiJoinExec, slots: Int): Option[MultiJoinExec] = {
    // Each read with its input's bytes per shuffle partition.
    val readsAndBytes = join.children.collect {
      case read @ AQEShuffleReadExec(stage: ShuffleQueryStageExec, _)
          if isSupported(stage.shuffle) && stage.mapStats.isDefined =>
        (read, stage.mapStats.get.bytesByPartitionId)
    }
    if (readsAndBytes.size != join.children.size) return None
    val (reads, inputBytes) = readsAndBytes.unzip
    // AQE gave every input the same reducer ranges; each spec carries its own input's size.
    val ranges = reads.map(_.partitionSpecs.map {
      case spec: CoalescedPartitionSpec => Some((spec.startReducerIndex, spec.endReducerIndex))
      case _ => None
    })
    if (ranges.exists(r => r.contains(None) || r != ranges.head)) return None
    val bytes = inputBytes.reduce((a, b) => a.zip(b).map { case (x, y) => x + y })
    val current = ranges.head.flatten
    val covers = current.nonEmpty && current.head._1 == 0 && current.last._2 == bytes.length &&
      current.zip(current.tail).forall { case (a, b) => a._2 == b._1 }
    val wanted = (current.size + slots - 1) / slots * slots
    if (!covers || wanted == current.size || wanted > bytes.length) return None
    val regrouped = CoalesceToWholeWaves.ranges(bytes, wanted)
    val newReads = readsAndBytes.map { case (read, own) =>
      read.copy(partitionSpecs = regrouped.map { case (start, end) =>
        CoalescedPartitionSpec(start, end, Some(own.slice(start, end).sum)): ShufflePartitionSpec
      })
    }
    Some(join.withNewChildren(newReads).asInstanceOf[MultiJoinExec])
  }
}

object CoalesceToWholeWaves {
  /**
   * `count` contiguous, non-empty ranges [start, end) covering the indices of `bytes`, each
   * ending where the running total first reaches its share of the whole. Needs
   * 1 <= count <= bytes.length.
   */
  def ranges(bytes: Array[Long], count: Int): IndexedSeq[(Int, Int)] = {
    val total = bytes.sum.toDouble
    val prefix = bytes.scanLeft(0L)(_ + _)
    var start = 0
    (1 to count).map { range =>
      val end = if (range == count) bytes.length else {
        val share = total * range / count
        var cut = start + 1
        // Past the share, or as far as leaves one index for each range still to come.
        while (cut < bytes.length - (count - range) && prefix(cut) < share) cut += 1
        cut
      }
      val result = (start, end)
      start = end
      result
    }
  }
}
