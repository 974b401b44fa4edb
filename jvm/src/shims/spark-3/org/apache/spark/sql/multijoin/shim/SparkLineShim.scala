package org.apache.spark.sql.multijoin.shim

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Expression, NullIntolerant, TransformExpression}
import org.apache.spark.sql.execution.{CacheManager, CommandExecutionMode, QueryExecution}

/**
 * The base of the Spark 3 line (Scala 2.12): the members that are the same on each of its
 * minors and differ from the 4.x line's (shims/spark-4 has the same trait for that line). The
 * `SparkShim` object, in the directory of the newest Spark at or before the minor built for,
 * adds what changes from minor to minor. The members are documented on [[SparkShimApi]].
 */
private[multijoin] trait SparkLineShim extends SparkShimApi {

  /** Spark 3 marks such expressions with the NullIntolerant trait; 4.0 made it a flag. */
  override def isNullIntolerant(e: Expression): Boolean = e.isInstanceOf[NullIntolerant]

  /** The active session is a `SparkSession`; 4.0 split it into an interface and the classic session. */
  override def unexecutedQuery(sql: String): QueryExecution = {
    val session = SparkSession.active
    new QueryExecution(session, session.sessionState.sqlParser.parsePlan(sql), mode = CommandExecutionMode.SKIP)
  }

  override def activeCacheManager: CacheManager = SparkSession.active.sharedState.cacheManager

  /** Spark 3 has no KeyGroupedPartitioner: an input in another layout is shuffled by hash. */
  override protected def shufflesByPartitionValue: Boolean = false

  /** Spark 3 has no reducible transforms: inputs of other bucket counts are shuffled. */
  override def partitionValueReducer(from: TransformExpression, to: TransformExpression): Option[Any => Any] = None
}
