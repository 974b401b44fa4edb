package org.apache.spark.sql.multijoin.storage

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.catalyst.plans.logical.Repartition
import org.apache.spark.sql.multijoin.ExtensionSession
import org.scalatest.funsuite.AnyFunSuite

/** The MULTIJOIN_COALESCE_BY_SIZE hint: its partition count, its plan, a cache of its rows. */
class CoalesceBySizeSuite extends AnyFunSuite with ExtensionSession {

  // A cached plan's last stage keeps this many partitions without the hint.
  override protected def sessionConfs: Map[String, String] = Map("spark.sql.shuffle.partitions" -> "40")

  private val grouped = "select id % 5000 as k, count(*) as n from range(0, 100000, 1, 3) group by id % 5000"

  test("one partition per share of the size, at least one; the task slots where the size is unknown") {
    def partitions(size: BigInt, bytes: Long) = CoalesceBySize.partitions(size, bytes, unknownSize = Long.MaxValue, slots = 7)
    assert(partitions(0, 100) == 1)
    assert(partitions(100, 100) == 1)
    assert(partitions(101, 100) == 2)
    assert(partitions(BigInt(Long.MaxValue) - 1, 1) == Int.MaxValue)
    assert(partitions(Long.MaxValue, 1) == 7)
    assert(partitions(BigInt(Long.MaxValue) * 4, 1 << 20) == 7)
  }

  test("the hint plans the coalesce its query's estimated size asks for, with no shuffle") {
    val bytes = 64 * 1024L
    val estimated = query(grouped).optimizedPlan.stats.sizeInBytes
    val wanted = CoalesceBySize.partitions(estimated, bytes, spark.sessionState.conf.defaultSizeInBytes, 2)
    assert(wanted > 1 && wanted < 40, s"the test's query should ask for a few partitions: $estimated bytes")
    val planned = query(s"select /*+ ${CoalesceBySize.NAME}($bytes) */ * from ($grouped)").optimizedPlan
    assert(planned.collect { case r: Repartition => (r.numPartitions, r.shuffle) } == Seq((wanted, false)), planned)
  }

  test("a cached query keeps the hint's partitions, not the shuffle's, and the same rows") {
    try {
      spark.sql(s"cache table plain as $grouped")
      spark.sql(s"cache table hinted as select /*+ ${CoalesceBySize.NAME}(1048576) */ * from ($grouped)")
      assert(spark.table("plain").rdd.getNumPartitions == 40)
      assert(spark.table("hinted").rdd.getNumPartitions == 1)
      assert(spark.table("hinted").exceptAll(spark.table("plain")).isEmpty)
      assert(spark.table("plain").exceptAll(spark.table("hinted")).isEmpty)
    } finally {
      spark.sql("drop view if exists plain")
      spark.sql("drop view if exists hinted")
    }
  }

  test("a query over a scan of unknown size gets a partition per task slot") {
    // A scan that reports no size: Spark estimates it at spark.sql.defaultSizeInBytes (here the
    // range's size), and the projection above it scales that down to a size that looks known.
    val rangeBytes = query("select * from range(0, 100000, 1, 3)").optimizedPlan.stats.sizeInBytes
    withConfs("spark.sql.defaultSizeInBytes" -> rangeBytes.toString) {
      val narrowed = s"select cast(id as int) as k from range(0, 100000, 1, 3)"
      assert(query(narrowed).optimizedPlan.stats.sizeInBytes < rangeBytes)
      val planned = query(s"select /*+ ${CoalesceBySize.NAME}(10) */ * from ($narrowed)").optimizedPlan
      assert(planned.collect { case r: Repartition => r.numPartitions } == Seq(spark.sparkContext.defaultParallelism), planned)
    }
  }

  test("a parameter that is not a positive number of bytes is an error naming the hint") {
    for (parameters <- Seq("", "0", "'32m'", "1, 2")) {
      val error = intercept[AnalysisException] {
        query(s"select /*+ ${CoalesceBySize.NAME}($parameters) */ * from range(3)").analyzed
      }
      assert(error.getMessage.contains(CoalesceBySize.NAME), error.getMessage)
    }
  }
}
