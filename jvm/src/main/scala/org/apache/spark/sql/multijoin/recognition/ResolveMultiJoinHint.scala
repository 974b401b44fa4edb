package org.apache.spark.sql.multijoin.recognition

import java.util.Locale

import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnresolvedHint}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.multijoin.logical.MultiJoinHint

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
