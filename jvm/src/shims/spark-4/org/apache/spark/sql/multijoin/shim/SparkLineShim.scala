package org.apache.spark.sql.multijoin.shim

import org.apache.spark.sql.catalyst.expressions.{Expression, TransformExpression}
import org.apache.spark.sql.connector.catalog.functions.Reducer
import org.apache.spark.sql.classic.SparkSession
import org.apache.spark.sql.execution.{CacheManager, CommandExecutionMode, QueryExecution}

/**
 * The base of the Spark 4 line (Scala 2.13): the members that are the same on each of its
 * minors and differ from the 3.x line's (shims/spark-3 has the same trait for that line). The
 * `SparkShim` object, in the directory of the newest Spark at or before the minor built for
 * (spark-3.5 for 4.0, spark-4.1, spark-4.2 for 4.2 and later), adds what changes from minor to
 * minor. The members are documented on [[SparkShimApi]].
 */
private[multijoin] trait SparkLineShim extends SparkShimApi {

  /** A flag of Expression since 4.0 (3.5 had the NullIntolerant trait). */
  override def isNullIntolerant(e: Expression): Boolean = e.nullIntolerant

  /** The active classic session's: 4.0 split the session into an interface and the classic one. */
  override def unexecutedQuery(sql: String): QueryExecution = {
    val session = SparkSession.active
    new QueryExecution(session, session.sessionState.sqlParser.parsePlan(sql), mode = CommandExecutionMode.SKIP)
  }

  override def activeCacheManager: CacheManager = SparkSession.active.sharedState.cacheManager

  /** Spark 4 shuffles rows into a key-grouped partitioning by value (KeyGroupedPartitioner). */
  override protected def shufflesByPartitionValue: Boolean = true

  /** Spark 4's compatible transforms (TransformExpression.reducers, from ReducibleFunction). */
  override def partitionValueReducer(from: TransformExpression, to: TransformExpression): Option[Any => Any] =
    from.reducers(to).map { reducer =>
      val typed = reducer.asInstanceOf[Reducer[Any, Any]]
      (value: Any) => typed.reduce(value)
    }
}
