package org.apache.spark.sql.multijoin.logical

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, Expression}
import org.apache.spark.sql.catalyst.plans.{FullOuter, Inner, JoinType, LeftOuter}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Statistics}

/**
 * N inputs joined at once on one shared key, with the semantics of docs/semantics.md.
 * FULL (nested coalesce): for each non-null key, the product over the inputs of their matching
 * rows (or one null row where an input has none); every row whose key has a null component once,
 * null-padded. LEFT: the same, restricted to the keys and null-key rows of the first input.
 * INNER: the keys present in every input.
 *
 * @param keys one key per input, each of the same arity and the same data types (the chain's
 *             implicit casts are already applied), each over its own input only. A nested Seq
 *             of expressions, so that `references` sees them (ColumnPruning relies on it).
 * @param keyColumns FULL only, and only where the query names the coalesced key: one column per
 *             key component, after the inputs' columns, holding the coalesce of the inputs' keys
 *             of that component (the key of every input present on the row). The operator
 *             computes them and reports its partitioning and order on them; the query's own
 *             spellings of the coalesced key read them (see recognition.CoalescedKey). They are
 *             produced here, not read, so they are no part of `references`.
 */
case class MultiJoin(
    children: Seq[LogicalPlan],
    keys: Seq[Seq[Expression]],
    joinType: JoinType,
    keyColumns: Seq[Attribute] = Nil)
  extends LogicalPlan {

  require(children.size >= 2 && children.size == keys.size, "one key per input, two inputs at least")
  require(keyColumns.isEmpty || keyColumns.size == keys.head.size, "one key column per key component")

  override def output: Seq[Attribute] = MultiJoin.output(joinType, children.map(_.output)) ++ keyColumns

  override def producedAttributes: AttributeSet = AttributeSet(keyColumns)

  override def maxRows: Option[Long] = None

  // Spark's default for non-leaf nodes multiplies the children's sizes; a full outer join on a
  // shared key produces about the sum.
  override def stats: Statistics = Statistics(sizeInBytes = children.map(_.stats.sizeInBytes).sum)

  override def simpleString(maxFields: Int): String =
    MultiJoin.describe(joinType, keys) + MultiJoin.describeKeyColumns(keyColumns)

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[LogicalPlan]): MultiJoin =
    copy(children = newChildren)
}

object MultiJoin {
  /** How EXPLAIN shows the logical node and the operator alike. */
  def describe(joinType: JoinType, keys: Seq[Seq[Expression]]): String =
    s"MultiJoin $joinType, ${keys.size} inputs, keys=" +
      keys.map(_.map(_.sql).mkString("(", ", ", ")")).mkString("[", ", ", "]")

  /** How EXPLAIN shows the key columns, when there are. */
  def describeKeyColumns(keyColumns: Seq[Attribute]): String =
    if (keyColumns.isEmpty) "" else keyColumns.map(_.toString).mkString(", key columns=[", ", ", "]")

  /**
   * The inputs' columns side by side. An input that may be missing from a row (every input of a
   * FULL join, all but the driver of a LEFT one) shows its columns as nullable, whatever it
   * declared: consumers must check for null.
   */
  def output(joinType: JoinType, inputs: Seq[Seq[Attribute]]): Seq[Attribute] =
    inputs.zipWithIndex.flatMap { case (attributes, i) =>
      if (mayBeMissing(joinType, i)) attributes.map(_.withNullability(true)) else attributes
    }

  /** Whether a combination may lack a row of input `input`: FULL any, LEFT all but the driver. */
  def mayBeMissing(joinType: JoinType, input: Int): Boolean = joinType match {
    case FullOuter => true
    case LeftOuter => input > 0
    case Inner => false
    case other => throw new IllegalStateException(s"MultiJoin does not support $other")
  }
}
