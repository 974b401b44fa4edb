package org.apache.spark.sql.multijoin.storage

import org.apache.spark.internal.Logging
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.plans.physical.{Partitioning, PartitioningCollection}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{ColumnarRule, SortExec, SparkPlan}
import org.apache.spark.sql.execution.exchange.{ENSURE_REQUIREMENTS, EnsureRequirements, REPARTITION_BY_NUM, ShuffleExchangeExec}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.multijoin.MultiJoinConf
import org.apache.spark.sql.multijoin.execution.MultiJoinExec
import org.apache.spark.sql.multijoin.shim.SparkShim

/**
 * Removes the shuffles EnsureRequirements put under a [[MultiJoinExec]] whose inputs are all
 * read grouped by key in the same layout (see [[KeyGroupedInputs]]), and hands every input's scan
 * the same partition values. When some input is key-grouped but the layout cannot be used, the
 * shuffles stay and the driver log says why.
 *
 * After a change it plans the operators above the multi-join again: EnsureRequirements planned
 * their shuffles (and the sorts right above them) against the multi-join's output over
 * hash-partitioned inputs, which it no longer has. So the shuffles EnsureRequirements put under
 * an operator above a changed multi-join, on any of its sides, are taken out and
 * EnsureRequirements runs again: it puts back what the operator still needs, and can now see
 * that the multi-join's output grouped by key satisfies a GROUP BY or a window on the key, and,
 * beside a table bucketed alike, a join (Spark's storage-partitioned join). No other shuffle is
 * removed (a user's repartition, a write's rebalance).
 */
object UseKeyGroupedInputs extends Rule[SparkPlan] with Logging {
  import KeyGroupedInputs._

  override def apply(plan: SparkPlan): SparkPlan = {
    if (!SQLConf.get.getConf(MultiJoinConf.KEY_GROUPED_INPUTS)) return plan
    var changed = false
    val rewritten = plan.transformUp {
      case join: MultiJoinExec if !join.keyGroupedInputs =>
        rewrite(join).map { j => changed = true; j }.getOrElse(join)
    }
    if (!changed) return plan
    val planned = EnsureRequirements(optimizeOutRepartition = false).apply(withoutShufflesAbove(rewritten))
    logShufflesOfOutput(planned)
    planned
  }

  /**
   * Says, for each shuffle still put on the output of a multi-join read grouped by key, what it
   * is for and why the output's grouping could not be used.
   */
  private def logShufflesOfOutput(plan: SparkPlan): Unit = plan.foreach { parent =>
    // A side of the operator that needs the shuffle: the shuffle, or the sort right above it
    // (a sort-merge join's sides).
    def shuffleOf(side: SparkPlan): Option[ShuffleExchangeExec] = side match {
      case e: ShuffleExchangeExec if e.shuffleOrigin == ENSURE_REQUIREMENTS => Some(e)
      case s: SortExec if !s.global => shuffleOf(s.child)
      case _ => None
    }
    parent.children.zipWithIndex.foreach { case (child, side) =>
      shuffleOf(child).filterNot(_ => parent.isInstanceOf[SortExec]).foreach { e =>
        groupedJoinBelow(e.child).foreach { join =>
          val others = parent.children.indices.filter(_ != side).map { i =>
            shuffleOf(parent.children(i)).map(_.child.outputPartitioning)
              .getOrElse(parent.children(i).outputPartitioning)
          }
          logInfo(s"Multi-join on ${join.keys.head.map(_.sql).mkString(", ")}: its output, read " +
            s"with no shuffle, is shuffled for ${parent.nodeName}: ${whyShuffled(e.child.outputPartitioning, others)}")
        }
      }
    }
  }

  private def groupedJoinBelow(plan: SparkPlan): Option[MultiJoinExec] = plan match {
    case join: MultiJoinExec if join.keyGroupedInputs => Some(join)
    case unary if unary.children.size == 1 => groupedJoinBelow(unary.children.head)
    case _ => None
  }

  private def whyShuffled(output: Partitioning, others: Seq[Partitioning]): String =
    SparkShim.keyGroupedPartitioning(output) match {
      case None =>
        s"it reports no grouping by key where it is needed (${output.getClass.getSimpleName}: some " +
          "of its inputs were shuffled into the layout or read grouped onto it from another bucket " +
          "count, whose scans a join above could not line up; or a FULL multi-join without key " +
          "columns, or a column the operator above does not read)"
      case Some((expressions, values)) =>
        others.flatMap(o => SparkShim.keyGroupedPartitioning(o).map(o -> _)).headOption match {
          case None if others.nonEmpty =>
            "the other side is not grouped by key (a table bucketed alike would be read as it is)"
          case Some((_, (otherExpressions, otherValues)))
              if KeyGroupedInputs.comparable(expressions, values) != KeyGroupedInputs.comparable(expressions, otherValues) &&
                !SQLConf.get.v2BucketingPushPartValuesEnabled =>
            "the other side lists other partition values, and Spark lines the two up only with " +
              "spark.sql.sources.v2.bucketing.pushPartValues.enabled (off by default on Spark 3.5)"
          case Some((_, (otherExpressions, _))) =>
            s"Spark did not pair its grouping by ${layoutSql(expressions)} with the " +
              s"other side's by ${layoutSql(otherExpressions)}"
          case None => "the operator's required distribution is not its grouping by key"
        }
    }

  /**
   * `plan` without the shuffles EnsureRequirements put under the operators above a multi-join
   * read grouped by key, nor the sorts it put right above them.
   */
  private def withoutShufflesAbove(plan: SparkPlan): SparkPlan = plan match {
    case join: MultiJoinExec if join.keyGroupedInputs => join
    case node if node.exists { case j: MultiJoinExec => j.keyGroupedInputs; case _ => false } =>
      node.withNewChildren(node.children.map(child => withoutShufflesAbove(plannedBelow(child))))
    case other => other
  }

  /** What is under the shuffle (and its sort) EnsureRequirements put on this side, if it did. */
  private def plannedBelow(child: SparkPlan): SparkPlan = child match {
    case e: ShuffleExchangeExec if e.shuffleOrigin == ENSURE_REQUIREMENTS => e.child
    case s: SortExec if !s.global => s.child match {
      case e: ShuffleExchangeExec if e.shuffleOrigin == ENSURE_REQUIREMENTS => e.child
      case _ => s
    }
    case other => other
  }

  /** An input: the plan under its shuffle (if EnsureRequirements added one) and its layout. */
  private case class Input(plan: SparkPlan, layout: Either[String, Layout])

  private def rewrite(join: MultiJoinExec): Option[MultiJoinExec] = {
    val inputs = join.children.zip(join.keys).map { case (child, key) =>
      val below = child match {
        case e: ShuffleExchangeExec if e.shuffleOrigin == ENSURE_REQUIREMENTS => e.child
        case other => other
      }
      Input(below, layout(key, below.outputPartitioning))
    }
    // Nothing grouped by key: the ordinary case, nothing to say.
    if (!inputs.exists(i => keyGrouped(i.plan.outputPartitioning))) return None
    def describe(i: Int) = s"input ${i + 1} (${join.keys(i).map(_.sql).mkString(", ")})"
    val usable = inputs.indices.filter(i => inputs(i).layout.isRight)
    if (usable.isEmpty) {
      val reasons = inputs.indices.map(i => s"${describe(i)}: ${inputs(i).layout.swap.toOption.get}")
      logFallback(join, s"no input is read grouped by its key in a usable layout: ${reasons.mkString("; ")}")
      return None
    }
    def layoutOf(i: Int): Layout = inputs(i).layout.toOption.get
    // The layout kept: the one the most inputs can be read in with no shuffle, as they are or,
    // bucketed into a multiple of its bucket count, grouped onto it (the first input's among
    // equals); the others are shuffled into it where the line can.
    // Per candidate layout, the inputs readable in it and how their values map onto it.
    val readableIn = usable.map(t => t -> usable.flatMap(i => reducibleOnto(layoutOf(i), layoutOf(t)).map(i -> _))).toMap
    val target = usable.maxBy(t => (readableIn(t).size, usable.count(i => layoutOf(i).shape == layoutOf(t).shape), -t))
    val kept = readableIn(target).map(_._1)
    val reducers = readableIn(target).filter(_._2.exists(_.isDefined)).toMap
    val targetLayout = layoutOf(target)
    // Each kept input's partition values in the target's layout (reduced where it is bucketed
    // into a multiple), in its partition order.
    def valuesIn(i: Int): Seq[InternalRow] = reducers.get(i).fold(layoutOf(i).values)(
      reduced(layoutOf(i).expressions, layoutOf(i).values, _))
    val values = commonValues(targetLayout.expressions, kept.map(valuesIn))
    val others = inputs.indices.filterNot(kept.contains)
    def reasonOf(i: Int): String = inputs(i).layout match {
      case Left(reason) => s"${describe(i)}: $reason"
      case Right(l) => s"${describe(i)}: grouped by ${layoutSql(l.expressions)}, " +
        s"not by ${layoutSql(targetLayout.expressions)}"
    }
    if (!kept.forall(i => readableAt(layoutOf(i), values))) {
      logFallback(join, "an input shuffled by partition value would have to be read in other partitions")
      return None
    }
    // Into the target's layout over an input's own key, at `values`: how an odd input is shuffled,
    // and the layout a reduced one reports.
    def intoTarget(i: Int) = shuffledInto(targetLayout.partitioning, join.keys(target), join.keys(i), values)
    val shuffled = others.map(i => i -> intoTarget(i)).toMap
    val cannot = others.flatMap(i => shuffled(i).swap.toOption.map(why => s"${reasonOf(i)}, and $why"))
    if (cannot.nonEmpty) {
      logFallback(join, s"not every input is read grouped by its key: ${cannot.mkString("; ")}")
      return None
    }
    val reducedLayouts = reducers.keys.map(i => i -> intoTarget(i)).toMap
    val unflagged = reducedLayouts.collect { case (i, Left(why)) => s"${describe(i)}: $why" }
    if (unflagged.nonEmpty) {
      logFallback(join, s"an input bucketed into a multiple of the others' count cannot be read in their layout: ${unflagged.mkString("; ")}")
      return None
    }
    val children = inputs.indices.map { i =>
      // By number, not ENSURE_REQUIREMENTS: adaptive execution must not coalesce these
      // partitions (the scans' partitions beside them stay as they are), and a later
      // EnsureRequirements must not take the shuffle out.
      val input = inputs(i).plan
      val node =
        if (reducers.contains(i)) {
          KeyGroupedInputExec(input, values, layoutOf(i).values,
            Some(KeyGroupedInputExec.Reduction(reducedLayouts(i).toOption.get, valuesIn(i))))
        } else if (kept.contains(i)) KeyGroupedInputExec(input, values, layoutOf(i).values)
        else ShuffleExchangeExec(shuffled(i).toOption.get, input, REPARTITION_BY_NUM)
      // Adaptive execution links every query stage to a logical plan: new nodes take their
      // input's link (a copy made here has none of its own, unlike one from a transform).
      input.logicalLink.orElse(join.logicalLink).foreach(node.setLogicalLink)
      node
    }
    val rewritten = join.copy(children = children)
    rewritten.copyTagsFrom(join)
    if (!rewritten.keyGroupedInputs) {
      logFallback(join, "the inputs' partition values could not be aligned")
      return None
    }
    val layoutText = layoutSql(targetLayout.expressions)
    val regrouped = if (reducers.isEmpty) "" else "; grouped onto it from a multiple of its bucket count: " +
      reducers.keys.toSeq.sorted.map(i => s"${describe(i)} (${layoutSql(layoutOf(i).expressions)})").mkString(", ")
    if (others.isEmpty) {
      logInfo(s"${describe(0).capitalize} and the ${join.children.size - 1} others of the " +
        s"multi-join are read grouped by $layoutText into ${values.size} partitions, with no shuffle$regrouped")
    } else {
      logInfo(s"Multi-join on ${join.keys.head.map(_.sql).mkString(", ")}: " +
        s"${kept.map(i => s"input ${i + 1}").mkString(", ")} read grouped by $layoutText into " +
        s"${values.size} partitions with no shuffle$regrouped; shuffled into that layout: ${others.map(reasonOf).mkString("; ")}")
    }
    Some(rewritten)
  }

  private def keyGrouped(p: Partitioning): Boolean = p match {
    case PartitioningCollection(ps) => ps.exists(keyGrouped)
    case other => SparkShim.keyGroupedPartitioning(other).isDefined
  }

  private def logFallback(join: MultiJoinExec, reason: String): Unit =
    logInfo(s"Multi-join on ${join.keys.head.map(_.sql).mkString(", ")}: its inputs are " +
      s"shuffled, the storage layout is not used: $reason")
}

/**
 * Without adaptive execution the only place an extension can act on the physical plan after
 * EnsureRequirements is the columnar rules, applied before the columnar transitions.
 */
object UseKeyGroupedInputsColumnarRule extends ColumnarRule {
  override def preColumnarTransitions: Rule[SparkPlan] = UseKeyGroupedInputs
}
