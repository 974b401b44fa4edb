package org.apache.spark.sql.multijoin.logical

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnaryNode}

/**
 * Marks a query that carries the MULTI_JOIN hint. It is an identity over its child; it lives from
 * analysis (recognition.ResolveMultiJoinHint) until recognition.CollapseMultiJoinChain replaces
 * it once the optimizer has finished with the joins below it. Keeping the hint as a node (rather
 * than a tag on the joins) means no optimizer rule can lose it by rebuilding a Join.
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
