package org.apache.spark.sql.multijoin.storage

import org.apache.spark.sql.multijoin.MultiJoinConf
import org.apache.spark.sql.multijoin.execution.MultiJoinExec
import org.apache.spark.{NarrowDependency, Partition, TaskContext}
import org.apache.spark.internal.Logging
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, RowOrdering, SortOrder, TransformExpression}
import org.apache.spark.sql.catalyst.plans.physical.{Partitioning, PartitioningCollection}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.util.InternalRowComparableWrapper
import org.apache.spark.sql.execution.{ColumnarRule, SparkPlan, UnaryExecNode}
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction
import org.apache.spark.sql.execution.exchange.{ENSURE_REQUIREMENTS, EnsureRequirements, REPARTITION_BY_NUM, ShuffleExchangeExec}
import org.apache.spark.sql.internal.SQLConf

/**
 * Inputs read in a layout grouped by key (storage-partitioned: an Iceberg table bucketed on the
 * join key, any DSv2 source reporting a key-grouped partitioning), joined with no shuffle.
 *
 * Spark's own storage-partitioned join (EnsureRequirements' key-group check) only looks at
 * operators with exactly two children that are sort-merge or shuffled hash joins, so it shuffles
 * every input of a multi-join even when all are bucketed alike. [[UseKeyGroupedInputs]], run
 * after EnsureRequirements, takes those shuffles out again when it can prove the inputs
 * co-partitioned, and [[MultiJoinExec]] then requires nothing of its children (see
 * [[KeyGroupedInputs.coPartitioned]]), so that no later run of EnsureRequirements puts the
 * shuffles back.
 *
 * What makes it correct: a key-grouped input's partition `j` holds exactly the rows whose
 * partition expressions (`bucket(8, k)`) evaluate to its partition value `v_j` (the contract of
 * Spark's KeyGroupedPartitioning). If every input's partition expressions are the same functions
 * of the same key components, two rows with equal keys have equal partition values; if moreover
 * every input lists the same distinct partition values in the same order, they sit at the same
 * partition index. [[KeyGroupedInputExec]] gives every input the sorted union of all the inputs'
 * values, one partition each, empty where the input has no rows of that value.
 *
 * Inputs in another layout (not bucketed, another bucket count, another key type) are shuffled
 * into the layout of the others where the Spark line can shuffle by partition value (Spark 4:
 * see [[UseKeyGroupedInputs]]); on Spark 3.5 every input is shuffled.
 */
private[multijoin] object KeyGroupedInputs {

  /**
   * Whether the children are provably co-partitioned on their keys by storage layout: each
   * reports a key-grouped partitioning of the same shape over its own key, all with the same
   * distinct partition values in the same order. Only then may the operator skip its required
   * clustering.
   */
  def coPartitioned(keys: Seq[Seq[Expression]], children: Seq[SparkPlan]): Boolean = {
    val layouts = keys.zip(children).map { case (key, child) => layout(key, child.outputPartitioning) }
    layouts.forall(_.isRight) && {
      val grouped = layouts.map(_.toOption.get)
      val first = grouped.head
      grouped.forall(g => g.shape == first.shape && first.sameValues(g))
    }
  }

  /**
   * An input shuffled into the layout of the others (see [[UseKeyGroupedInputs]]) holds, besides
   * the rows of each partition's value, the rows of values no other input has, spread over the
   * partitions by hash. They can never meet a row of another input with an equal key: only
   * inputs shuffled by the same value list (the same partitioner) have such rows. So such inputs
   * can be read as they are, but never re-indexed onto other values: they must already list
   * `values`.
   */
  def readableAt(layout: Layout, values: Seq[InternalRow]): Boolean =
    !layout.shuffledByValue || layout.wrapped == KeyGrouped.wrap(layout.expressions, values)

  /**
   * A key-grouped input: its partitioning, and its shape: the partition expressions with each
   * key column replaced by its position in the key, so that two inputs' shapes are equal exactly
   * when they apply the same functions to the same key components.
   */
  case class Layout(partitioning: Partitioning, expressions: Seq[Expression],
      values: Seq[InternalRow], shape: Seq[Shape]) {
    /** Shuffled into this layout by value: rows of values no input lists sit in other partitions. */
    def shuffledByValue: Boolean = KeyGrouped.mayContainUnknownKeys(partitioning)
    def wrapped: Seq[InternalRowComparableWrapper] = KeyGrouped.wrap(expressions, values)
    def sameValues(other: Layout): Boolean =
      partitioning.numPartitions == other.partitioning.numPartitions &&
        wrapped == other.wrapped && wrapped.distinct.size == wrapped.size
  }

  /** One partition expression: a transform (by canonical name and bucket count) or the column. */
  case class Shape(function: Option[(String, Option[Int])], keyPosition: Int, dataType: String)

  /** The key-grouped layout of `partitioning` over `key`, or why there is none. */
  def layout(key: Seq[Expression], partitioning: Partitioning): Either[String, Layout] = {
    val candidates = partitioning match {
      case PartitioningCollection(ps) => ps.flatMap(p => KeyGrouped.byValue(p).map((p, _)))
      case p => KeyGrouped.byValue(p).map((p, _)).toSeq
    }
    if (candidates.isEmpty) {
      return Left(s"its partitioning is ${partitioning.getClass.getSimpleName}, not grouped by key")
    }
    val layouts = candidates.map { case (p, (expressions, values)) =>
      shapeOf(key, expressions).map(Layout(p, expressions, values, _))
    }
    layouts.collectFirst { case Right(l) => Right(l) }.getOrElse(layouts.head)
  }

  private def shapeOf(key: Seq[Expression], expressions: Seq[Expression]): Either[String, Seq[Shape]] = {
    val shapes = expressions.map { e =>
      val (function, argument) = e match {
        case t: TransformExpression if t.children.size == 1 =>
          (Some((t.function.canonicalName(), t.numBucketsOpt)), t.children.head)
        case other => (None, other)
      }
      val positions = key.indices.filter(c => key(c).semanticEquals(argument))
      // A scan's partition expressions read its columns; an input shuffled into another's layout
      // reads its key as the join does (`CAST(k AS BIGINT)` for an INT key joined to a BIGINT one).
      if (positions.size == 1) Right(Shape(function, positions.head, argument.dataType.sql))
      else Left(s"its partition expression ${e.sql} is not a function of exactly one " +
        s"component of its key ${key.map(_.sql).mkString("(", ", ", ")")}")
    }
    shapes.collectFirst { case Left(reason) => Left(reason) }.getOrElse {
      val shape = shapes.map(_.toOption.get)
      val covered = shape.map(_.keyPosition).toSet
      // As Spark co-partitions: grouped on every key column unless the user allowed a subset.
      if (SQLConf.get.getConf(SQLConf.REQUIRE_ALL_CLUSTER_KEYS_FOR_CO_PARTITION) &&
        covered != key.indices.toSet) {
        Left(s"it is grouped on ${expressions.map(_.sql).mkString(", ")}, not on every column " +
          s"of its key, and ${SQLConf.REQUIRE_ALL_CLUSTER_KEYS_FOR_CO_PARTITION.key} is true")
      } else Right(shape)
    }
  }

  /** The sorted union of the inputs' partition values, each once. */
  def commonValues(layouts: Seq[Layout]): Seq[InternalRow] = {
    val dataTypes = layouts.head.expressions.map(_.dataType)
    val ordering = RowOrdering.createNaturalAscendingOrdering(dataTypes)
    layouts.flatMap(_.wrapped).distinct.map(_.row).sorted(ordering)
  }
}

/**
 * Removes the shuffles EnsureRequirements put under a [[MultiJoinExec]] whose inputs are all
 * read grouped by key in the same layout (see [[KeyGroupedInputs]]), and hands every input's scan
 * the same partition values. When some input is key-grouped but the layout cannot be used, the
 * shuffles stay and the driver log says why. After a change it runs EnsureRequirements again:
 * the operators above the multi-join were planned against its output over hash-partitioned
 * inputs, and must be checked against the output it has now.
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
    // Never removes a shuffle (a user's repartition included): it only adds what is missing.
    if (changed) EnsureRequirements(optimizeOutRepartition = false).apply(rewritten) else plan
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
    // The layout most inputs share (the first input's among equals) is kept; the others are read
    // as they are only if they all share it, else shuffled into it where the line can.
    val usable = inputs.indices.filter(i => inputs(i).layout.isRight)
    if (usable.isEmpty) {
      val reasons = inputs.indices.map(i => s"${describe(i)}: ${inputs(i).layout.swap.toOption.get}")
      logFallback(join, s"no input is read grouped by its key in a usable layout: ${reasons.mkString("; ")}")
      return None
    }
    def layoutOf(i: Int): Layout = inputs(i).layout.toOption.get
    val kept = usable.groupBy(i => layoutOf(i).shape).values.toSeq.maxBy(g => (g.size, -g.min)).sorted
    val values = commonValues(kept.map(layoutOf))
    val others = inputs.indices.filterNot(kept.contains)
    def reasonOf(i: Int): String = inputs(i).layout match {
      case Left(reason) => s"${describe(i)}: $reason"
      case Right(l) => s"${describe(i)}: grouped by ${l.expressions.map(_.sql).mkString(", ")}, " +
        s"not by ${layoutOf(kept.head).expressions.map(_.sql).mkString(", ")}"
    }
    if (!kept.forall(i => readableAt(layoutOf(i), values))) {
      logFallback(join, "an input shuffled by partition value would have to be read in other partitions")
      return None
    }
    val shuffled = others.map { i =>
      i -> KeyGrouped.shuffledInto(layoutOf(kept.head).partitioning, join.keys(kept.head), join.keys(i), values)
    }.toMap
    val cannot = others.flatMap(i => shuffled(i).swap.toOption.map(why => s"${reasonOf(i)}, and $why"))
    if (cannot.nonEmpty) {
      logFallback(join, s"not every input is read grouped by its key: ${cannot.mkString("; ")}")
      return None
    }
    val children = inputs.indices.map { i =>
      // By number, not ENSURE_REQUIREMENTS: adaptive execution must not coalesce these
      // partitions (the scans' partitions beside them stay as they are), and a later
      // EnsureRequirements must not take the shuffle out.
      if (kept.contains(i)) KeyGroupedInputExec(inputs(i).plan, values)
      else ShuffleExchangeExec(shuffled(i).toOption.get, inputs(i).plan, REPARTITION_BY_NUM)
    }
    val rewritten = join.copy(children = children)
    if (!rewritten.keyGroupedInputs) {
      logFallback(join, "the inputs' partition values could not be aligned")
      return None
    }
    val layoutText = layoutOf(kept.head).expressions.map(_.sql).mkString(", ")
    if (others.isEmpty) {
      logInfo(s"${describe(0).capitalize} and the ${join.children.size - 1} others of the " +
        s"multi-join are read grouped by $layoutText into ${values.size} partitions, with no shuffle")
    } else {
      logInfo(s"Multi-join on ${join.keys.head.map(_.sql).mkString(", ")}: " +
        s"${kept.map(i => s"input ${i + 1}").mkString(", ")} read grouped by $layoutText into " +
        s"${values.size} partitions with no shuffle; shuffled into that layout: ${others.map(reasonOf).mkString("; ")}")
    }
    Some(rewritten)
  }

  private def keyGrouped(p: Partitioning): Boolean = p match {
    case PartitioningCollection(ps) => ps.exists(keyGrouped)
    case other => KeyGrouped.byValue(other).isDefined
  }

  private def logFallback(join: MultiJoinExec, reason: String): Unit =
    logInfo(s"Multi-join on ${join.keys.head.map(_.sql).mkString(", ")}: its inputs are " +
      s"shuffled, the storage layout is not used: $reason")
}

/**
 * An input read grouped by key, re-indexed onto `values` (the union of every input's partition
 * values): its partition `i` is the child's partition of value `values(i)`, or empty when the
 * child has none. The child's rows are not touched, so its order within a partition holds.
 */
case class KeyGroupedInputExec(child: SparkPlan, values: Seq[InternalRow]) extends UnaryExecNode {

  override def output: Seq[Attribute] = child.output

  override def outputPartitioning: Partitioning = KeyGrouped.withValues(child.outputPartitioning, values)

  override def outputOrdering: Seq[SortOrder] = child.outputOrdering

  override protected def doExecute(): RDD[InternalRow] = {
    val (expressions, childValues) = KeyGrouped.byValue(child.outputPartitioning).getOrElse(
      throw new IllegalStateException(s"$nodeName over a child no longer grouped by key"))
    val index = KeyGrouped.wrap(expressions, childValues).zipWithIndex.toMap
    val sources = KeyGrouped.wrap(expressions, values).map(index.getOrElse(_, -1)).toArray
    val rows = child.execute()
    // The scan's partitions are its partition values, in order: anything else would pair the
    // inputs' partitions wrongly, so it fails instead.
    if (rows.getNumPartitions != childValues.size) {
      throw new IllegalStateException(s"$nodeName: the child reads ${rows.getNumPartitions} " +
        s"partitions for ${childValues.size} partition values")
    }
    new PartitionsByValueRDD(rows, sources)
  }

  override def simpleString(maxFields: Int): String = s"$nodeName ${values.size} partitions"

  override protected def withNewChildInternal(newChild: SparkPlan): KeyGroupedInputExec =
    copy(child = newChild)
}

private class PartitionByValue(override val index: Int, val source: Option[Partition])
  extends Partition

/** Partition `i` is `prev`'s partition `sources(i)`, or empty where that is -1. */
private class PartitionsByValueRDD(prev: RDD[InternalRow], sources: Array[Int])
  extends RDD[InternalRow](prev.context, Seq(new NarrowDependency(prev) {
    override def getParents(partitionId: Int): Seq[Int] =
      if (sources(partitionId) < 0) Nil else Seq(sources(partitionId))
  })) {

  override protected def getPartitions: Array[Partition] = {
    val parents = prev.partitions
    sources.indices.map { i =>
      new PartitionByValue(i, if (sources(i) < 0) None else Some(parents(sources(i)))): Partition
    }.toArray
  }

  override def compute(split: Partition, context: TaskContext): Iterator[InternalRow] =
    split.asInstanceOf[PartitionByValue].source.fold(Iterator.empty: Iterator[InternalRow])(
      prev.iterator(_, context))

  override protected def getPreferredLocations(split: Partition): Seq[String] =
    split.asInstanceOf[PartitionByValue].source.map(prev.preferredLocations).getOrElse(Nil)
}

/**
 * Spark's KeyGroupedPartitioning, read and rebuilt by reflection: it exists from Spark 3.5 to
 * 4.1, always with the same first three fields (expressions, numPartitions, partitionValues) but
 * more after them in later patch releases (4.1.4 has six), and was replaced in Spark 4.2; this
 * one source tree compiles on every line. On a Spark without it nothing is key-grouped, so every
 * input is shuffled.
 */
private[multijoin] object KeyGrouped {
  private val ClassName = "org.apache.spark.sql.catalyst.plans.physical.KeyGroupedPartitioning"

  private val UnknownKeys = "mayContainUnknownPartitionKeys"

  /**
   * Its partition expressions and values, unless it is partially clustered (a value split over
   * several partitions; a flag a line lacks is false). A partitioning shuffled by value
   * (Spark 4's `mayContainUnknownPartitionKeys`) also holds rows of values it does not list:
   * see [[mayContainUnknownKeys]] and [[KeyGroupedInputs.readableAt]].
   */
  def byValue(p: Partitioning): Option[(Seq[Expression], Seq[InternalRow])] = p match {
    case product: Product if p.getClass.getName == ClassName && !flag(p, "isPartiallyClustered") =>
      Some((product.productElement(0).asInstanceOf[Seq[Expression]],
        product.productElement(2).asInstanceOf[Seq[InternalRow]]))
    case _ => None
  }

  def mayContainUnknownKeys(p: Partitioning): Boolean = flag(p, UnknownKeys)

  /**
   * The partitioning that shuffles an input on `key` into the layout `template` (another input's
   * key-grouped partitioning, over its key `templateKey`), at `values`: the template's partition
   * expressions over this input's key, flagged as possibly holding unknown keys (a row whose value
   * is not in `values` goes to a partition by hash). Only where the line can shuffle by partition
   * value (Spark 4's KeyGroupedPartitioner), every expression is evaluable (a transform with a
   * scalar function) and the keys have the same types; else why not.
   */
  def shuffledInto(template: Partitioning, templateKey: Seq[Expression], key: Seq[Expression],
      values: Seq[InternalRow]): Either[String, Partitioning] = {
    val (expressions, _) = byValue(template).get
    val names = fieldNames(template)
    if (!CanShuffleByValue || !names.contains(UnknownKeys)) {
      Left("this Spark line cannot shuffle an input by partition value (Spark 4 can)")
    } else if (templateKey.map(_.dataType) != key.map(_.dataType)) {
      Left("its key's types differ from the others'")
    } else if (!expressions.forall(_.find {
        case t: TransformExpression => !t.function.isInstanceOf[ScalarFunction[_]]
        case _ => false
      }.isEmpty)) {
      Left("a partition transform cannot be computed on its rows")
    } else {
      val overKey = expressions.map(_.transformUp {
        case a: Attribute if templateKey.exists(_.semanticEquals(a)) => key(templateKey.indexWhere(_.semanticEquals(a)))
      })
      val fields = Map("expressions" -> overKey, "numPartitions" -> Int.box(values.size),
        "partitionValues" -> values, "originalPartitionValues" -> values,
        "isPartiallyClustered" -> java.lang.Boolean.FALSE, UnknownKeys -> java.lang.Boolean.TRUE)
      Right(rebuilt(template, fields.collect { case (name, value) if names.contains(name) => names.indexOf(name) -> value }))
    }
  }

  /** Spark 4 shuffles rows into a key-grouped partitioning by their partition values. */
  private lazy val CanShuffleByValue: Boolean =
    scala.util.Try(Class.forName("org.apache.spark.KeyGroupedPartitioner")).isSuccess

  /** Its constructor's parameter names in order (Scala 2.13's productElementName), or none. */
  private def fieldNames(p: Partitioning): Seq[String] = {
    val product = p.asInstanceOf[Product]
    scala.util.Try {
      val name = p.getClass.getMethod("productElementName", classOf[Int])
      (0 until product.productArity).map(i => name.invoke(p, Int.box(i)).asInstanceOf[String])
    }.getOrElse(Nil)
  }

  private def flag(p: Partitioning, name: String): Boolean =
    p.getClass.getMethods.find(m => m.getName == name && m.getParameterCount == 0)
      .exists(_.invoke(p) == java.lang.Boolean.TRUE)

  /** `p` with one partition per value of `values`, in that order, its other fields kept. */
  def withValues(p: Partitioning, values: Seq[InternalRow]): Partitioning =
    rebuilt(p, Map(1 -> Int.box(values.size), 2 -> values))

  /** `p` rebuilt with the fields at the given positions replaced, the others kept. */
  private def rebuilt(p: Partitioning, fields: Map[Int, AnyRef]): Partitioning = {
    val args = p.asInstanceOf[Product].productIterator.map(_.asInstanceOf[AnyRef]).toArray
    fields.foreach { case (i, value) => args(i) = value }
    val constructor = p.getClass.getConstructors.find(_.getParameterCount == args.length).get
    constructor.newInstance(args: _*).asInstanceOf[Partitioning]
  }

  def wrap(expressions: Seq[Expression], values: Seq[InternalRow]): Seq[InternalRowComparableWrapper] = {
    val dataTypes = expressions.map(_.dataType)
    values.map(new InternalRowComparableWrapper(_, dataTypes))
  }
}

/**
 * Without adaptive execution the only place an extension can act on the physical plan after
 * EnsureRequirements is the columnar rules, applied before the columnar transitions.
 */
object UseKeyGroupedInputsColumnarRule extends ColumnarRule {
  override def preColumnarTransitions: Rule[SparkPlan] = UseKeyGroupedInputs
}
