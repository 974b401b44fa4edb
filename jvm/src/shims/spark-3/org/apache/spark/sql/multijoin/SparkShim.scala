package org.apache.spark.sql.multijoin

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Expression, NullIntolerant}
import org.apache.spark.sql.execution.{CommandExecutionMode, ExternalAppendOnlyUnsafeRowArray, QueryExecution}
import org.apache.spark.sql.multijoin.execution.ExternalSorterArguments
import org.apache.spark.util.collection.unsafe.sort.UnsafeExternalSorter

/**
 * The Spark APIs the extension uses that differ between Spark versions, for Spark 3.5 (Scala
 * 2.12). Every shim directory (jvm/src/shims/spark-<version>) defines this object with the same
 * members; dbt_multijoin/jar.py compiles the one of the Spark it builds for.
 */
private[multijoin] object SparkShim {

  /**
   * Whether `e` is null whenever one of its inputs is null. Spark 3.5 marks such expressions
   * with the NullIntolerant trait; Spark 4.0 replaced it with `Expression.nullIntolerant`.
   */
  def isNullIntolerant(e: Expression): Boolean = e.isInstanceOf[NullIntolerant]

  /**
   * A buffer of rows that spills to disk past `spillThreshold` rows. Spark 3.5 and 4.0 bound it
   * by row counts only; Spark 4.1 added byte bounds.
   */
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
   * command run (`spark.sql` runs one at once). The active session is a `SparkSession` until
   * 3.5; 4.0 split it into an interface and the classic session, whose QueryExecution this is.
   */
  def unexecutedQuery(sql: String): QueryExecution = {
    val session = SparkSession.active
    new QueryExecution(session, session.sessionState.sqlParser.parsePlan(sql), mode = CommandExecutionMode.SKIP)
  }
}
