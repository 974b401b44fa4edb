package org.apache.spark.sql.multijoin.recognition

import org.apache.spark.sql.catalyst.expressions.{Alias, And, Attribute, AttributeSet, Cast, Coalesce, EqualTo, ExprId, Expression, KnownFloatingPointNormalized, NamedExpression, SubqueryExpression, Unevaluable}
import org.apache.spark.sql.catalyst.optimizer.NormalizeNaNAndZero
import org.apache.spark.sql.catalyst.plans.logical.{Join, LogicalPlan}
import org.apache.spark.sql.multijoin.shim.SparkShim

/**
 * What the recognisers of the FULL chain ([[FullOuterChain]]) and of the LEFT and INNER chains
 * ([[DrivenChains]]) share: the [[ChainPatterns.Chain]] they produce, a join condition read as
 * key equalities, what may be a key, and the projections between levels. The semantics each
 * chain must have are in docs/semantics.md.
 *
 * Every check answers with an Either: Left holds the reason shown to the user when the hint
 * falls back, and the first problem found wins.
 */
private[multijoin] object ChainPatterns {

  /** Why a chain cannot be collapsed, in words for the fallback warning. */
  type Reason = String

  /**
   * A recognised chain.
   *
   * @param keys    per input, its key components (casts and normalisation stripped)
   * @param aliases expressions defined by projections between levels, over the inputs' columns
   */
  case class Chain(
      inputs: Seq[LogicalPlan],
      keys: Seq[Seq[Expression]],
      aliases: Map[ExprId, Expression]) {
    require(inputs.size == keys.size)
    def arity: Int = keys.head.size

    /**
     * The operands of the coalesce `e` (a level's key over this chain, or a single operand), per
     * input: those over that input's columns, in their order in `e`. None when an operand is over
     * no input or over several (a constant, `t1.k + t2.k`).
     */
    def operandsPerInput(e: Expression): Option[Seq[Seq[Expression]]] = {
      val operands = coalesceOperands(strip(substitute(e, aliases)))
      val owners = operands.map(operand => inputs.indexWhere(input =>
        operand.references.nonEmpty && operand.references.subsetOf(input.outputSet)))
      if (owners.contains(-1)) None
      else Some(inputs.indices.map(i => operands.zip(owners).collect { case (operand, `i`) => operand }))
    }
  }

  /**
   * Whether `operands`, an input's operands in a level's coalesce, are the operands of its key
   * `key` in their order, or (`wholeKey` false) a leading part of them. Within one input the
   * order matters: `coalesce(t1.b, t1.a)` is not the key `coalesce(t1.a, t1.b)`. Across inputs
   * it does not: the first operand that is not null is then, whichever input it comes from, the
   * first of its own key's, so it is that key, and the keys of the rows present are equal.
   */
  def takesKey(operands: Seq[Expression], key: Expression, wholeKey: Boolean): Boolean = {
    val keyOperands = coalesceOperands(key)
    (operands.size == keyOperands.size || !wholeKey && operands.size < keyOperands.size) &&
      operands.zip(keyOperands).forall { case (a, b) => a.semanticEquals(b) }
  }

  /**
   * Why a key that a later level coalesces is refused, if it is: that level computes it on the
   * nulls a join pads a missing row with, where it must be null for the coalesce to reach the
   * key of the rows present (`CASE WHEN k IS NULL THEN 0 ELSE k END` is 0 there).
   */
  def notNullForMissingRow(join: Join, key: Expression): Option[Reason] =
    if (nullWhenAbsent(key)) None
    else Some(s"${describe(join)} joins on a coalesce over ${key.sql}, which is not null for a " +
      "row missing from its input: the joins compute it on the nulls that stand in for that row, " +
      "so the coalesce is not the key of the rows present")

  /** `check` applied to every item in order, or the first problem it finds (and no later call). */
  def traverse[A, B](items: Seq[A])(check: A => Either[Reason, B]): Either[Reason, Seq[B]] =
    items.foldLeft[Either[Reason, Vector[B]]](Right(Vector.empty)) { (done, item) =>
      done.flatMap(results => check(item).map(results :+ _))
    }

  /** The first of `problems` that is one, as a Left. */
  def firstProblem(problems: Seq[Option[Reason]]): Either[Reason, Unit] =
    problems.flatten.headOption.toLeft(())

  /** The join condition as (left expression, right expression) pairs, one per key component. */
  def equalityPairs(join: Join): Either[Reason, Seq[(Expression, Expression)]] = {
    val conjuncts = join.condition.toSeq.flatMap(splitConjuncts)
    val (leftSet, rightSet) = (join.left.outputSet, join.right.outputSet)
    def over(e: Expression, side: AttributeSet) = e.references.nonEmpty && e.references.subsetOf(side)
    for {
      _ <- Either.cond(conjuncts.nonEmpty, (), s"${describe(join)} has no join condition")
      pairs <- traverse(conjuncts) {
        case EqualTo(a, b) if over(a, leftSet) && over(b, rightSet) => Right((a, b))
        case EqualTo(a, b) if over(a, rightSet) && over(b, leftSet) => Right((b, a))
        case EqualTo(a, b) if a.references.isEmpty || b.references.isEmpty =>
          Left(s"${describe(join)} compares a key with a constant (Spark folds a key column " +
            "that holds one value into the condition), so the key of each input is not known")
        case other => Left(s"${describe(join)} has the condition ${other.sql}, which is not an " +
          "equality between an expression of each side")
      }
    } yield pairs
  }

  /** Why a chain with a filter between two of its joins is refused. */
  def filterBetweenJoins(condition: Expression): Reason =
    s"a filter (${condition.sql}) stands between two joins of the chain"

  def splitConjuncts(condition: Expression): Seq[Expression] = condition match {
    case And(a, b) => splitConjuncts(a) ++ splitConjuncts(b)
    case other => Seq(other)
  }

  /** Why `key` cannot be a key of the multi-join, if it cannot. */
  def keyProblem(join: Join, key: Expression): Option[Reason] =
    if (!key.deterministic) {
      Some(s"${describe(join)} joins on ${key.sql}, which is not deterministic")
    } else if (key.exists(isUnevaluable)) {
      Some(s"${describe(join)} joins on ${key.sql}, which cannot be evaluated as a key " +
        "(a Python UDF or a subquery)")
    } else None

  private def isUnevaluable(e: Expression): Boolean = e match {
    case _: Attribute => false // bound to a column at execution, though Unevaluable in itself
    case _: SubqueryExpression => true
    case _: Unevaluable => true
    case _ => false
  }

  /**
   * `aliases` plus those a projection between two levels defines, over the inputs' columns. It is
   * computed after the collapse, on the joined row: it must be deterministic, and where a side
   * can be missing (FULL), null for a missing row, as the vanilla plan's padding would be.
   */
  def projectionAliases(
      projectList: Seq[NamedExpression],
      aliases: Map[ExprId, Expression],
      nullWhenMissing: Boolean): Either[Reason, Map[ExprId, Expression]] = {
    val defined = projectList.collect { case alias: Alias => alias }
    for {
      _ <- firstProblem(defined.map { alias =>
        if (alias.deterministic) None
        else Some(s"the projection ${alias.sql} between two joins is not deterministic")
      })
      _ <- firstProblem(defined.map { alias =>
        if (!nullWhenMissing || nullWhenAbsent(alias.child)) None
        else Some(s"the projection ${alias.sql} between two joins is not null for a row that " +
          "is missing from its side, so it cannot be computed after the joins")
      })
    } yield aliases ++ defined.map(alias => alias.exprId -> substitute(alias.child, aliases))
  }

  /** Whether `expression` is null on the all-null row that stands in for a missing input. */
  def nullWhenAbsent(expression: Expression): Boolean = expression match {
    case _: Attribute => true
    case Coalesce(children) => children.forall(nullWhenAbsent)
    case KnownFloatingPointNormalized(child) => nullWhenAbsent(child)
    case e if SparkShim.isNullIntolerant(e) => e.children.exists(nullWhenAbsent)
    case _ => false
  }

  def substitute(e: Expression, aliases: Map[ExprId, Expression]): Expression =
    if (aliases.isEmpty) e else e.transformUp {
      case a: Attribute if aliases.contains(a.exprId) => aliases(a.exprId)
    }

  /** Removes what does not change key equality: aliases, normalisation, exact widening casts. */
  def strip(e: Expression): Expression = e match {
    case Alias(child, _) => strip(child)
    case KnownFloatingPointNormalized(child) => strip(child)
    case NormalizeNaNAndZero(child) => strip(child)
    case Cast(child, to, _, _) if KeyTypes.isExactWidening(child.dataType, to) => strip(child)
    case Coalesce(children) =>
      children.flatMap(child => coalesceOperands(strip(child))) match {
        case Seq(single) => single
        case operands => Coalesce(operands)
      }
    case other => other
  }

  def coalesceOperands(e: Expression): Seq[Expression] = e match {
    case Coalesce(children) => children
    case other => Seq(other)
  }

  def describe(join: Join): String =
    s"the join ON ${join.condition.map(_.sql).getOrElse("(nothing)")}"
}
