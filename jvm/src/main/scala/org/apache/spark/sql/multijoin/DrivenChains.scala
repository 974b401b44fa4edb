package org.apache.spark.sql.multijoin

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions.{EqualTo, ExprId, Expression, ExpressionSet, NamedExpression}
import org.apache.spark.sql.catalyst.plans.{Inner, LeftOuter}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, LogicalPlan, Project}
import org.apache.spark.sql.multijoin.JoinChain._

/**
 * Chains driven by their first input (DESIGN.md section 2):
 *  - LEFT: `t1 LEFT JOIN t2 ON t1.k = t2.k LEFT JOIN t3 ON t1.k = t3.k ...`. Each level must join
 *    on the driver's key. A coalesce over the driver's key and keys of inputs already joined is
 *    the same thing (a joined input's key is the driver's or null), so it is accepted too; a key
 *    of another input alone (`t2.k = t3.k`) is not: it is null wherever t2 has no match.
 *  - INNER: a tree of inner joins whose equalities put one key expression of every input in each
 *    key component (transitively: `t1.k = t2.k AND t2.k = t3.k` is fine). Spark reorders inner
 *    joins and infers equalities, so the tree is read as a whole, not level by level.
 * Projections between levels are computed after the collapse: no row of a left side is ever
 * missing in these joins, so any deterministic projection is safe.
 */
private[multijoin] object DrivenChains {

  def leftChain(root: Join): Either[Reason, Chain] = for {
    below <- leftSideOf(root)
    pairs <- equalityPairs(root)
    _ <- evaluable(root, pairs)
    chain <- below match {
      case None =>
        Right(Chain(Seq(root.left, root.right), Seq(pairs.map(p => strip(p._1)), pairs.map(p => strip(p._2))), Map.empty))
      case Some(chain) => extendLeft(root, chain, pairs)
    }
  } yield chain

  /** The chain below a LEFT join's left side; None when the left side is the driver itself. */
  private def leftSideOf(join: Join): Either[Reason, Option[Chain]] = leftSide(join.left)

  private def leftSide(plan: LogicalPlan): Either[Reason, Option[Chain]] = plan match {
    case join @ Join(_, _, LeftOuter, _, _) => leftChain(join).map(Some(_))
    case Project(projectList, child) if isLeftChain(child) =>
      leftSide(child).flatMap {
        case Some(chain) => withProjection(projectList, chain).map(Some(_))
        case None => Right(None)
      }
    case Filter(condition, child) if isLeftChain(child) =>
      Left(s"a filter (${condition.sql}) stands between two joins of the chain")
    case _ => Right(None)
  }

  private def isLeftChain(plan: LogicalPlan): Boolean = plan match {
    case Join(_, _, LeftOuter, _, _) => true
    case Project(_, child) => isLeftChain(child)
    case _ => false
  }

  private def extendLeft(
      join: Join, chain: Chain, pairs: Seq[(Expression, Expression)]): Either[Reason, Chain] = {
    if (pairs.size != chain.arity) {
      return Left(s"${describe(join)} joins on ${pairs.size} key column(s), the joins below it " +
        s"on ${chain.arity}")
    }
    val driverKeys = chain.keys.head
    val components = pairs.map { case (left, _) =>
      val operands = ExpressionSet(coalesceOperands(strip(substitute(left, chain.aliases))))
      (0 until chain.arity).find { c =>
        operands.exists(_.semanticEquals(driverKeys(c))) && operands.subsetOf(chain.component(c))
      }
    }
    components.zip(pairs).collectFirst { case (None, (left, _)) => left } match {
      case Some(left) =>
        Left(s"${describe(join)} joins on ${left.sql}, which is not the key of the first input " +
          s"(${driverKeys.map(_.sql).mkString(", ")}); a LEFT chain must join every input on it")
      case None if components.flatten.distinct.size != chain.arity =>
        Left(s"${describe(join)} uses a key column of the joins below it twice")
      case None =>
        val byComponent = components.flatten.zip(pairs.map(p => strip(p._2))).toMap
        val rightKey = (0 until chain.arity).map(byComponent)
        Right(chain.copy(inputs = chain.inputs :+ join.right, keys = chain.keys :+ rightKey))
    }
  }

  def innerChain(root: Join): Either[Reason, Chain] = {
    val inputs = mutable.ArrayBuffer.empty[LogicalPlan]
    val conditions = mutable.ArrayBuffer.empty[(Join, Expression)]
    var aliases = Map.empty[ExprId, Expression]

    def visit(plan: LogicalPlan): Option[Reason] = plan match {
      case join @ Join(left, right, Inner, condition, _) =>
        if (condition.isEmpty) return Some(s"${describe(join)} has no join condition")
        conditions ++= splitConjuncts(condition.get).map(join -> _)
        visit(left).orElse(visit(right))
      case Project(projectList, child) if isInnerChain(child) =>
        visit(child).orElse {
          projectionAliases(projectList, aliases, nullWhenMissing = false) match {
            case Left(reason) => Some(reason)
            case Right(extended) => aliases = extended; None
          }
        }
      case Filter(condition, child) if isInnerChain(child) =>
        Some(s"a filter (${condition.sql}) stands between two joins of the chain")
      case other =>
        inputs += other
        None
    }

    visit(root).map(Left(_)).getOrElse(keyClasses(root, inputs.toSeq, conditions.toSeq, aliases))
  }

  private def isInnerChain(plan: LogicalPlan): Boolean = plan match {
    case Join(_, _, Inner, _, _) => true
    case Project(_, child) => isInnerChain(child)
    case _ => false
  }

  /**
   * Groups the key expressions of the inner equalities into components (union-find): each
   * component must hold exactly one expression of every input.
   */
  private def keyClasses(
      root: Join,
      inputs: Seq[LogicalPlan],
      conditions: Seq[(Join, Expression)],
      aliases: Map[ExprId, Expression]): Either[Reason, Chain] = {
    val nodes = mutable.ArrayBuffer.empty[(Int, Expression)]
    val parent = mutable.ArrayBuffer.empty[Int]
    def node(input: Int, e: Expression): Int = {
      val found = nodes.indexWhere { case (i, known) => i == input && known.semanticEquals(e) }
      if (found >= 0) found else { nodes += (input -> e); parent += parent.size; parent.size - 1 }
    }
    def find(x: Int): Int = if (parent(x) == x) x else { parent(x) = find(parent(x)); parent(x) }
    def inputOf(e: Expression): Int =
      if (e.references.isEmpty) -1 else inputs.indexWhere(in => e.references.subsetOf(in.outputSet))

    for ((join, condition) <- conditions) {
      val notAnEquality = s"${describe(join)} has the condition ${condition.sql}, which is not " +
        "an equality between an expression of one input and one of another"
      val reason = substitute(condition, aliases) match {
        case EqualTo(a, b) =>
          keyProblem(join, a).orElse(keyProblem(join, b)).orElse {
            val (left, right) = (inputOf(a), inputOf(b))
            if (left >= 0 && right >= 0 && left != right) {
              parent(find(node(left, strip(a)))) = find(node(right, strip(b)))
              None
            } else Some(notAnEquality)
          }
        case _ => Some(notAnEquality)
      }
      if (reason.isDefined) return Left(reason.get)
    }

    // Components in the order the first input's key expressions were met.
    val components = nodes.indices.filter(n => nodes(n)._1 == 0).map(find).distinct
    val members = components.map(c => nodes.indices.filter(n => find(n) == c).map(nodes))
    val incomplete = nodes.indices.map(find).distinct.filterNot(components.contains)
    if (components.isEmpty || incomplete.nonEmpty ||
        members.exists(m => m.map(_._1).sorted != inputs.indices)) {
      return Left(s"${describe(root)}: the inputs are not all joined on one shared key (each key " +
        "column must be equal across every input, and no input may use two of its columns for " +
        "one key column)")
    }
    val keys = inputs.indices.map(i => members.map(_.find(_._1 == i).get._2))
    Right(Chain(inputs, keys, aliases))
  }

  private def evaluable(join: Join, pairs: Seq[(Expression, Expression)]): Either[Reason, Unit] =
    pairs.flatMap(p => keyProblem(join, p._1).orElse(keyProblem(join, p._2))).headOption.toLeft(())

  private def withProjection(projectList: Seq[NamedExpression], chain: Chain): Either[Reason, Chain] =
    projectionAliases(projectList, chain.aliases, nullWhenMissing = false)
      .map(aliases => chain.copy(aliases = aliases))
}
