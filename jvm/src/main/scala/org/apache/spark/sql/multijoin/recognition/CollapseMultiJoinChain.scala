package org.apache.spark.sql.multijoin.recognition

import org.apache.spark.internal.Logging
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, Cast, Expression}
import org.apache.spark.sql.catalyst.optimizer.{CollapseProject, NormalizeFloatingNumbers}
import org.apache.spark.sql.catalyst.plans.{FullOuter, Inner, LeftOuter}
import org.apache.spark.sql.catalyst.plans.logical.{Join, LogicalPlan, Project, UnaryNode}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.multijoin.MultiJoinConf
import org.apache.spark.sql.multijoin.logical.{MultiJoin, MultiJoinHint}
import org.apache.spark.sql.multijoin.recognition.ChainPatterns._

/**
 * Replaces each [[MultiJoinHint]] by its query, with the join chain inside (FULL, see
 * [[FullOuterChain]]; LEFT or INNER, see [[DrivenChains]]) collapsed into one [[MultiJoin]] when
 * the chain has the semantics of docs/semantics.md, or left as it is with a warning (an error
 * under spark.multijoin.failOnFallback) naming the reason.
 *
 * It runs before CBO, once: Spark's own join rules (predicate pushdown, outer join elimination,
 * column pruning) have finished with the chain's ordinary Join nodes by then.
 *
 * Casts that Spark inserted to compare keys of different types are looked through when they are
 * exact widenings (int to bigint, decimal to a wider decimal, float to double, ...): those keep
 * equality, so every input can be compared in the widest type.
 */
object CollapseMultiJoinChain extends Rule[LogicalPlan] with Logging {

  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformUp {
    case MultiJoinHint(query) if !MultiJoinConf.enabled =>
      logWarning(s"${MultiJoinHint.NAME} hint ignored: ${MultiJoinConf.ENABLED.key} is false. " +
        "The query runs with Spark's own joins.")
      query
    case MultiJoinHint(query) =>
      collapse(query) match {
        // Merges the projection the collapse adds into the query's own select list, then gives a
        // FULL chain its key columns, which the query's coalesce of the keys reads and the
        // operator reports its partitioning on.
        case Right(collapsed) =>
          val merged = CollapseProject(collapsed)
          if (MultiJoinConf.fullOutputPartitioning) CoalescedKey.addKeyColumns(merged) else merged
        case Left(reason) =>
          val message = s"${MultiJoinHint.NAME} hint not applied: $reason. " +
            "The query runs with Spark's own joins."
          if (MultiJoinConf.failOnFallback) {
            throw MultiJoinHint.error(s"$message (${MultiJoinConf.FAIL_ON_FALLBACK.key} is true)")
          }
          logWarning(message)
          query
      }
  }

  /** Collapses the first join found below `query` through unary operators. */
  private def collapse(query: LogicalPlan): Either[Reason, LogicalPlan] = query match {
    case join: Join => collapseRoot(join)
    case unary: UnaryNode => collapse(unary.child).map(child => unary.withNewChildren(Seq(child)))
    case other => Left(s"no join below the hint (found ${other.nodeName})")
  }

  private def collapseRoot(root: Join): Either[Reason, LogicalPlan] = {
    val recognised = root.joinType match {
      case FullOuter => FullOuterChain.recognise(root)
      case LeftOuter => DrivenChains.leftChain(root)
      case Inner => DrivenChains.innerChain(root)
      case other => Left(s"${describe(root)} is ${other.sql}; MULTI_JOIN collapses chains of " +
        "FULL OUTER, LEFT OUTER (all on the first input's key) or INNER joins")
    }
    for {
      chain <- recognised
      keys <- unifiedKeys(chain)
    } yield {
      val multiJoin = MultiJoin(chain.inputs, keys, root.joinType)
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

  /** Casts every input's key to one type per component and normalises floating point keys. */
  private def unifiedKeys(chain: Chain): Either[Reason, Seq[Seq[Expression]]] = for {
    targetTypes <- traverse(0 until chain.arity) { c =>
      val types = chain.keys.map(_(c).dataType).distinct
      KeyTypes.commonExactType(types) match {
        case Some(common) if KeyTypes.isOrderable(common) => Right(common)
        case Some(common) =>
          Left(s"the key type ${common.sql} cannot be sorted, so it cannot be merge-joined")
        case None =>
          Left(s"the key column(s) ${chain.keys.map(_(c).sql).mkString(", ")} have types " +
            s"(${types.map(_.sql).mkString(", ")}) that Spark compares through an inexact cast")
      }
    }
  } yield {
    val timeZone = Option(SQLConf.get.sessionLocalTimeZone)
    chain.keys.map(_.zip(targetTypes).map { case (key, target) =>
      val cast = if (key.dataType == target) key else Cast(key, target, timeZone)
      NormalizeFloatingNumbers.normalize(cast)
    })
  }
}
