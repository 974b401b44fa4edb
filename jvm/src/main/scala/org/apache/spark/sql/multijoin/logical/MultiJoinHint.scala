package org.apache.spark.sql.multijoin.logical

import java.util.Locale

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.catalyst.expressions.{Attribute, PredicateHelper}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan, UnaryNode, UnresolvedHint}
import org.apache.spark.sql.catalyst.rules.Rule

/**
 * Marks a query that carries the MULTI_JOIN hint. It is an identity over its child; it lives from
 * analysis until [[CollapseMultiJoinChain]] replaces it once the optimizer has finished with the
 * joins below it. Keeping the hint as a node (rather than a tag on the joins) means no optimizer
 * rule can lose it by rebuilding a Join.
 */
case class MultiJoinHint(child: LogicalPlan) extends UnaryNode {
  override def output: Seq[Attribute] = child.output
  override protected def withNewChildInternal(newChild: LogicalPlan): MultiJoinHint =
    copy(child = newChild)
}

object MultiJoinHint {
  val NAME = "MULTI_JOIN"

  /**
   * The error for a misused hint, shown to the user as an AnalysisException with `message` as
   * it is. The message-only constructor is not public from Spark 4.0; this error class, whose
   * message is its one parameter, exists in every supported version.
   */
  def error(message: String): AnalysisException =
    new AnalysisException("_LEGACY_ERROR_TEMP_1332", Map("errorMessage" -> message))
}

/**
 * Turns `/*+ MULTI_JOIN */` into a [[MultiJoinHint]] once the hinted query is resolved. Without
 * this rule Spark's RemoveAllHints would drop the hint with an "Unrecognized hint" warning.
 */
object ResolveMultiJoinHint extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
    case hint: UnresolvedHint
        if hint.name.toUpperCase(Locale.ROOT) == MultiJoinHint.NAME && hint.child.resolved =>
      if (hint.parameters.nonEmpty) {
        throw MultiJoinHint.error(
          s"The ${MultiJoinHint.NAME} hint takes no parameters, got: " +
            hint.parameters.mkString(", "))
      }
      MultiJoinHint(hint.child)
  }
}

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
