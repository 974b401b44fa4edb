package org.apache.spark.sql.multijoin

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.execution.{CommandExecutionMode, ExternalAppendOnlyUnsafeRowArray, QueryExecution}
import org.apache.spark.sql.multijoin.execution.ExternalSorterArguments
import org.apache.spark.util.collection.unsafe.sort.UnsafeExternalSorter

/**
 * The Spark APIs the extension uses that differ between Spark versions, for Spark 4.0 (Scala
 * 2.13): the NullIntolerant trait is gone as in every 4.x, but the row buffer is still bounded
 * by row counts only, as in 3.5. Same members as jvm/src/shims/spark-3, spark-4.1 and spark-4.
 */
private[multijoin] object SparkShim {

  /** Whether `e` is null whenever one of its inputs is null: a flag of Expression since 4.0. */
  def isNullIntolerant(e: Expression): Boolean = e.nullIntolerant

  /** A buffer of rows that spills to disk past `spillThreshold` rows: row bounds only until 4.0. */
  def newRowBuffer(inMemoryThreshold: Int, spillThreshold: Int): ExternalAppendOnlyUnsafeRowArray =
    new ExternalAppendOnlyUnsafeRowArray(inMemoryThreshold, spillThreshold)

  /**
   * The running task's external sorter: `create` of Spark 3.5 and 4.0, where only a number of
   * records forces a spill.
   */
  def newExternalSorter(args: ExternalSorterArguments): UnsafeExternalSorter =
    UnsafeExternalSorter.create(args.context.taskMemoryManager(), args.env.blockManager,
      args.env.serializerManager, args.context, args.comparator, args.prefixComparator,
      args.initialSize, args.pageSize, args.numElementsForSpillThreshold,
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
