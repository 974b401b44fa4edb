package org.apache.spark.sql.multijoin.recognition

import org.apache.spark.sql.catalyst.expressions.{ExprId, Expression, NamedExpression}
import org.apache.spark.sql.catalyst.plans.FullOuter
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, LogicalPlan, Project}
import org.apache.spark.sql.multijoin.recognition.ChainPatterns._

/**
 * Recognises a chain of FULL OUTER joins whose every level joins on the coalesce of the keys of
 * all inputs below it (the nested-coalesce semantics of docs/semantics.md).
 *
 * Correctness rests on four checks:
 *  - each join condition is a conjunction of equalities, one per key component, each equality
 *    between a deterministic expression of one side and one of the other;
 *  - where a side is itself a chain, its expression must be the coalesce of exactly the keys of
 *    that chain's inputs (in any order: in a FULL join on equal keys the keys of a joined row are
 *    either equal or null, so the order of a coalesce over them does not matter; but the
 *    operands of one input's own coalesce key keep their order). Joining every input on `t1.k`
 *    is a different query (the worked example of docs/semantics.md) and is refused;
 *  - the keys of that chain's inputs must be null for a missing row: the coalesce is computed on
 *    the nulls a missing row is padded with, where a key such as `coalesce(t1.k, 0)` would shadow
 *    the key of the rows present, while the operator takes each key from its input's rows only;
 *  - a projection between two levels must yield null for a row that is missing from its side
 *    (an attribute, a coalesce of them, a null-intolerant function of them): after the collapse
 *    it is computed on the joined row, where a vanilla plan would have padded it with null.
 */
private[multijoin] object FullOuterChain {

  /** A side of a join in the chain: a single input whose key is not known yet, or a chain. */
  private sealed trait Side
  private case class Input(plan: LogicalPlan) extends Side
  private case class Joined(chain: Chain) extends Side

  def recognise(join: Join): Either[Reason, Chain] = for {
    left <- side(join.left)
    right <- side(join.right)
    pairs <- equalityPairs(join)
    leftKeys <- sideKeys(join, left, pairs.map(_._1))
    rightKeys <- sideKeys(join, right, pairs.map(_._2))
  } yield Chain(
    inputs = inputsOf(left) ++ inputsOf(right),
    keys = leftKeys ++ rightKeys,
    aliases = aliasesOf(left) ++ aliasesOf(right))

  private def side(plan: LogicalPlan): Either[Reason, Side] = plan match {
    case join @ Join(_, _, FullOuter, _, _) => recognise(join).map(Joined)
    case project @ Project(projectList, child) =>
      side(child).flatMap {
        case Input(_) => Right(Input(project))
        case Joined(chain) => projectChain(projectList, chain).map(Joined)
      }
    case Filter(condition, child) if isChain(child) => Left(filterBetweenJoins(condition))
    case other => Right(Input(other))
  }

  private def isChain(plan: LogicalPlan): Boolean = plan match {
    case Join(_, _, FullOuter, _, _) => true
    case Project(_, child) => isChain(child)
    case _ => false
  }

  private def projectChain(projectList: Seq[NamedExpression], chain: Chain): Either[Reason, Chain] =
    projectionAliases(projectList, chain.aliases, nullWhenMissing = true)
      .map(aliases => chain.copy(aliases = aliases))

  private def inputsOf(side: Side): Seq[LogicalPlan] = side match {
    case Input(plan) => Seq(plan)
    case Joined(chain) => chain.inputs
  }

  private def aliasesOf(side: Side): Map[ExprId, Expression] = side match {
    case Input(_) => Map.empty
    case Joined(chain) => chain.aliases
  }

  /**
   * The keys, per input of `side`, in the order of this join's equalities. An input takes the
   * expressions as its key; a chain must be joined on the coalesce of its own keys.
   */
  private def sideKeys(
      join: Join, side: Side, expressions: Seq[Expression]): Either[Reason, Seq[Seq[Expression]]] =
    for {
      _ <- firstProblem(expressions.map(keyProblem(join, _)))
      keys <- side match {
        case Input(_) => Right(Seq(expressions.map(strip)))
        case Joined(chain) => keysBelow(join, chain, expressions)
      }
    } yield keys

  /** The chain's keys reordered into this join's components, each one the coalesce of its own. */
  private def keysBelow(
      join: Join, chain: Chain, expressions: Seq[Expression]): Either[Reason, Seq[Seq[Expression]]] =
    for {
      _ <- Either.cond(expressions.size == chain.arity, (), s"${describe(join)} joins on " +
        s"${expressions.size} key column(s), the joins below it on ${chain.arity}")
      _ <- firstProblem(chain.keys.flatten.map(notNullForMissingRow(join, _)))
      order <- traverse(expressions) { e =>
        val coalescesKeys = (c: Int) => chain.operandsPerInput(e).exists(_.zip(chain.keys).forall {
          case (operands, key) => takesKey(operands, key(c), wholeKey = true)
        })
        (0 until chain.arity).find(coalescesKeys).toRight(
          s"${describe(join)} joins on ${e.sql}, which is not the coalesce of the keys of the " +
            s"inputs joined below it (${chainKeysSql(chain)}); this chain does not have the " +
            "nested-coalesce semantics")
      }
      _ <- Either.cond(order.distinct.size == chain.arity, (),
        s"${describe(join)} uses a key column of the joins below it twice")
    } yield chain.keys.map(key => order.map(key))

  private def chainKeysSql(chain: Chain): String =
    (0 until chain.arity).map(c => s"coalesce(${chain.keys.map(_(c).sql).mkString(", ")})")
      .mkString(", ")
}
