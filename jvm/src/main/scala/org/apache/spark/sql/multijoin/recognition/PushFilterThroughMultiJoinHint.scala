package org.apache.spark.sql.multijoin.recognition

import org.apache.spark.sql.catalyst.expressions.PredicateHelper
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.multijoin.logical.MultiJoinHint

/**
 * The marker is an identity, so a deterministic filter above it means the same below it. Spark's
 * PushPredicateThroughNonJoin only knows its own unary nodes; without this rule a filter written
 * around a hinted subquery would stop at the marker and never reach the joins and scans.
 */
object PushFilterThroughMultiJoinHint extends Rule[LogicalPlan] with PredicateHelper {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformUp {
    case Filter(condition, MultiJoinHint(child)) if condition.deterministic =>
      MultiJoinHint(Filter(condition, child))
  }
}
