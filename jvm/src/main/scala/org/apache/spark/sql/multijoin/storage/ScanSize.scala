package org.apache.spark.sql.multijoin.storage

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.{FunctionIdentifier, InternalRow}
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo, Literal, PlanExpression}
import org.apache.spark.sql.catalyst.catalog.HiveTableRelation
import org.apache.spark.sql.catalyst.plans.logical.{Command, LogicalPlan}
import org.apache.spark.sql.connector.read.{InputPartition, Scan, SupportsReportStatistics}
import org.apache.spark.sql.execution.{FileSourceScanExec, RDDScanExec, RowDataSourceScanExec, SparkPlan}
import org.apache.spark.sql.execution.adaptive.{AdaptiveSparkPlanExec, QueryStageExec}
import org.apache.spark.sql.execution.columnar.InMemoryRelation
import org.apache.spark.sql.execution.datasources.{FilePartition, FileScanRDD, LogicalRelation}
import org.apache.spark.sql.execution.exchange.ReusedExchangeExec
import org.apache.spark.sql.execution.datasources.v2.{BatchScanExec, DataSourceV2Relation, DataSourceV2ScanExecBase, DataSourceV2ScanRelation}
import org.apache.spark.sql.multijoin.shim.SparkShim
import org.apache.spark.sql.types.{IntegerType, LongType, StringType, StructField, StructType}
import org.apache.spark.unsafe.types.UTF8String

/**
 * What the scans of a query will read, known from its plan before it runs: the files (each
 * once per scan) and their bytes, after partition pruning and file skipping (Delta's data
 * skipping, Iceberg's manifest and file statistics). A file counts at its whole size: a columnar
 * reader reads less of it (only the columns it needs; row groups whose statistics a pushed
 * filter excludes are skipped at read time), so `bytes` bounds what is read from above.
 *
 * `estimatedScans`: the scans whose files the plan does not show (a DataSource V2 scan that is
 * neither Spark's file source nor Iceberg's, a Hive table scan, ...): their bytes are what they
 * report as statistics, if anything, and their files are not counted.
 */
private[multijoin] case class ScanSize(files: Long, bytes: Long, estimatedScans: Int) {
  def +(other: ScanSize): ScanSize =
    ScanSize(files + other.files, bytes + other.bytes, estimatedScans + other.estimatedScans)
}

private[multijoin] object ScanSize {
  val Empty: ScanSize = ScanSize(0, 0, 0)

  /**
   * The scans of `plan`: a physical plan as the planner made it, before the preparation rules
   * (adaptive execution would hide the leaves in query stages made only when the query runs).
   * Scans in subqueries are not counted: the planner leaves them for the preparation rules.
   * A scan that cannot be sized (its listing or its source failed) counts as an estimated scan
   * of no bytes: sizing is for a log line, and the query itself will say what is wrong.
   */
  def of(plan: SparkPlan): ScanSize = plan.collectLeaves().map(sized).foldLeft(Empty)(_ + _)

  /**
   * The scans a cached relation's rows were read from: the plan it ran, through adaptive
   * execution's query stages (an exchange reused within the plan counts once, where it ran).
   */
  def ofCached(relation: InMemoryRelation): ScanSize = {
    def leaves(plan: SparkPlan): Seq[SparkPlan] = plan match {
      case adaptive: AdaptiveSparkPlanExec => leaves(adaptive.executedPlan)
      case stage: QueryStageExec => leaves(stage.plan)
      case _: ReusedExchangeExec => Nil
      case leaf if leaf.children.isEmpty => Seq(leaf)
      case other => other.children.flatMap(leaves)
    }
    leaves(relation.cachedPlan).map(sized).foldLeft(Empty)(_ + _)
  }

  /**
   * The cached relation of the temporary view or table `name`, if its rows are cached: the one
   * CACHE TABLE registered under that name, or else the one a query of it reads. By name first:
   * it needs no analysis of the view, and a view over a relation resolved anew on each reference
   * (an Iceberg changelog on Spark 4.1) never finds its cached rows by its plan.
   */
  private def cachedRelation(name: String): Option[InMemoryRelation] = {
    SparkShim.cachedRelationNamed(name).orElse(
      SparkShim.unexecutedQuery(s"select * from $name").withCachedData.collectFirst { case r: InMemoryRelation => r })
  }

  private def sized(plan: SparkPlan): ScanSize =
    try leaf(plan)
    catch { case NonFatal(_) => statistics(None) }

  private def leaf(plan: SparkPlan): ScanSize = plan match {
    case scan: FileSourceScanExec => fileSourceScan(scan)
    // A V1 source's scan (e.g. Delta's change data feed, `table_changes`): the RDD its relation
    // built when the query was planned, whose lineage holds the file scans it runs.
    case scan: RowDataSourceScanExec => rddFiles(scan.rdd)
    case scan: RDDScanExec => rddFiles(scan.rdd)
    case scan: BatchScanExec => batchScan(scan)
    case scan: DataSourceV2ScanExecBase => statistics(scanStatistics(scan.scan))
    // Another scan of a table (a Hive table's, an extension's): what the optimizer estimated.
    case other if other.logicalLink.exists(isTable) => statistics(reportedBytes(other))
    // Rows already in memory (a cached relation, a local one) or made up (a range, one row).
    case _ => Empty
  }

  private def isTable(plan: LogicalPlan): Boolean = plan match {
    case _: LogicalRelation | _: HiveTableRelation | _: DataSourceV2Relation | _: DataSourceV2ScanRelation => true
    case _ => false
  }

  /** The size the optimizer estimated for the logical node of `plan`, if it knows one. */
  private def reportedBytes(plan: SparkPlan): Option[Long] =
    try plan.logicalLink.map(_.stats.sizeInBytes).filter(_ < plan.conf.defaultSizeInBytes).map(_.toLong)
    catch { case NonFatal(_) => None }

  /**
   * The files a file source scan lists: what `selectedPartitions` lists (a lazy val, whose type
   * differs between Spark 3.5 and 4.x), through the same call, version-independent. The
   * filters that need a subquery's result (dynamic partition pruning, a scalar subquery) are
   * left out, as `selectedPartitions` leaves out the dynamic ones: there is no result yet.
   */
  private def fileSourceScan(scan: FileSourceScanExec): ScanSize = {
    def known(filters: Seq[Expression]) = filters.filterNot(_.exists(_.isInstanceOf[PlanExpression[_]]))
    val statuses = scan.relation.location.listFiles(known(scan.partitionFilters), known(scan.dataFilters))
      .flatMap(_.files)
    ScanSize(statuses.size, statuses.map(_.getLen).sum, 0)
  }

  /** The files of the file scans in `rdd`'s lineage, each RDD once. */
  private def rddFiles(rdd: RDD[_]): ScanSize = {
    val seen = mutable.Set[Int]()
    var pending: List[RDD[_]] = List(rdd)
    var size = Empty
    while (pending.nonEmpty) {
      val next = pending.head
      pending = pending.tail
      if (seen.add(next.id)) {
        next match {
          case files: FileScanRDD => size = size + filePartitions(files.filePartitions)
          case _ =>
        }
        pending = next.dependencies.map(_.rdd).toList ++ pending
      }
    }
    size
  }

  /** Each file once, at its whole size (its splits' lengths add up to it when it is not set). */
  private def filePartitions(partitions: Seq[FilePartition]): ScanSize = {
    val files = partitions.flatMap(_.files).groupBy(_.filePath.toString).values
      .map(splits => math.max(splits.map(_.fileSize).max, splits.map(_.length).sum))
    ScanSize(files.size, files.sum, 0)
  }

  /**
   * A DataSource V2 batch scan: its input partitions, planned now (Iceberg prunes its files here).
   * Spark's own file sources plan [[FilePartition]]s; Iceberg's are read by the shim, which knows
   * Iceberg's classes by reflection. Any other source is sized by the statistics its scan reports.
   */
  private def batchScan(scan: BatchScanExec): ScanSize = {
    val partitions: Seq[InputPartition] = scan.inputPartitions
    if (partitions.forall(_.isInstanceOf[FilePartition])) {
      filePartitions(partitions.map(_.asInstanceOf[FilePartition]))
    } else {
      SparkShim.icebergScanFiles(partitions).map(f => ScanSize(f.files, f.bytes, 0))
        .getOrElse(statistics(scanStatistics(scan.scan)))
    }
  }

  /** The bytes a DataSource V2 scan reports, if it reports statistics. */
  private def scanStatistics(scan: Scan): Option[Long] = scan match {
    case reporting: SupportsReportStatistics =>
      val reported = reporting.estimateStatistics().sizeInBytes()
      if (reported.isPresent) Some(reported.getAsLong) else None
    case _ => None
  }

  private def statistics(bytes: Option[Long]): ScanSize = ScanSize(0, bytes.getOrElse(0L), 1)

  /**
   * The physical plan of the query `sql` in the active session, unrun. A command (DDL, an
   * INSERT, a procedure call) is refused rather than planned: `spark.sql` would run it.
   */
  def planned(sql: String): SparkPlan = {
    val execution = SparkShim.unexecutedQuery(sql)
    if (execution.analyzed.exists(_.isInstanceOf[Command])) {
      throw new IllegalArgumentException(s"multijoin_scan_size(sql) sizes a query, not a command: $sql")
    }
    execution.sparkPlan
  }

  val dataType: StructType = StructType(Seq(
    StructField("files", LongType, nullable = false),
    StructField("bytes", LongType, nullable = false),
    StructField("estimated_scans", IntegerType, nullable = false)))

  /**
   * `multijoin_scan_size(sql)`: what the scans of the query `sql` will read (see [[ScanSize]]),
   * as struct<files, bytes, estimated_scans>. `sql` is planned in the calling session (its
   * temporary views included), not run; the value is a constant of the calling query, made
   * when that query is analysed. The dbt materialization logs it for each input's changes.
   */
  val function: (FunctionIdentifier, ExpressionInfo, Seq[Expression] => Expression) = (
    FunctionIdentifier("multijoin_scan_size"),
    new ExpressionInfo(
      classOf[ScanSize].getName, null, "multijoin_scan_size", "_FUNC_(sql) - what the scans of " +
        "the query `sql` will read, from its plan (it does not run): struct<files, bytes, " +
        "estimated_scans>, the files after partition pruning and file skipping, their bytes, and " +
        "how many scans were sized by their statistics instead of their files.",
      "", "", "", "misc_funcs", "0.1.0", "", "built-in"),
    (arguments: Seq[Expression]) => {
      val size = of(planned(constantText("multijoin_scan_size", "sql", "the text of a query", arguments)))
      Literal(InternalRow(size.files, size.bytes, size.estimatedScans), dataType)
    })

  /**
   * `multijoin_cached_scan_size(name)`: what the scans read when the rows of the cached view or
   * table `name` (CACHE TABLE) were computed, from the plan that ran, as struct<files, bytes,
   * estimated_scans> (see [[ScanSize]]). Nothing is planned or read again. The dbt materialization
   * logs it for each input's changes, which it caches first: sizing them beforehand planned every
   * input's reads twice.
   */
  val cachedFunction: (FunctionIdentifier, ExpressionInfo, Seq[Expression] => Expression) = (
    FunctionIdentifier("multijoin_cached_scan_size"),
    new ExpressionInfo(
      classOf[ScanSize].getName, null, "multijoin_cached_scan_size", "_FUNC_(name) - what the " +
        "scans read when the rows of the cached view or table `name` were computed: " +
        "struct<files, bytes, estimated_scans>, as multijoin_scan_size gives them.",
      "", "", "", "misc_funcs", "0.1.0", "", "built-in"),
    (arguments: Seq[Expression]) => {
      val name = constantText("multijoin_cached_scan_size", "name", "the name of a cached view or table", arguments)
      val size = ofCached(cachedRelation(name).getOrElse(
        throw new IllegalArgumentException(s"multijoin_cached_scan_size(name): $name is not cached (CACHE TABLE it first)")))
      Literal(InternalRow(size.files, size.bytes, size.estimatedScans), dataType)
    })

  /** The one argument of `function`, a constant string. */
  private def constantText(function: String, argument: String, what: String, arguments: Seq[Expression]): String =
    arguments match {
      case Seq(text) if text.foldable && text.dataType == StringType =>
        Option(text.eval()).map(_.asInstanceOf[UTF8String].toString).getOrElse(
          throw new IllegalArgumentException(s"$function($argument): $argument is NULL"))
      case _ =>
        throw new IllegalArgumentException(s"$function($argument) takes one argument, $what (a constant string)")
    }
}
