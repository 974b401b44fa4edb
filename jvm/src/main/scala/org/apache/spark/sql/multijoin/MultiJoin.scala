package org.apache.spark.sql.multijoin

import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.catalyst.plans.{FullOuter, JoinType}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Statistics}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.SparkStrategy

/**
 * N inputs joined at once on one shared key, with the nested-coalesce semantics of DESIGN.md
 * section 2: for each non-null key, the product over the inputs of their matching rows (or one
 * null row where an input has none); every row whose key has a null component once, null-padded.
 *
 * @param keys one key per input, each of the same arity and the same data types (the chain's
 *             implicit casts are already applied), each over its own input only. A nested Seq
 *             of expressions, so that `references` sees them (ColumnPruning relies on it).
 */
case class MultiJoin(children: Seq[LogicalPlan], keys: Seq[Seq[Expression]], joinType: JoinType)
  extends LogicalPlan {

  require(children.size >= 2 && children.size == keys.size, "one key per input, two inputs at least")

  // A row missing from an input shows that input's columns as null, whatever the input declared.
  override def output: Seq[Attribute] = joinType match {
    case FullOuter => children.flatMap(_.output).map(_.withNullability(true))
    case other => throw new IllegalStateException(s"MultiJoin does not support $other yet")
  }

  override def maxRows: Option[Long] = None

  // Spark's default for non-leaf nodes multiplies the children's sizes; a full outer join on a
  // shared key produces about the sum.
  override def stats: Statistics = Statistics(sizeInBytes = children.map(_.stats.sizeInBytes).sum)

  override def simpleString(maxFields: Int): String =
    s"MultiJoin $joinType, ${children.size} inputs, keys=" +
      keys.map(_.map(_.sql).mkString("(", ", ", ")")).mkString("[", ", ", "]")

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[LogicalPlan]): MultiJoin =
    copy(children = newChildren)
}

/** Plans [[MultiJoin]]; EnsureRequirements then adds one shuffle and one sort per input. */
object MultiJoinStrategy extends SparkStrategy {
  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case MultiJoin(children, keys, joinType) =>
      MultiJoinExec(keys, joinType, children.map(planLater)) :: Nil
    case _ => Nil
  }
}
