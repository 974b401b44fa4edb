package org.apache.spark.sql.multijoin.recognition

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeMap, Coalesce, Expression, ExpressionSet}
import org.apache.spark.sql.catalyst.optimizer.{CollapseProject, PushDownPredicates}
import org.apache.spark.sql.catalyst.plans.FullOuter
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnaryNode}
import org.apache.spark.sql.catalyst.plans.physical.{CoalescedBoundary, CoalescedHashPartitioning, HashPartitioning, Partitioning}
import org.apache.spark.sql.multijoin.logical.MultiJoin
import org.apache.spark.sql.multijoin.recognition.ChainPatterns.{coalesceOperands, strip}
import org.apache.spark.sql.types._

/**
 * The coalesced key of a FULL multi-join (docs/semantics.md) and the output partitioning it gives
 * (docs/architecture.md, "Output partitioning of a FULL multi-join").
 *
 * Every input is hash-partitioned on its key into the same partitions. On every output row the
 * inputs present have equal keys and each missing input's key is null, so the coalesce of the
 * inputs' keys is the key each present row was hashed by: the row sits in the partition that key
 * hashes to. Spark's operators above can only use that if they name the same expression, so the
 * query's own spellings of the coalesced key (any order, nested or not, Spark's implicit casts)
 * are rewritten into the one spelling the operator reports.
 */
private[multijoin] object CoalescedKey {

  /**
   * Per key component, the coalesce of every input's key, over `output` (the multi-join's output,
   * where every column is nullable). None when some key is not null for a missing input
   * (`coalesce(t1.k, 0)` is 0 there): that input's key would then shadow the present one's.
   */
  def of(keys: Seq[Seq[Expression]], output: Seq[Attribute]): Option[Seq[Expression]] =
    if (!keys.flatten.forall(ChainPatterns.nullWhenAbsent)) None
    else {
      val outputAttribute = AttributeMap(output.map(a => a -> a))
      Some(keys.head.indices.map { c =>
        Coalesce(keys.map(_(c))).transform { case a: Attribute => outputAttribute.getOrElse(a, a) }
      })
    }

  /** How one input was hash-partitioned: which key components, into how many partitions. */
  private case class Hashing(
      components: Seq[Int], numPartitions: Int, coalescedByAqe: Option[Seq[CoalescedBoundary]])

  /**
   * The partitioning of the output on `coalescedKey`, when every input arrives hash-partitioned
   * the same way: on the same components of its key (HashPartitioning on a subset of them
   * satisfies the operator's ClusteredDistribution too), into the same number of partitions,
   * and, after AQE coalesced the shuffles, into the same ranges of them. Anything else (a hash
   * on another expression or on more columns than the key, a storage partitioning, a collection)
   * gives None.
   */
  def partitioning(
      coalescedKey: Seq[Expression],
      keys: Seq[Seq[Expression]],
      inputs: Seq[Partitioning]): Option[Partitioning] =
    keys.zip(inputs).map { case (key, input) => hashing(key, input) }.distinct match {
      case Seq(Some(Hashing(components, numPartitions, coalescedByAqe))) =>
        val hashed = HashPartitioning(components.map(coalescedKey), numPartitions)
        Some(coalescedByAqe.fold[Partitioning](hashed)(CoalescedHashPartitioning(hashed, _)))
      case _ => None
    }

  private def hashing(key: Seq[Expression], partitioning: Partitioning): Option[Hashing] =
    partitioning match {
      case HashPartitioning(expressions, n) => components(key, expressions).map(Hashing(_, n, None))
      case CoalescedHashPartitioning(HashPartitioning(expressions, n), ranges) =>
        components(key, expressions).map(Hashing(_, n, Some(ranges)))
      case _ => None
    }

  /** The key component each hashed expression is, if each is exactly one of them. */
  private def components(key: Seq[Expression], hashed: Seq[Expression]): Option[Seq[Int]] = {
    val found = hashed.map(e => key.indices.filter(c => key(c).semanticEquals(e)))
    if (found.forall(_.size == 1)) Some(found.map(_.head)) else None
  }

  /**
   * Rewrites, in the operators between a collapsed FULL chain and its hint, every expression
   * that is the coalesce of all the inputs' keys of one component, in any order or nesting, into
   * the spelling [[of]] gives. The value is the same on every output row (the keys present are
   * equal, the others null), provided equal keys are identical values: not for floating point
   * (-0.0 and 0.0) nor for strings of a collation that ignores case or accents.
   */
  def respell(plan: LogicalPlan): LogicalPlan = topMultiJoin(plan) match {
    case Some(multiJoin @ MultiJoin(_, keys, FullOuter)) =>
      of(keys, multiJoin.output).fold(plan) { coalescedKey =>
        // A filter Spark inferred above the chain (`isnotnull(k)` under a join on k) would keep
        // the query's projection from merging with the collapse's, whose aliases spell the key
        // of the inner levels: pushed down first, the merged projection has the key whole.
        val merged = CollapseProject(PushDownPredicates(plan))
        val spellings = keys.head.indices.flatMap { c =>
          val operands = keys.map(key => strip(key(c)))
          val respellable = !operands.exists(_.isInstanceOf[Coalesce]) &&
            sameValueWhenEqual(coalescedKey(c).dataType)
          if (respellable) Some((ExpressionSet(operands), coalescedKey(c))) else None
        }
        rewriteAbove(merged, Function.unlift {
          case e: Coalesce =>
            spellings.collectFirst { case (operands, key) if spells(e, operands, key) => key }
          case _ => None
        })
      }
    case _ => plan
  }

  private def spells(e: Coalesce, operands: ExpressionSet, coalescedKey: Expression): Boolean =
    e.dataType == coalescedKey.dataType && ExpressionSet(coalesceOperands(strip(e))) == operands

  private def topMultiJoin(plan: LogicalPlan): Option[MultiJoin] = plan match {
    case multiJoin: MultiJoin => Some(multiJoin)
    case unary: UnaryNode => topMultiJoin(unary.child)
    case _ => None
  }

  private def rewriteAbove(
      plan: LogicalPlan, rule: PartialFunction[Expression, Expression]): LogicalPlan = plan match {
    case unary: UnaryNode =>
      unary.withNewChildren(Seq(rewriteAbove(unary.child, rule))).transformExpressionsDown(rule)
    case other => other
  }

  /** Whether two values of type `t` that compare equal are the same value. */
  private def sameValueWhenEqual(t: DataType): Boolean = t match {
    case BooleanType | ByteType | ShortType | IntegerType | LongType => true
    case _: DecimalType | DateType | TimestampType | TimestampNTZType | BinaryType => true
    case StringType => true // the default collation only: a collated string type is not equal
    case _ => false
  }
}
