package org.apache.spark.sql.multijoin.storage

import java.util.Locale

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Attribute, Literal}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Repartition, UnaryNode, UnresolvedHint}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.multijoin.logical.MultiJoinHint
import org.apache.spark.sql.types.{IntegerType, LongType}

/**
 * `/*+ MULTIJOIN_COALESCE_BY_SIZE(bytes) */`: the hinted query's rows in one partition per `bytes`
 * of the data Spark's statistics give its optimized plan (the files its scans read, as the
 * operators above them scale that), merged without a shuffle as `COALESCE(n)` merges them, with n
 * taken from the data rather than written into the SQL.
 *
 * Why: a cached query keeps the partitions of its last stage, and adaptive execution does not
 * coalesce a cached plan's last stage. A query whose last operator shuffles (an aggregate, a
 * window) is then cached in `spark.sql.shuffle.partitions` partitions (200 by default) however few
 * rows it holds, and runs that many tasks to cache them and again on every read of the cache.
 * `COALESCE(n)` helps only where the SQL's author knows n; the dbt package's changed_keys run
 * caches each input's changes before anything has measured them. The statistics are an estimate
 * from above (a filter or an aggregate keeps its input's size), so n errs towards more partitions.
 * Where a scan reports no size (Delta's change data feed, for one: Spark then estimates it at
 * `spark.sql.defaultSizeInBytes`, "unknown", which the operators above scale down to a size that
 * no longer says so), n is the cluster's task slots (Spark's default parallelism): what a query
 * of unknown size reads in one wave.
 */
case class CoalesceBySize(bytesPerPartition: Long, child: LogicalPlan) extends UnaryNode {
  override def output: Seq[Attribute] = child.output
  override protected def withNewChildInternal(newChild: LogicalPlan): CoalesceBySize =
    copy(child = newChild)
}

object CoalesceBySize {
  val NAME = "MULTIJOIN_COALESCE_BY_SIZE"

  /**
   * One partition per `bytesPerPartition` of `sizeInBytes`, at least one; `slots` where the size
   * is unknown (`unknownSize`, Spark's default size, or more).
   */
  def partitions(sizeInBytes: BigInt, bytesPerPartition: Long, unknownSize: Long, slots: Int): Int = {
    if (sizeInBytes >= unknownSize) return slots.max(1)
    val wanted = (sizeInBytes + bytesPerPartition - 1) / bytesPerPartition
    wanted.max(1).min(Int.MaxValue).toInt
  }
}

/** Analysis: the hint becomes a [[CoalesceBySize]] over its query once the query is resolved. */
object ResolveCoalesceBySizeHint extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
    case hint: UnresolvedHint
        if hint.name.toUpperCase(Locale.ROOT) == CoalesceBySize.NAME && hint.child.resolved =>
      val bytes = hint.parameters match {
        case Seq(Literal(value: Int, IntegerType)) if value > 0 => value.toLong
        case Seq(Literal(value: Long, LongType)) if value > 0 => value
        case other => throw MultiJoinHint.error(
          s"The ${CoalesceBySize.NAME} hint takes one parameter, the bytes of a partition (a " +
            s"positive integer), got: ${other.mkString(", ")}")
      }
      CoalesceBySize(bytes, hint.child)
  }
}

/**
 * Once the optimizer's operator rules have run (a pre-CBO rule: the statistics are then those of
 * the plan that will run, its columns pruned and filters pushed into its scans), a
 * [[CoalesceBySize]] becomes the `Repartition(n, shuffle = false)` that `COALESCE(n)` plans.
 */
case class PlanCoalesceBySize(session: SparkSession) extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformUp {
    case CoalesceBySize(bytes, child) =>
      val unknown = session.sessionState.conf.defaultSizeInBytes
      val size = if (child.collectLeaves().exists(_.stats.sizeInBytes >= unknown)) BigInt(unknown) else child.stats.sizeInBytes
      val partitions = CoalesceBySize.partitions(size, bytes, unknown, session.sparkContext.defaultParallelism)
      Repartition(partitions, shuffle = false, child)
  }
}
