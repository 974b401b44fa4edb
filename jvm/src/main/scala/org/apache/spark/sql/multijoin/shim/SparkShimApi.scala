package org.apache.spark.sql.multijoin.shim

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, TransformExpression}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.connector.read.InputPartition
import org.apache.spark.sql.execution.{CacheManager, ExternalAppendOnlyUnsafeRowArray, QueryExecution}
import org.apache.spark.sql.execution.columnar.InMemoryRelation
import org.apache.spark.util.collection.unsafe.sort.UnsafeExternalSorter

/**
 * What the extension needs of Spark that is not the same on every Spark it runs on, as typed
 * members. The rest of the extension calls them on `SparkShim`, the one object a build compiles
 * from jvm/src/shims: its line's base (`shims/spark-<major>`, a trait over this one) and the
 * overrides of its minor (`shims/spark-<major>.<minor>`, which defines the object; a minor with no
 * overrides of its own takes the newest before it). See docs/development.md, "Shims".
 *
 * Two kinds of difference:
 *  - between lines and minors, known when the jar is compiled (a trait that became a flag, a
 *    constructor or factory that took one more argument): abstract here, written in the shims;
 *  - between patch releases of one minor, or with what is on the class path: Spark's
 *    KeyGroupedPartitioning gains fields in patch releases and is gone from 4.2, and Iceberg may
 *    or may not be there. One jar serves them all, so these are read by reflection when the query
 *    runs, the same code on every line, here ([[KeyGroupedPartitionings]], [[IcebergScanTasks]],
 *    [[CachedRelations]]), and nowhere else in the extension.
 */
private[multijoin] trait SparkShimApi {

  // --- known when the jar is compiled: per line, overridden where a minor differs ---

  /** Whether `e` is null whenever one of its inputs is null. */
  def isNullIntolerant(e: Expression): Boolean

  /**
   * A buffer of rows that spills to disk past `spillThreshold` rows, bounded by row counts only
   * (the bounds in bytes that later lines added are left unbounded).
   */
  def newRowBuffer(inMemoryThreshold: Int, spillThreshold: Int): ExternalAppendOnlyUnsafeRowArray

  /** The running task's external sorter, with the spill settings Spark's own row sorter uses. */
  def newExternalSorter(args: ExternalSorterArguments): UnsafeExternalSorter

  /**
   * The query `sql` parsed in the active session, ready to be analysed and planned but with no
   * command run (`spark.sql` runs one at once).
   */
  def unexecutedQuery(sql: String): QueryExecution

  /** The cache manager of the active session (4.0 split the session into an interface and the classic one). */
  def activeCacheManager: CacheManager

  /**
   * Whether the line can shuffle rows into a key-grouped partitioning by their partition values
   * (Spark 4's KeyGroupedPartitioner), so that an input in another layout can join inputs read
   * grouped by key without shuffling those.
   */
  protected def shufflesByPartitionValue: Boolean

  /**
   * How a partition value of `from` maps onto one of `to`, where the source says the two
   * transforms are compatible (Spark 4's ReducibleFunction: Iceberg's `bucket(16, k)` onto
   * `bucket(8, k)` is the value modulo 8); None where the line or the source offers no mapping.
   */
  def partitionValueReducer(from: TransformExpression, to: TransformExpression): Option[Any => Any]

  // --- Spark's KeyGroupedPartitioning, by reflection (KeyGroupedPartitionings) ---

  /**
   * The partition expressions and partition values of `p`, when it is a key-grouped partitioning
   * that is not partially clustered (each value in one partition); None for any other.
   */
  final def keyGroupedPartitioning(p: Partitioning): Option[(Seq[Expression], Seq[InternalRow])] =
    KeyGroupedPartitionings.byValue(p)

  /** Whether key-grouped `p` also holds rows of values it does not list (it was shuffled by value). */
  final def mayContainUnknownPartitionKeys(p: Partitioning): Boolean =
    KeyGroupedPartitionings.mayContainUnknownKeys(p)

  /** Key-grouped `p` with one partition per value of `values`, in that order, all else kept. */
  final def withPartitionValues(p: Partitioning, values: Seq[InternalRow]): Partitioning =
    KeyGroupedPartitionings.withValues(p, values)

  /**
   * Key-grouped `p` over `expressions` instead of its own (the same functions of other columns),
   * flagged as holding rows of values it does not list when `mayContainUnknownKeys`; None where
   * this Spark's partitioning has no such flag.
   */
  final def withKeyGroupedExpressions(p: Partitioning, expressions: Seq[Expression],
      mayContainUnknownKeys: Boolean): Option[Partitioning] =
    KeyGroupedPartitionings.withExpressions(p, expressions, mayContainUnknownKeys)

  /** Whether this Spark can shuffle an input into the key-grouped layout `template` ([[shuffledByPartitionValue]]). */
  final def canShuffleByPartitionValue(template: Partitioning): Boolean =
    shufflesByPartitionValue && KeyGroupedPartitionings.canFlagUnknownKeys(template)

  /**
   * The partitioning that shuffles rows into the key-grouped layout `template` by the values of
   * `expressions` (the template's partition expressions over the shuffled input's columns), one
   * partition per value of `values`; a row of another value goes to a partition by hash, so it is
   * flagged as holding unknown keys. Only where [[canShuffleByPartitionValue]].
   */
  final def shuffledByPartitionValue(template: Partitioning, expressions: Seq[Expression],
      values: Seq[InternalRow]): Partitioning =
    KeyGroupedPartitionings.shuffledByValue(template, expressions, values)

  // --- the cache manager's list of cached relations, by reflection (CachedRelations) ---

  /** The relation the active session's cache holds under `name` (CACHE TABLE's name), if any. */
  final def cachedRelationNamed(name: String): Option[InMemoryRelation] =
    CachedRelations.named(activeCacheManager, name)

  // --- Iceberg, when it is on the class path, by reflection (IcebergScanTasks) ---

  /** The files Iceberg's input partitions will read; None unless every one is Iceberg's. */
  final def icebergScanFiles(partitions: Seq[InputPartition]): Option[ScannedFiles] =
    IcebergScanTasks.files(partitions)
}
