package org.apache.spark.sql.multijoin.bloom

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, BloomFilterMightContain, Expression, ScalarSubquery, XxHash64}
import org.apache.spark.sql.catalyst.plans.{FullOuter, Inner, JoinType, LeftOuter}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LeafNode, LogicalPlan, Statistics}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.multijoin.MultiJoinConf
import org.apache.spark.sql.multijoin.logical.MultiJoin
import org.apache.spark.sql.types.IntegerType
import org.scalatest.funsuite.AnyFunSuite

/** A table of a known size (and, when analyzed, row count), as the planner's statistics see it. */
case class SizedTable(name: String, sizeInBytes: BigInt, rowCount: Option[BigInt] = None) extends LeafNode {
  val key: AttributeReference = AttributeReference(s"$name.k", IntegerType)()
  override def output: Seq[Attribute] = Seq(key)
  override def computeStats(): Statistics = Statistics(sizeInBytes, rowCount)
}

/** Which inputs of a LEFT/INNER multi-join the driver's bloom filter prunes (RuntimeBloomFilter). */
class RuntimeBloomFilterSuite extends AnyFunSuite {

  private val megabyte = BigInt(1) << 20

  private def multiJoin(joinType: JoinType, inputs: SizedTable*): MultiJoin =
    MultiJoin(inputs, inputs.map(input => Seq(input.key)), joinType)

  private def withConf[T](settings: (String, String)*)(body: => T): T = {
    val conf = new SQLConf
    settings.foreach { case (key, value) => conf.setConfString(key, value) }
    SQLConf.withExistingConf(conf)(body)
  }

  /** For each input of the rewritten join: the key its filter probes, or None when not filtered. */
  private def probedKeys(plan: LogicalPlan): Seq[Option[Seq[Expression]]] =
    plan.asInstanceOf[MultiJoin].children.map {
      case Filter(BloomFilterMightContain(_, hash: XxHash64), _) => Some(hash.children)
      case _ => None
    }

  private def filterAggregate(plan: LogicalPlan): DriverKeysBloomFilterAggregate =
    plan.asInstanceOf[MultiJoin].children.collectFirst {
      case Filter(BloomFilterMightContain(subquery: ScalarSubquery, _), _) =>
        subquery.plan.expressions.flatMap(_.collect { case a: DriverKeysBloomFilterAggregate => a }).head
    }.get

  test("LEFT: every input at least minSizeRatio times the driver's size is filtered on its own key") {
    val driver = SizedTable("driver", 10 * megabyte, Some(100000))
    val large = SizedTable("large", 40 * megabyte)
    val small = SizedTable("small", 39 * megabyte)
    val pruned = withConf()(RuntimeBloomFilter(multiJoin(LeftOuter, driver, large, small)))
    assert(probedKeys(pruned) == Seq(None, Some(Seq(large.key)), None))
  }

  test("INNER prunes the same way, and the filter hashes the driver's key with the configured rate and bound") {
    val driver = SizedTable("driver", megabyte, Some(1000))
    val other = SizedTable("other", 100 * megabyte)
    val settings = Seq(MultiJoinConf.BLOOM_FILTER_FPP.key -> "0.01", MultiJoinConf.BLOOM_FILTER_MAX_BITS.key -> "1000000")
    val pruned = withConf(settings: _*)(RuntimeBloomFilter(multiJoin(Inner, driver, other)))
    assert(probedKeys(pruned) == Seq(None, Some(Seq(other.key))))
    val aggregate = filterAggregate(pruned)
    assert(aggregate.fpp == 0.01 && aggregate.maxBits == 1000000)
    assert(aggregate.child == new XxHash64(Seq(driver.key)))
  }

  test("minSizeRatio decides which inputs are worth a filter") {
    val driver = SizedTable("driver", 10 * megabyte, Some(1000))
    val other = SizedTable("other", 25 * megabyte)
    val join = multiJoin(LeftOuter, driver, other)
    assert(probedKeys(withConf()(RuntimeBloomFilter(join))) == Seq(None, None))
    val lowered = withConf(MultiJoinConf.BLOOM_FILTER_MIN_SIZE_RATIO.key -> "2")(RuntimeBloomFilter(join))
    assert(probedKeys(lowered) == Seq(None, Some(Seq(other.key))))
  }

  test("no filter when disabled, for a FULL join, or for a driver of unknown size") {
    val driver = SizedTable("driver", megabyte, Some(1000))
    val other = SizedTable("other", 100 * megabyte)
    val disabled = withConf(MultiJoinConf.BLOOM_FILTER_ENABLED.key -> "false") {
      RuntimeBloomFilter(multiJoin(LeftOuter, driver, other))
    }
    assert(probedKeys(disabled) == Seq(None, None))
    assert(probedKeys(withConf()(RuntimeBloomFilter(multiJoin(FullOuter, driver, other)))) == Seq(None, None))
    val unknown = SizedTable("unknown", BigInt(Long.MaxValue))
    assert(probedKeys(withConf()(RuntimeBloomFilter(multiJoin(LeftOuter, unknown, other)))) == Seq(None, None))
  }

  test("no filter when the driver's estimated rows would need more than maxNumBits") {
    // 10 million rows at 3% need about 73 million bits, over the default bound of 64 Mi bits.
    val analyzed = SizedTable("analyzed", 100 * megabyte, Some(10000000))
    val other = SizedTable("other", 1000 * megabyte)
    assert(probedKeys(withConf()(RuntimeBloomFilter(multiJoin(LeftOuter, analyzed, other)))) == Seq(None, None))
    // Without a row count the estimate is size / 8: 100 MB is about 13 million rows, too many too.
    val unanalyzed = SizedTable("unanalyzed", 100 * megabyte)
    assert(probedKeys(withConf()(RuntimeBloomFilter(multiJoin(LeftOuter, unanalyzed, other)))) == Seq(None, None))
    // 1 million rows need 7.3 million bits: filtered.
    val smaller = SizedTable("smaller", 100 * megabyte, Some(1000000))
    assert(probedKeys(withConf()(RuntimeBloomFilter(multiJoin(LeftOuter, smaller, other)))) ==
      Seq(None, Some(Seq(other.key))))
  }

  test("run again, the rule leaves an already pruned multi-join as it is") {
    val driver = SizedTable("driver", megabyte, Some(1000))
    val other = SizedTable("other", 100 * megabyte)
    val once = withConf()(RuntimeBloomFilter(multiJoin(LeftOuter, driver, other)))
    assert(withConf()(RuntimeBloomFilter(once)) == once)
  }
}
