package org.apache.spark.sql.multijoin

import org.apache.spark.sql.internal.SQLConf

/**
 * Every conf of the extension, typed and documented. Built with SQLConf.buildConf so that they are
 * registered with Spark: `SET -v` lists them and `SET key=bad` is rejected at once.
 *
 * Each `.version(...)` is the release that introduced that conf (Spark's "since"), fixed once the
 * conf ships; the package's current version is BuildInfo.version (from dbt_multijoin/__init__.py).
 */
object MultiJoinConf {

  val ENABLED = SQLConf.buildConf("spark.multijoin.enabled")
    .doc("When true, a /*+ MULTI_JOIN */ hint over a chain of FULL OUTER joins on a shared key " +
      "collapses the chain into one k-way sort-merge join. When false the hint is ignored " +
      "(with a warning) and Spark plans the joins as usual.")
    .version("0.1.0")
    .booleanConf
    .createWithDefault(true)

  val FAIL_ON_FALLBACK = SQLConf.buildConf("spark.multijoin.failOnFallback")
    .doc("When true, a MULTI_JOIN hint that cannot be applied fails the query with the reason, " +
      "instead of logging a warning and running Spark's own join plan. Meant for CI.")
    .version("0.1.0")
    .booleanConf
    .createWithDefault(false)

  val BUFFER_IN_MEMORY_THRESHOLD = SQLConf.buildConf("spark.multijoin.buffer.inMemoryThreshold")
    .doc("Rows of one key of one input kept in a plain in-memory array; past this the rows move " +
      "to a spillable, memory-managed buffer. Keys with fewer matches never leave the fast path.")
    .version("0.1.0")
    .intConf
    .checkValue(_ > 0, "must be positive")
    .createWithDefault(4096)

  val BUFFER_SPILL_THRESHOLD = SQLConf.buildConf("spark.multijoin.buffer.spillThreshold")
    .doc("Rows of one key of one input after which the spillable buffer is forced to spill to " +
      "disk. Independently of this, the buffer spills whenever the task runs short of memory.")
    .version("0.1.0")
    .intConf
    .checkValue(_ > 0, "must be positive")
    .createWithDefault(Int.MaxValue)

  val BLOOM_FILTER_ENABLED = SQLConf.buildConf("spark.multijoin.bloomFilter.enabled")
    .doc("For LEFT and INNER multi-joins, build one bloom filter from the driver's keys and " +
      "filter every other input with it before its shuffle.")
    .version("0.1.0")
    .booleanConf
    .createWithDefault(true)

  val BLOOM_FILTER_MIN_SIZE_RATIO = SQLConf.buildConf("spark.multijoin.bloomFilter.minSizeRatio")
    .doc("An input is filtered only if its estimated size is at least this many times the " +
      "driver's: below that the filter costs more than the shuffle it saves.")
    .version("0.1.0")
    .doubleConf
    .checkValue(_ >= 0, "must not be negative")
    .createWithDefault(4.0)

  val BLOOM_FILTER_FPP = SQLConf.buildConf("spark.multijoin.bloomFilter.fpp")
    .doc("False positive rate the bloom filter is sized for, from the driver's distinct keys " +
      "(counted when the filter is built).")
    .version("0.1.0")
    .doubleConf
    .checkValue(p => p > 0 && p < 1, "must be between 0 and 1")
    .createWithDefault(0.03)

  val BLOOM_FILTER_MAX_BITS = SQLConf.buildConf("spark.multijoin.bloomFilter.maxNumBits")
    .doc("The largest bloom filter built, in bits (it is broadcast to every task). A driver " +
      "estimated to need more is too large for the filter to pay: none is built. A driver " +
      "that turns out to have more keys than estimated gets a filter of this size.")
    .version("0.1.0")
    .longConf
    .checkValue(_ > 0, "must be positive")
    .createWithDefault(64L * 1024 * 1024)

  val FULL_OUTPUT_PARTITIONING = SQLConf.buildConf("spark.multijoin.fullOuter.outputPartitioning")
    .doc("When true, a FULL multi-join reports that its output is hash-partitioned (and, where " +
      "it holds, sorted) on the coalesced key, so that a GROUP BY, a window or a join on that " +
      "key above it needs no shuffle of its own. It is reported only where it provably holds " +
      "(docs/architecture.md). Set to false to plan those shuffles as before.")
    .version("0.1.0")
    .booleanConf
    .createWithDefault(true)

  val CODEGEN_ENABLED = SQLConf.buildConf("spark.multijoin.codegen.enabled")
    .doc("When true (and whole-stage codegen is on), the operator hands the operators above it " +
      "(a projection, a filter, an aggregation) the fields of its N input rows, so that each " +
      "output row is written once, by the code Spark generates for them. When false it first " +
      "concatenates the N rows into one, which the operators above then read and copy again.")
    .version("0.1.0")
    .booleanConf
    .createWithDefault(true)

  val COALESCE_TO_WHOLE_WAVES = SQLConf.buildConf("spark.multijoin.coalesceToWholeWaves")
    .doc("When true, with adaptive execution, the shuffle reads under a multi-join are " +
      "re-coalesced after Spark's own coalescing into the next multiple of the cluster's task " +
      "slots (spark default parallelism), in ranges of about equal bytes, so that the merge " +
      "stage runs in whole waves instead of ending with idle cores.")
    .version("0.1.0")
    .booleanConf
    .createWithDefault(true)

  val KEY_GROUPED_INPUTS = SQLConf.buildConf("spark.multijoin.keyGroupedInputs.enabled")
    .doc("When true, a multi-join whose inputs are all read grouped by key in the same storage " +
      "layout (for example Iceberg tables bucketed alike on the join key, read with " +
      "spark.sql.sources.v2.bucketing.enabled) reads them with no shuffle. When false every " +
      "input is shuffled, as Spark does for more than two inputs.")
    .version("0.1.0")
    .booleanConf
    .createWithDefault(true)

  def bloomFilterEnabled: Boolean = SQLConf.get.getConf(BLOOM_FILTER_ENABLED)
  def bloomFilterMinSizeRatio: Double = SQLConf.get.getConf(BLOOM_FILTER_MIN_SIZE_RATIO)
  def bloomFilterFpp: Double = SQLConf.get.getConf(BLOOM_FILTER_FPP)
  def bloomFilterMaxBits: Long = SQLConf.get.getConf(BLOOM_FILTER_MAX_BITS)

  def enabled: Boolean = SQLConf.get.getConf(ENABLED)
  def failOnFallback: Boolean = SQLConf.get.getConf(FAIL_ON_FALLBACK)
  def fullOutputPartitioning: Boolean = SQLConf.get.getConf(FULL_OUTPUT_PARTITIONING)
}
