package org.apache.spark.sql.multijoin

import org.apache.spark.internal.Logging
import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.catalyst.expressions.{Alias, And, Attribute, AttributeSet, Cast, Coalesce, EqualTo, ExprId, Expression, ExpressionSet, KnownFloatingPointNormalized, NamedExpression, NullIntolerant, SubqueryExpression, Unevaluable}
import org.apache.spark.sql.catalyst.optimizer.{CollapseProject, NormalizeFloatingNumbers, NormalizeNaNAndZero}
import org.apache.spark.sql.catalyst.plans.{FullOuter, Inner, LeftOuter}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, LogicalPlan, Project, UnaryNode}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.internal.SQLConf

/**
 * Replaces each [[MultiJoinHint]] by its query, with the FULL OUTER join chain inside collapsed
 * into one [[MultiJoin]] when the chain has exactly the nested-coalesce semantics, or left as it
 * is with a warning (an error under spark.multijoin.failOnFallback) naming the reason.
 *
 * It runs before CBO, once: Spark's own join rules (predicate pushdown, outer join elimination,
 * column pruning) have finished with the chain's ordinary Join nodes by then.
 */
object CollapseMultiJoinChain extends Rule[LogicalPlan] with Logging {

  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformUp {
    case MultiJoinHint(query) if !MultiJoinConf.enabled =>
      logWarning(s"${MultiJoinHint.NAME} hint ignored: ${MultiJoinConf.ENABLED.key} is false. " +
        "The query runs with Spark's own joins.")
      query
    case MultiJoinHint(query) =>
      JoinChain.collapse(query) match {
        // Merges the projection the collapse adds into the query's own select list.
        case Right(collapsed) => CollapseProject(collapsed)
        case Left(reason) =>
          val message = s"${MultiJoinHint.NAME} hint not applied: $reason. " +
            "The query runs with Spark's own joins."
          if (MultiJoinConf.failOnFallback) {
            throw new AnalysisException(s"$message (${MultiJoinConf.FAIL_ON_FALLBACK.key} is true)")
          }
          logWarning(message)
          query
      }
  }
}

/**
 * Recognises a chain of FULL OUTER joins whose every level joins on the coalesce of the keys of
 * all inputs below it (DESIGN.md section 2) and rewrites it into a [[MultiJoin]].
 *
 * Correctness rests on three checks:
 *  - each join condition is a conjunction of equalities, one per key component, each equality
 *    between a deterministic expression of one side and one of the other;
 *  - where a side is itself a chain, its expression must be the coalesce of exactly the keys of
 *    that chain's inputs (in any order: in a FULL join on equal keys the keys of a joined row are
 *    either equal or null, so the order of a coalesce over them does not matter). Joining every
 *    input on `t1.k` is a different query (DESIGN.md's 5-row example) and is refused;
 *  - a projection between two levels must yield null for a row that is missing from its side
 *    (an attribute, a coalesce of them, a null-intolerant function of them): after the collapse
 *    it is computed on the joined row, where a vanilla plan would have padded it with null.
 *
 * Casts that Spark inserted to compare keys of different types are looked through when they are
 * exact widenings (int to bigint, decimal to a wider decimal, float to double, ...): those keep
 * equality, so every input can be compared in the widest type.
 */
private[multijoin] object JoinChain {

  type Reason = String

  /** A side of a join in the chain: a single input whose key is not known yet, or a chain. */
  private[multijoin] sealed trait Side
  private case class Input(plan: LogicalPlan) extends Side
  /**
   * @param keys    per input, its key components (casts and normalisation stripped)
   * @param aliases expressions defined by projections between levels, over the inputs' columns
   */
  private[multijoin] case class Chain(
      inputs: Seq[LogicalPlan],
      keys: Seq[Seq[Expression]],
      aliases: Map[ExprId, Expression]) extends Side {
    require(inputs.size == keys.size)
    def arity: Int = keys.head.size
    /** The set of key expressions of one component across the chain's inputs. */
    def component(c: Int): ExpressionSet = ExpressionSet(keys.flatMap(k => coalesceOperands(k(c))))
  }

  /** Collapses the first join found below `query` through unary operators. */
  def collapse(query: LogicalPlan): Either[Reason, LogicalPlan] = query match {
    case join: Join => collapseRoot(join)
    case unary: UnaryNode => collapse(unary.child).map(child => unary.withNewChildren(Seq(child)))
    case other => Left(s"no join below the hint (found ${other.nodeName})")
  }

  private def collapseRoot(root: Join): Either[Reason, LogicalPlan] = {
    val recognised = root.joinType match {
      case FullOuter => joinChain(root)
      case LeftOuter => DrivenChains.leftChain(root)
      case Inner => DrivenChains.innerChain(root)
      case other => Left(s"${describe(root)} is ${other.sql}; MULTI_JOIN collapses chains of " +
        "FULL OUTER, LEFT OUTER (all on the first input's key) or INNER joins")
    }
    for {
      chain <- recognised
      keys <- unifiedKeys(chain)
    } yield {
      val inputs = root.joinType match {
        case FullOuter => chain.inputs
        case _ => RuntimeBloomFilter.prune(chain.inputs, keys)
      }
      val multiJoin = MultiJoin(inputs, keys, root.joinType)
      // Keep the root's output attributes (same ids) so the operators above are untouched.
      val projectList = root.output.map { attribute =>
        chain.aliases.get(attribute.exprId) match {
          case Some(expression) =>
            Alias(expression, attribute.name)(attribute.exprId, attribute.qualifier)
          case None => attribute
        }
      }
      if (projectList.forall(_.isInstanceOf[Attribute])) multiJoin
      else Project(projectList, multiJoin)
    }
  }

  private def side(plan: LogicalPlan): Either[Reason, Side] = plan match {
    case join @ Join(_, _, FullOuter, _, _) => joinChain(join)
    case project @ Project(projectList, child) =>
      side(child).flatMap {
        case Input(_) => Right(Input(project))
        case chain: Chain => projectChain(projectList, chain)
      }
    case Filter(condition, child) if isChain(child) =>
      Left(s"a filter (${condition.sql}) stands between two joins of the chain")
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

  /**
   * `aliases` plus those a projection between two levels defines, over the inputs' columns. It is
   * computed after the collapse, on the joined row: it must be deterministic, and where a side
   * can be missing (FULL), null for a missing row, as the vanilla plan's padding would be.
   */
  private[multijoin] def projectionAliases(
      projectList: Seq[NamedExpression],
      aliases: Map[ExprId, Expression],
      nullWhenMissing: Boolean): Either[Reason, Map[ExprId, Expression]] = {
    val defined = projectList.collect { case alias: Alias => alias }
    defined.find(!_.deterministic).foreach { alias =>
      return Left(s"the projection ${alias.sql} between two joins is not deterministic")
    }
    if (nullWhenMissing) {
      defined.find(alias => !nullWhenAbsent(alias.child)).foreach { alias =>
        return Left(s"the projection ${alias.sql} between two joins is not null for a row that " +
          "is missing from its side, so it cannot be computed after the joins")
      }
    }
    Right(aliases ++ defined.map(alias => alias.exprId -> substitute(alias.child, aliases)))
  }

  /** Why `key` cannot be a key of the multi-join, if it cannot. */
  private[multijoin] def keyProblem(join: Join, key: Expression): Option[Reason] =
    if (!key.deterministic) {
      Some(s"${describe(join)} joins on ${key.sql}, which is not deterministic")
    } else if (key.exists(isUnevaluable)) {
      Some(s"${describe(join)} joins on ${key.sql}, which cannot be evaluated as a key " +
        "(a Python UDF or a subquery)")
    } else None

  private def nullWhenAbsent(expression: Expression): Boolean = expression match {
    case _: Attribute => true
    case Coalesce(children) => children.forall(nullWhenAbsent)
    case KnownFloatingPointNormalized(child) => nullWhenAbsent(child)
    case e: NullIntolerant => e.children.exists(nullWhenAbsent)
    case _ => false
  }

  private def joinChain(join: Join): Either[Reason, Chain] = for {
    left <- side(join.left)
    right <- side(join.right)
    pairs <- equalityPairs(join)
    leftKeys <- sideKeys(join, left, pairs.map(_._1))
    rightKeys <- sideKeys(join, right, pairs.map(_._2))
  } yield Chain(
    inputs = inputsOf(left) ++ inputsOf(right),
    keys = leftKeys ++ rightKeys,
    aliases = aliasesOf(left) ++ aliasesOf(right))

  private def inputsOf(side: Side): Seq[LogicalPlan] = side match {
    case Input(plan) => Seq(plan)
    case chain: Chain => chain.inputs
  }

  private def aliasesOf(side: Side): Map[ExprId, Expression] = side match {
    case Input(_) => Map.empty
    case chain: Chain => chain.aliases
  }

  /** The join condition as (left expression, right expression) pairs, one per key component. */
  private[multijoin] def equalityPairs(join: Join): Either[Reason, Seq[(Expression, Expression)]] = {
    val conjuncts = join.condition.toSeq.flatMap(splitConjuncts)
    if (conjuncts.isEmpty) return Left(s"${describe(join)} has no join condition")
    val (leftSet, rightSet) = (join.left.outputSet, join.right.outputSet)
    def over(e: Expression, side: AttributeSet) = e.references.nonEmpty && e.references.subsetOf(side)
    val pairs = conjuncts.map {
      case EqualTo(a, b) if over(a, leftSet) && over(b, rightSet) => Right((a, b))
      case EqualTo(a, b) if over(a, rightSet) && over(b, leftSet) => Right((b, a))
      case EqualTo(a, b) if a.references.isEmpty || b.references.isEmpty =>
        Left(s"${describe(join)} compares a key with a constant (Spark folds a key column that " +
          "holds one value into the condition), so the key of each input is not known")
      case other => Left(s"${describe(join)} has the condition ${other.sql}, which is not an " +
        "equality between an expression of each side")
    }
    pairs.collectFirst { case Left(reason) => reason } match {
      case Some(reason) => Left(reason)
      case None => Right(pairs.collect { case Right(pair) => pair })
    }
  }

  private[multijoin] def splitConjuncts(condition: Expression): Seq[Expression] = condition match {
    case And(a, b) => splitConjuncts(a) ++ splitConjuncts(b)
    case other => Seq(other)
  }

  /**
   * The keys, per input of `side`, in the order of this join's equalities. An input takes the
   * expressions as its key; a chain must be joined on the coalesce of its own keys.
   */
  private def sideKeys(
      join: Join, side: Side, expressions: Seq[Expression]): Either[Reason, Seq[Seq[Expression]]] = {
    expressions.flatMap(keyProblem(join, _)).headOption.foreach(reason => return Left(reason))
    side match {
      case Input(_) => Right(Seq(expressions.map(strip)))
      case chain: Chain =>
        if (expressions.size != chain.arity) {
          return Left(s"${describe(join)} joins on ${expressions.size} key column(s), the joins " +
            s"below it on ${chain.arity}")
        }
        val components = expressions.map { e =>
          val operands = ExpressionSet(coalesceOperands(strip(substitute(e, chain.aliases))))
          (0 until chain.arity).find(c => chain.component(c) == operands)
        }
        components.zip(expressions).collectFirst { case (None, e) => e } match {
          case Some(e) =>
            Left(s"${describe(join)} joins on ${e.sql}, which is not the coalesce of the keys " +
              s"of the inputs joined below it (${chainKeysSql(chain)}); this chain does not " +
              "have the nested-coalesce semantics")
          case None if components.flatten.distinct.size != chain.arity =>
            Left(s"${describe(join)} uses a key column of the joins below it twice")
          case None =>
            val order = components.flatten
            Right(chain.keys.map(key => order.map(key)))
        }
    }
  }

  private def chainKeysSql(chain: Chain): String =
    (0 until chain.arity).map(c => s"coalesce(${chain.keys.map(_(c).sql).mkString(", ")})")
      .mkString(", ")

  private[multijoin] def isUnevaluable(e: Expression): Boolean = e match {
    case _: Attribute => false // bound to a column at execution, though Unevaluable in itself
    case _: SubqueryExpression => true
    case _: Unevaluable => true
    case _ => false
  }

  private[multijoin] def substitute(e: Expression, aliases: Map[ExprId, Expression]): Expression =
    if (aliases.isEmpty) e else e.transformUp {
      case a: Attribute if aliases.contains(a.exprId) => aliases(a.exprId)
    }

  /** Removes what does not change key equality: aliases, normalisation, exact widening casts. */
  private[multijoin] def strip(e: Expression): Expression = e match {
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

  private[multijoin] def coalesceOperands(e: Expression): Seq[Expression] = e match {
    case Coalesce(children) => children
    case other => Seq(other)
  }

  /** Casts every input's key to one type per component and normalises floating point keys. */
  private def unifiedKeys(chain: Chain): Either[Reason, Seq[Seq[Expression]]] = {
    val targetTypes = (0 until chain.arity).map { c =>
      val types = chain.keys.map(_(c).dataType).distinct
      KeyTypes.commonExactType(types) match {
        case Some(common) if KeyTypes.isOrderable(common) => common
        case Some(common) =>
          return Left(s"the key type ${common.sql} cannot be sorted, so it cannot be merge-joined")
        case None =>
          return Left(s"the key column(s) ${chain.keys.map(_(c).sql).mkString(", ")} have types " +
            s"(${types.map(_.sql).mkString(", ")}) that Spark compares through an inexact cast")
      }
    }
    val timeZone = Option(SQLConf.get.sessionLocalTimeZone)
    Right(chain.keys.map(_.zip(targetTypes).map { case (key, target) =>
      val cast = if (key.dataType == target) key else Cast(key, target, timeZone)
      NormalizeFloatingNumbers.normalize(cast)
    }))
  }

  private[multijoin] def describe(join: Join): String =
    s"the join ON ${join.condition.map(_.sql).getOrElse("(nothing)")}"
}
