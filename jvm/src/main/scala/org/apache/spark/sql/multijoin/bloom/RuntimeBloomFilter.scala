package org.apache.spark.sql.multijoin.bloom

import org.apache.spark.internal.Logging
import org.apache.spark.sql.catalyst.expressions.{Alias, BloomFilterMightContain, Expression, ScalarSubquery, XxHash64}
import org.apache.spark.sql.catalyst.optimizer.ColumnPruning
import org.apache.spark.sql.catalyst.plans.{Inner, LeftOuter}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Filter, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.V2ScanRelationPushDown
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.multijoin.MultiJoinConf
import org.apache.spark.sql.multijoin.logical.MultiJoin

/**
 * For LEFT and INNER multi-joins: one bloom filter built once from the driver's keys (composite
 * keys hashed into one XxHash64 value) filters every other input before its shuffle. A row it
 * removes has a key the driver does not have, so it could never be part of the result: false
 * positives only let through rows the join then drops, and never change a result.
 *
 * Spark's own runtime filter does not fire here: it only knows binary Join nodes, never prunes
 * from a LEFT join's driver side, and needs a selective filter over a small scan.
 *
 * The filter is sized when it runs, from the driver's distinct keys
 * ([[DriverKeysBloomFilterAggregate]]): the planner's estimate of the driver's rows only decides
 * up front whether the filter would be too large to pay.
 *
 * A rule of its own, run right after [[CollapseMultiJoinChain]] (see [[MultiJoinExtensions]]):
 * it works on the [[MultiJoin]] nodes the collapse creates, with their keys already unified.
 */
object RuntimeBloomFilter extends Rule[LogicalPlan] with Logging {

  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformUp {
    case join @ MultiJoin(inputs, keys, LeftOuter | Inner, _) if !inputs.exists(isPruned) =>
      join.copy(children = prune(inputs, keys))
  }

  /** An input this rule already wrapped (the rule must not wrap it twice if run again). */
  private def isPruned(input: LogicalPlan): Boolean = input match {
    case Filter(_: BloomFilterMightContain, _) => true
    case _ => false
  }

  /** The inputs, each but the driver (the first) wrapped in the filter when it pays. */
  private def prune(inputs: Seq[LogicalPlan], keys: Seq[Seq[Expression]]): Seq[LogicalPlan] = {
    val driver = inputs.head
    val driverSize = driver.stats.sizeInBytes.max(1)
    estimatedDriverRows(driver, driverSize) match {
      case Left(reason) =>
        logInfo(s"Bloom filter not built: $reason")
        inputs
      case Right(estimatedRows) =>
        val minRatio = MultiJoinConf.bloomFilterMinSizeRatio
        val maxBits = MultiJoinConf.bloomFilterMaxBits
        lazy val bloomFilter = {
          val aggregate = DriverKeysBloomFilterAggregate(
            new XxHash64(keys.head), MultiJoinConf.bloomFilterFpp, maxBits).toAggregateExpression()
          // Pre-CBO rules run before Spark pushes scans down, and Spark optimizes a subquery
          // only in batches before them: a DSv2 driver (Iceberg) would reach the planner as a
          // bare DataSourceV2Relation, which no strategy plans ("No plan for RelationV2"). So the
          // subquery's scans are pushed down here; file sources are left as they are.
          ScalarSubquery(V2ScanRelationPushDown(
            ColumnPruning(Aggregate(Nil, Seq(Alias(aggregate, "multijoin_bloom_filter")()), driver))))
        }
        inputs.zip(keys).zipWithIndex.map {
          case ((input, _), 0) => input
          case ((input, key), i) =>
            val ratio = input.stats.sizeInBytes.toDouble / driverSize.toDouble
            if (ratio < minRatio) {
              logInfo(f"Bloom filter not applied to input ${i + 1}: it is only $ratio%.1fx the " +
                f"driver's size, less than ${MultiJoinConf.BLOOM_FILTER_MIN_SIZE_RATIO.key}=$minRatio")
              input
            } else {
              logInfo(f"Bloom filter from the driver (estimated ~$estimatedRows rows; sized when " +
                f"it runs from the keys it has, at most $maxBits bits) prunes input ${i + 1} " +
                f"($ratio%.1fx the driver's size) before its shuffle")
              Filter(BloomFilterMightContain(bloomFilter, new XxHash64(key)), input)
            }
        }
    }
  }

  /**
   * The driver's estimated rows, or why no filter is built. The estimate only rules out, before
   * anything runs, a driver whose filter would exceed the bound; the filter itself is sized from
   * the keys the driver really has. Without table statistics it is size / 8 bytes, which can be
   * off either way (well-compressed parquet holds more rows than that).
   */
  private def estimatedDriverRows(driver: LogicalPlan, driverSize: BigInt): Either[String, Long] = {
    lazy val expectedRows =
      driver.stats.rowCount.map(_.toLong).getOrElse((driverSize / 8).toLong).max(1L)
    lazy val fpp = MultiJoinConf.bloomFilterFpp
    lazy val bits = DriverKeysBloomFilterAggregate.bitsFor(expectedRows, fpp)
    for {
      _ <- Either.cond(MultiJoinConf.bloomFilterEnabled, (),
        s"${MultiJoinConf.BLOOM_FILTER_ENABLED.key} is false")
      _ <- Either.cond(driverSize < SQLConf.get.defaultSizeInBytes, (),
        "the driver's size is unknown to Spark, so the filter cannot be sized (read it from " +
          "files or tables, or ANALYZE it)")
      _ <- Either.cond(bits <= MultiJoinConf.bloomFilterMaxBits, (),
        s"the driver's ~$expectedRows rows need $bits bits for a false positive rate of $fpp, " +
          s"more than ${MultiJoinConf.BLOOM_FILTER_MAX_BITS.key}=${MultiJoinConf.bloomFilterMaxBits}")
    } yield expectedRows
  }
}
