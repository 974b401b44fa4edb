package org.apache.spark.sql.multijoin

import org.apache.spark.internal.config
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.execution.{CommandExecutionMode, ExternalAppendOnlyUnsafeRowArray, QueryExecution}
import org.apache.spark.sql.multijoin.execution.ExternalSorterArguments
import org.apache.spark.util.collection.unsafe.sort.UnsafeExternalSorter

/**
 * The Spark APIs the extension uses that differ between Spark versions, for Spark 4.1 (Scala
 * 2.13): the row buffer of 4.2 and later, the external sorter's factory of 4.1 only. Same
 * members as spark-3, spark-4.0 and spark-4.
 */
private[multijoin] object SparkShim {

  /** Whether `e` is null whenever one of its inputs is null: a flag of Expression since 4.0. */
  def isNullIntolerant(e: Expression): Boolean = e.nullIntolerant

  /**
   * A buffer of rows that spills to disk past `spillThreshold` rows. Spark 4.1 added bounds in
   * bytes next to the row counts; unbounded bytes keep the row-count behaviour of 3.5 and 4.0.
   */
  def newRowBuffer(inMemoryThreshold: Int, spillThreshold: Int): ExternalAppendOnlyUnsafeRowArray =
    new ExternalAppendOnlyUnsafeRowArray(inMemoryThreshold, Long.MaxValue, spillThreshold, Long.MaxValue)

  /**
   * The running task's external sorter: `create` of Spark 4.1, which added a bound in bytes that
   * forces a spill.
   */
  def newExternalSorter(args: ExternalSorterArguments): UnsafeExternalSorter =
    UnsafeExternalSorter.create(args.context.taskMemoryManager(), args.env.blockManager,
      args.env.serializerManager, args.context, args.comparator, args.prefixComparator,
      args.initialSize, args.pageSize, args.numElementsForSpillThreshold,
      args.env.conf.get(config.SHUFFLE_SPILL_MAX_SIZE_FORCE_SPILL_THRESHOLD),
      args.canUseRadixSort)

  /**
   * The query `sql` parsed in the active session, ready to be analysed and planned but with no
   * command run (`spark.sql` runs one at once): the active classic session's, since 4.0.
   */
  def unexecutedQuery(sql: String): QueryExecution = {
    val session = SparkSession.active
    new QueryExecution(session, session.sessionState.sqlParser.parsePlan(sql), mode = CommandExecutionMode.SKIP)
  }
}
