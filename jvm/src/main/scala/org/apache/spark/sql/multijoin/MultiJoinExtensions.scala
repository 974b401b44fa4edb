package org.apache.spark.sql.multijoin

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo, Literal}
import org.apache.spark.sql.multijoin.bloom.{BloomFilterFunctions, MultiJoinHashIn, RuntimeBloomFilter}
import org.apache.spark.sql.multijoin.execution.{CoalesceToWholeWaves, MultiJoinStrategy}
import org.apache.spark.sql.multijoin.loading.{ExtensionClassLoading, SparkVersionGuard}
import org.apache.spark.sql.multijoin.recognition.{CollapseMultiJoinChain, PushFilterThroughMultiJoinHint, ResolveMultiJoinHint}
import org.apache.spark.sql.multijoin.storage.{PlanCoalesceBySize, ResolveCoalesceBySizeHint, ScanSize, UseKeyGroupedInputs, UseKeyGroupedInputsColumnarRule, WriteGrouping}

/**
 * Entry point, loaded with `spark.sql.extensions=org.apache.spark.sql.multijoin.MultiJoinExtensions`.
 *
 * The order of the injections follows the life of a query:
 *  1. analysis: the MULTI_JOIN hint becomes a [[logical.MultiJoinHint]] marker over the hinted
 *     query (recognition: the hint's rules);
 *  2. operator optimisation: Spark's own join rules (pushdown, column pruning, outer join
 *     elimination) run on the ordinary Join nodes; filters above the marker are pushed through it;
 *  3. pre-CBO, once operator optimisation is finished: the chain under the marker collapses into
 *     one [[logical.MultiJoin]] node, or falls back with a warning that says why (recognition);
 *  4. pre-CBO, right after the collapse: a LEFT or INNER MultiJoin's other inputs get the
 *     driver's bloom filter ([[bloom.RuntimeBloomFilter]]). It must follow the collapse, whose
 *     MultiJoin nodes and unified keys it needs, and precede planning, so that each filter sits
 *     below its input's shuffle;
 *  5. planning: MultiJoin becomes [[execution.MultiJoinExec]], EnsureRequirements gives each
 *     input exactly one shuffle, and the operator sorts each input once (execution);
 *  5b. right after EnsureRequirements ([[storage.UseKeyGroupedInputs]]: an AQE query-stage
 *     preparation rule, and without AQE a columnar rule, the only later hook): inputs all read
 *     grouped by key in the same storage layout lose those shuffles again;
 *  6. adaptive execution, once the inputs' shuffles have run: AQE coalesces the N shuffle reads
 *     as one group, then [[execution.CoalesceToWholeWaves]] regroups them into whole waves of tasks
 *     (query-stage optimizer rules run after Spark's own).
 *
 * Beside the multi-join, one more hint: `MULTIJOIN_COALESCE_BY_SIZE(bytes)` merges its query's
 * partitions into one per `bytes` of its estimated size (resolved in analysis, planned pre-CBO:
 * see [[storage.CoalesceBySize]]), which the dbt package's cached reads use.
 *
 * SQL functions come with it, for the dbt materialization: `multijoin_version()`,
 * `multijoin_scan_size(sql)` (what a query's scans will read, see [[storage.ScanSize]]), which it
 * logs per input, `multijoin_write_grouping(sql, transforms)` (whether a query's output is grouped
 * like the table it writes, see [[storage.WriteGrouping]]), which decides its write's distribution, and `multijoin_hash_in` (see [[bloom.MultiJoinHashIn]]) and
 * `multijoin_bloom_filter` / `multijoin_might_contain` (see [[bloom.BloomFilterFunctions]]),
 * which keep a changed_keys MERGE's target side to the rows it replaces.
 *
 * Before any of it, loading: the jar must be the one built for the running Spark minor, and
 * every class of it is loaded while its class loader is open (the loading package).
 */
class MultiJoinExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    // First, before any other class of the jar is loaded (see SparkVersionGuard).
    SparkVersionGuard.requireBuiltFor(org.apache.spark.SPARK_VERSION)
    // Then every class of the jar, while its class loader is still open (a Thrift server
    // closes it with the first client session; see ExtensionClassLoading).
    ExtensionClassLoading.loadAllClasses()
    extensions.injectResolutionRule(_ => ResolveMultiJoinHint)
    extensions.injectResolutionRule(_ => ResolveCoalesceBySizeHint)
    extensions.injectOptimizerRule(_ => PushFilterThroughMultiJoinHint)
    extensions.injectPreCBORule(_ => CollapseMultiJoinChain)
    // Pre-CBO rules run in the order they are injected, in one batch.
    extensions.injectPreCBORule(_ => RuntimeBloomFilter)
    extensions.injectPreCBORule(session => PlanCoalesceBySize(session))
    extensions.injectPlannerStrategy(_ => MultiJoinStrategy)
    extensions.injectQueryStagePrepRule(_ => UseKeyGroupedInputs)
    extensions.injectColumnar(_ => UseKeyGroupedInputsColumnarRule)
    extensions.injectQueryStageOptimizerRule(session => CoalesceToWholeWaves(session))
    extensions.injectFunction(MultiJoinExtensions.versionFunction)
    extensions.injectFunction(ScanSize.function)
    extensions.injectFunction(ScanSize.cachedFunction)
    extensions.injectFunction(WriteGrouping.function)
    extensions.injectFunction(BloomFilterFunctions.aggregate)
    extensions.injectFunction(BloomFilterFunctions.probe)
    extensions.injectFunction(MultiJoinHashIn.function)
  }
}

object MultiJoinExtensions {
  /** `multijoin_version()`: lets a client (the dbt materialization) check that the extension is loaded. */
  val versionFunction: (FunctionIdentifier, ExpressionInfo, Seq[Expression] => Expression) = (
    FunctionIdentifier("multijoin_version"),
    new ExpressionInfo(
      classOf[MultiJoinExtensions].getName, null, "multijoin_version", "_FUNC_() - the version " +
        "of the dbt-multijoin Spark extension loaded in this session.", "", "", "", "misc_funcs",
      // `since`: the release that introduced this function, fixed for good, as a conf's
      // `.version(...)` in MultiJoinConf is; not the running version (BuildInfo.version, which a
      // build without -Drevision sets to "dev": Spark rejects a `since` not starting with a number).
      "0.1.0", "", "built-in"),
    (arguments: Seq[Expression]) => {
      if (arguments.nonEmpty) {
        throw new IllegalArgumentException("multijoin_version() takes no arguments")
      }
      Literal(BuildInfo.version)
    })
}
