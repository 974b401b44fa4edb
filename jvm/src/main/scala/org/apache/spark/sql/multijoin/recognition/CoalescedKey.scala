package org.apache.spark.sql.multijoin.recognition

import org.apache.spark.internal.Logging
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeMap, AttributeReference, AttributeSet, Coalesce, Expression, ExpressionSet}
import org.apache.spark.sql.catalyst.optimizer.{CollapseProject, PushDownPredicates}
import org.apache.spark.sql.catalyst.plans.FullOuter
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Project, UnaryNode}
import org.apache.spark.sql.catalyst.plans.physical.{CoalescedBoundary, CoalescedHashPartitioning, HashPartitioning, Partitioning}
import org.apache.spark.sql.multijoin.logical.MultiJoin
import org.apache.spark.sql.multijoin.recognition.ChainPatterns.{coalesceOperands, strip}
import org.apache.spark.sql.types._

/**
 * The coalesced key of a FULL multi-join (docs/semantics.md) as columns of the operator's own,
 * and the output partitioning they carry (docs/architecture.md, "The key as a column of its own").
 *
 * Every input is partitioned on its key alike (hashed into the same partitions, or read grouped
 * by the same storage transform of the key). On every output row the inputs present have equal
 * keys and each missing input's key is null, so the coalesce of the inputs' keys is the key each
 * present row was partitioned by: the row sits in the partition of that value. Spark's operators
 * above match a partitioning by the expressions it names, and Spark's key-group checks want one
 * column under each partition expression; so the operator computes the coalesced key into a
 * column of its own per key component, reports its partitioning on those columns, and the
 * query's own spellings of the coalesced key (any order, nested or not, Spark's implicit casts)
 * are rewritten to read them.
 */
private[multijoin] object CoalescedKey extends Logging {

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
   * Gives the collapsed FULL chain at the top of `plan` (below unary operators only) its key
   * columns, one per key component (see [[MultiJoin]]), and rewrites, in the operators between it
   * and its hint, every expression that is the coalesce of all the inputs' keys of one component,
   * in any order or nesting, into that component's column. The value is the same on every output
   * row (the keys present are equal, the others null), provided equal keys are identical values:
   * not for floating point (-0.0 and 0.0) nor for strings of a collation that ignores case or
   * accents. Where a component cannot have its column, or nothing above names the coalesced key,
   * the multi-join gets no key columns; the first case is logged, with why.
   */
  def addKeyColumns(plan: LogicalPlan): LogicalPlan = topMultiJoin(plan) match {
    case Some(multiJoin @ MultiJoin(_, keys, FullOuter, Seq())) =>
      // A filter Spark inferred above the chain (`isnotnull(k)` under a join on k) would keep
      // the query's projection from merging with the collapse's, whose aliases spell the key
      // of the inner levels: pushed down first, the merged projection has the key whole.
      def merged(root: LogicalPlan) = CollapseProject(PushDownPredicates(root))
      val operands = keys.head.indices.map(c => keys.map(key => strip(key(c))))
      whyNoKeyColumns(keys, multiJoin.output, operands) match {
        case Some(reason) =>
          if (namesCoalescedKey(merged(plan), operands)) {
            logInfo(s"The FULL multi-join on ${keysSql(keys)} has no key column of its own: " +
              s"$reason. A GROUP BY, window, join or bucketed write on the coalesced key above " +
              "it shuffles its output.")
          }
          merged(plan)
        case None =>
          val keyColumns = keys.head.indices.map { c =>
            // Named as the first input names that key part, so that the query's alias of its
            // coalesce (which carries that name) is redundant and goes away: a projection above
            // then passes the column's partitioning on (Spark 3.5 drops a key-grouped
            // partitioning whose column is renamed).
            val name = operands(c).head match {
              case a: Attribute => a.name
              case _ => s"key${c + 1}"
            }
            AttributeReference(name, keys.head(c).dataType, nullable = true)(): Attribute
          }
          // The key columns are read by the operators above, never passed on past them: the
          // projection keeps whatever was above the multi-join seeing the columns it saw.
          val placed = plan.transformDown {
            case m: MultiJoin if m eq multiJoin => Project(m.output, m.copy(keyColumns = keyColumns))
          }
          val sets = operands.map(ExpressionSet(_))
          val rewritten = rewriteAbove(merged(placed), Function.unlift {
            case e: Coalesce => sets.indices.collectFirst {
              case c if spells(e, sets(c), keyColumns(c)) => keyColumns(c)
            }
            case _ => None
          })
          val keySet = AttributeSet(keyColumns)
          val read = rewritten.exists(node => node.references.exists(keySet.contains))
          if (read) rewritten else merged(plan)
      }
    case _ => plan
  }

  /** Why the multi-join on `keys` cannot have key columns, if it cannot. */
  private def whyNoKeyColumns(
      keys: Seq[Seq[Expression]],
      output: Seq[Attribute],
      operands: Seq[Seq[Expression]]): Option[String] = {
    val types = keys.head.map(_.dataType)
    types.find(t => !sameValueWhenEqual(t)).map { t =>
      s"its key is of type ${t.sql}, whose equal keys can differ in value (-0.0 and 0.0, NaNs, " +
        "strings of a collation), so the query's coalesce of the keys is not one value"
    }.orElse {
      if (of(keys, output).isEmpty) {
        Some("an input's key is not null for a row missing from that input, so the coalesce of " +
          "the keys is not the key of the rows present")
      } else if (operands.flatten.exists(_.isInstanceOf[Coalesce])) {
        Some("an input's key is itself a coalesce, which the query's coalesce of the keys flattens")
      } else None
    }
  }

  /** Whether an operator above the multi-join computes the coalesce of one component's keys. */
  private def namesCoalescedKey(plan: LogicalPlan, operands: Seq[Seq[Expression]]): Boolean = {
    val sets = operands.map(ExpressionSet(_))
    def above(p: LogicalPlan): Seq[LogicalPlan] = p match {
      case unary: UnaryNode => unary +: above(unary.child)
      case _ => Nil
    }
    above(plan).exists(_.expressions.exists(_.exists {
      case e: Coalesce => sets.contains(ExpressionSet(coalesceOperands(strip(e))))
      case _ => false
    }))
  }

  private def keysSql(keys: Seq[Seq[Expression]]): String =
    keys.head.indices.map(c => s"coalesce(${keys.map(_(c).sql).mkString(", ")})").mkString(", ")

  private def spells(e: Coalesce, operands: ExpressionSet, keyColumn: Attribute): Boolean =
    e.dataType == keyColumn.dataType && ExpressionSet(coalesceOperands(strip(e))) == operands

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
