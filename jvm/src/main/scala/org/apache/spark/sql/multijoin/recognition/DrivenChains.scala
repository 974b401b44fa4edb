package org.apache.spark.sql.multijoin.recognition

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions.{EqualTo, ExprId, Expression, NamedExpression}
import org.apache.spark.sql.catalyst.plans.{Inner, LeftOuter}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, LogicalPlan, Project}
import org.apache.spark.sql.multijoin.recognition.ChainPatterns._

/**
 * Chains driven by their first input (semantics in docs/semantics.md):
 *  - LEFT: `t1 LEFT JOIN t2 ON t1.k = t2.k LEFT JOIN t3 ON t1.k = t3.k ...`. Each level must join
 *    on the driver's key. A coalesce over the driver's key and keys of inputs already joined is
 *    the same thing (a joined input's key is the driver's or null), so it is accepted too,
 *    provided those keys are null where their input has no match (`CASE WHEN t2.k IS NULL THEN 0
 *    ELSE t2.k END` is 0 there) and a coalesce key keeps its operands' order; a key of another
 *    input alone (`t2.k = t3.k`) is not: it is null wherever t2 has no match.
 *  - INNER: a tree of inner joins whose equalities put one key expression of every input in each
 *    key component (transitively: `t1.k = t2.k AND t2.k = t3.k` is fine). Spark reorders inner
 *    joins and infers equalities, so the tree is read as a whole, not level by level.
 * Projections between levels are computed after the collapse: no row of a left side is ever
 * missing in these joins, so any deterministic projection is safe.
 */
private[multijoin] object DrivenChains {

  def leftChain(root: Join): Either[Reason, Chain] = for {
    below <- leftSide(root.left)
    pairs <- equalityPairs(root)
    _ <- firstProblem(pairs.flatMap { case (left, right) => Seq(left, right).map(keyProblem(root, _)) })
    chain <- below match {
      case None => Right(Chain(
        inputs = Seq(root.left, root.right),
        keys = Seq(pairs.map(p => strip(p._1)), pairs.map(p => strip(p._2))),
        aliases = Map.empty))
      case Some(chain) => extendLeft(root, chain, pairs)
    }
  } yield chain

  /** The chain below a LEFT join's left side; None when the left side is the driver itself. */
  private def leftSide(plan: LogicalPlan): Either[Reason, Option[Chain]] = plan match {
    case join @ Join(_, _, LeftOuter, _, _) => leftChain(join).map(Some(_))
    case Project(projectList, child) if isLeftChain(child) =>
      leftSide(child).flatMap {
        case Some(chain) => withProjection(projectList, chain).map(Some(_))
        case None => Right(None)
      }
    case Filter(condition, child) if isLeftChain(child) => Left(filterBetweenJoins(condition))
    case _ => Right(None)
  }

  private def isLeftChain(plan: LogicalPlan): Boolean = plan match {
    case Join(_, _, LeftOuter, _, _) => true
    case Project(_, child) => isLeftChain(child)
    case _ => false
  }

  private def extendLeft(
      join: Join, chain: Chain, pairs: Seq[(Expression, Expression)]): Either[Reason, Chain] = {
    val driverKeys = chain.keys.head
    for {
      _ <- Either.cond(pairs.size == chain.arity, (), s"${describe(join)} joins on " +
        s"${pairs.size} key column(s), the joins below it on ${chain.arity}")
      components <- traverse(pairs) { case (left, _) =>
        val perInput = chain.operandsPerInput(left)
        // The driver's whole key; of each input joined to it, nothing or a leading part of its key.
        val drivenBy = (c: Int) => perInput.exists { operands =>
          takesKey(operands.head, driverKeys(c), wholeKey = true) &&
            operands.tail.zip(chain.keys.tail).forall { case (o, key) => takesKey(o, key(c), wholeKey = false) }
        }
        for {
          c <- (0 until chain.arity).find(drivenBy).toRight(s"${describe(join)} joins on " +
            s"${left.sql}, which is not the key of the first input " +
            s"(${driverKeys.map(_.sql).mkString(", ")}); a LEFT chain must join every input on it")
          // An input joined to the driver may have no match, so its operands must be null then.
          _ <- firstProblem(perInput.toSeq.flatMap(_.tail.flatten).map(notNullForMissingRow(join, _)))
        } yield c
      }
      _ <- Either.cond(components.distinct.size == chain.arity, (),
        s"${describe(join)} uses a key column of the joins below it twice")
    } yield {
      val byComponent = components.zip(pairs.map(p => strip(p._2))).toMap
      val rightKey = (0 until chain.arity).map(byComponent)
      chain.copy(inputs = chain.inputs :+ join.right, keys = chain.keys :+ rightKey)
    }
  }

  def innerChain(root: Join): Either[Reason, Chain] = {
    val inputs = mutable.ArrayBuffer.empty[LogicalPlan]
    val conditions = mutable.ArrayBuffer.empty[(Join, Expression)]
    var aliases = Map.empty[ExprId, Expression]

    // Collects the inputs, the conjuncts of every join condition and the projections' aliases.
    def visit(plan: LogicalPlan): Either[Reason, Unit] = plan match {
      case join @ Join(left, right, Inner, condition, _) =>
        condition.toRight(s"${describe(join)} has no join condition").flatMap { condition =>
          conditions ++= splitConjuncts(condition).map(join -> _)
          visit(left).flatMap(_ => visit(right))
        }
      case Project(projectList, child) if isInnerChain(child) =>
        for {
          _ <- visit(child)
          extended <- projectionAliases(projectList, aliases, nullWhenMissing = false)
        } yield aliases = extended
      case Filter(condition, child) if isInnerChain(child) => Left(filterBetweenJoins(condition))
      case other =>
        inputs += other
        Right(())
    }

    visit(root).flatMap(_ => keyClasses(root, inputs.toSeq, conditions.toSeq, aliases))
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

    // Unites the two sides of every equality, or finds the first condition that is not one.
    val united = traverse(conditions) { case (join, condition) =>
      val notAnEquality = s"${describe(join)} has the condition ${condition.sql}, which is not " +
        "an equality between an expression of one input and one of another"
      substitute(condition, aliases) match {
        case EqualTo(a, b) =>
          val (left, right) = (inputOf(a), inputOf(b))
          for {
            _ <- firstProblem(Seq(keyProblem(join, a), keyProblem(join, b)))
            _ <- Either.cond(left >= 0 && right >= 0 && left != right, (), notAnEquality)
          } yield parent(find(node(left, strip(a)))) = find(node(right, strip(b)))
        case _ => Left(notAnEquality)
      }
    }

    united.flatMap { _ =>
      // Components in the order the first input's key expressions were met.
      val components = nodes.indices.filter(n => nodes(n)._1 == 0).map(find).distinct
      val members = components.map(c => nodes.indices.filter(n => find(n) == c).map(nodes))
      val incomplete = nodes.indices.map(find).distinct.filterNot(components.contains)
      val shared = components.nonEmpty && incomplete.isEmpty &&
        members.forall(m => m.map(_._1).sorted == inputs.indices)
      Either.cond(shared,
        Chain(inputs, inputs.indices.map(i => members.map(_.find(_._1 == i).get._2)), aliases),
        s"${describe(root)}: the inputs are not all joined on one shared key (each key column " +
          "must be equal across every input, and no input may use two of its columns for one " +
          "key column)")
    }
  }

  private def withProjection(projectList: Seq[NamedExpression], chain: Chain): Either[Reason, Chain] =
    projectionAliases(projectList, chain.aliases, nullWhenMissing = false)
      .map(aliases => chain.copy(aliases = aliases))
}
