package org.apache.spark.sql.multijoin.storage

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, GenericInternalRow, RowOrdering, TransformExpression}
import org.apache.spark.sql.catalyst.plans.physical.{Partitioning, PartitioningCollection}
import org.apache.spark.sql.catalyst.util.InternalRowComparableWrapper
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.multijoin.shim.SparkShim

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
 * An input bucketed into a multiple of the others' bucket count (`bucket(16, k)` beside
 * `bucket(8, k)`) is read grouped onto the smaller count, where the source says how its values
 * map (Spark 4's compatible transforms: Iceberg's bucket 16 value `v` holds only keys of bucket 8
 * value `v % 8`): its partitions of one reduced value are read as one ([[reducibleOnto]]).
 *
 * Inputs in another layout (not bucketed, a bucket count that is not a multiple, another key
 * type) are shuffled into the layout of the others where the Spark line can shuffle by partition
 * value (Spark 4: see [[UseKeyGroupedInputs]]); on Spark 3.5 every input is shuffled.
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
    !layout.shuffledByValue || layout.wrapped == comparable(layout.expressions, values)

  /**
   * A key-grouped input: its partitioning, and its shape: the partition expressions with each
   * key column replaced by its position in the key, so that two inputs' shapes are equal exactly
   * when they apply the same functions to the same key components.
   */
  case class Layout(partitioning: Partitioning, expressions: Seq[Expression],
      values: Seq[InternalRow], shape: Seq[Shape]) {
    /** Shuffled into this layout by value: rows of values no input lists sit in other partitions. */
    def shuffledByValue: Boolean = SparkShim.mayContainUnknownPartitionKeys(partitioning)
    def wrapped: Seq[InternalRowComparableWrapper] = comparable(expressions, values)
    def sameValues(other: Layout): Boolean =
      partitioning.numPartitions == other.partitioning.numPartitions &&
        wrapped == other.wrapped && wrapped.distinct.size == wrapped.size
  }

  /** One partition expression: a transform (by canonical name and bucket count) or the column. */
  case class Shape(function: Option[(String, Option[Int])], keyPosition: Int, dataType: String) {
    def withoutBucketCount: Shape = copy(function = function.map { case (name, _) => (name, None) })
  }

  /**
   * How `from`'s partition values map onto `to`'s, one mapping per partition expression (None
   * where the two are the same), when every expression of `from` either equals `to`'s or is the
   * same transform of the same key component into a multiple of `to`'s bucket count that the
   * source can reduce (SparkShim.partitionValueReducer). Then each partition of `from` holds only
   * rows of one partition of `to`'s layout, and reading together the partitions of `from` that map
   * to one value reads that value's rows. None where `from` is not so related to `to`.
   */
  def reducibleOnto(from: Layout, to: Layout): Option[Seq[Option[Any => Any]]] = {
    if (from.shape.map(_.withoutBucketCount) != to.shape.map(_.withoutBucketCount)) return None
    val mappings = from.expressions.zip(to.expressions).zip(from.shape.zip(to.shape)).map {
      case (_, (fromShape, toShape)) if fromShape == toShape => Some(None)
      case ((f: TransformExpression, t: TransformExpression), _) =>
        (f.numBucketsOpt, t.numBucketsOpt) match {
          // Reducible to `to`'s own count only when it divides `from`'s: a source reduces both to
          // their greatest common divisor, which would be another layout than `to`'s.
          case (Some(n), Some(m)) if n > m && n % m == 0 => SparkShim.partitionValueReducer(f, t).map(Some(_))
          case _ => None
        }
      case _ => None
    }
    if (mappings.forall(_.isDefined)) Some(mappings.map(_.get)) else None
  }

  /** `values` (partition values of `expressions`) mapped by `reducers` (see [[reducibleOnto]]). */
  def reduced(expressions: Seq[Expression], values: Seq[InternalRow],
      reducers: Seq[Option[Any => Any]]): Seq[InternalRow] = values.map { row =>
    new GenericInternalRow(expressions.indices.map { i =>
      val value: Any = row.get(i, expressions(i).dataType)
      // A NULL key's partition value is NULL at every bucket count (reducers take no NULL).
      reducers(i).fold(value)(reduce => if (value == null) null else reduce(value))
    }.toArray[Any]): InternalRow
  }

  /** The key-grouped layout of `partitioning` over `key`, or why there is none. */
  def layout(key: Seq[Expression], partitioning: Partitioning): Either[String, Layout] = {
    val candidates = partitioning match {
      case PartitioningCollection(ps) => ps.flatMap(p => SparkShim.keyGroupedPartitioning(p).map((p, _)))
      case p => SparkShim.keyGroupedPartitioning(p).map((p, _)).toSeq
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
        Left(s"it is grouped on ${layoutSql(expressions)}, not on every column " +
          s"of its key, and ${SQLConf.REQUIRE_ALL_CLUSTER_KEYS_FOR_CO_PARTITION.key} is true")
      } else Right(shape)
    }
  }

  /**
   * The key-grouped `partitioning` of an input on `key`, over `columns` instead (one expression
   * per key component): its partition expressions with their key component replaced by that
   * component's column. None where it is not grouped by key.
   */
  def onKeyColumns(key: Seq[Expression], partitioning: Partitioning, columns: Seq[Expression]): Option[Partitioning] =
    layout(key, partitioning).toOption.flatMap { l =>
      val expressions = l.expressions.zip(l.shape).map {
        case (t: TransformExpression, shape) if t.children.size == 1 =>
          t.withNewChildren(Seq(columns(shape.keyPosition)))
        case (_, shape) => columns(shape.keyPosition)
      }
      SparkShim.withKeyGroupedExpressions(l.partitioning, expressions, mayContainUnknownKeys = false)
    }

  /** The sorted union of the partition values (of `expressions`) of every input, each once. */
  def commonValues(expressions: Seq[Expression], values: Seq[Seq[InternalRow]]): Seq[InternalRow] = {
    val ordering = RowOrdering.createNaturalAscendingOrdering(expressions.map(_.dataType))
    values.flatMap(comparable(expressions, _)).distinct.map(_.row).sorted(ordering)
  }

  /**
   * The partitioning that shuffles an input on `key` into the layout `template` (another input's
   * key-grouped partitioning, over its key `templateKey`), at `values`: the template's partition
   * expressions over this input's key, flagged as possibly holding unknown keys (a row whose value
   * is not in `values` goes to a partition by hash). Only where the Spark can shuffle by partition
   * value (SparkShim.canShuffleByPartitionValue), every expression is evaluable (a transform
   * with a scalar function) and the keys have the same types; else why not.
   */
  def shuffledInto(template: Partitioning, templateKey: Seq[Expression], key: Seq[Expression],
      values: Seq[InternalRow]): Either[String, Partitioning] = {
    val (expressions, _) = SparkShim.keyGroupedPartitioning(template).get
    if (!SparkShim.canShuffleByPartitionValue(template)) {
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
      Right(SparkShim.shuffledByPartitionValue(template, overKey, values))
    }
  }

  /**
   * Partition expressions as a user writes them, `bucket(8, k)`: a transform's own SQL names
   * neither its function nor its bucket count.
   */
  def layoutSql(expressions: Seq[Expression]): String = expressions.map {
    case t: TransformExpression =>
      s"${t.function.name()}(${t.numBucketsOpt.map(n => s"$n, ").getOrElse("")}${t.children.map(_.sql).mkString(", ")})"
    case other => other.sql
  }.mkString(", ")

  /** Partition values made comparable (and hashable) by the types of their expressions. */
  def comparable(expressions: Seq[Expression], values: Seq[InternalRow]): Seq[InternalRowComparableWrapper] = {
    val dataTypes = expressions.map(_.dataType)
    values.map(new InternalRowComparableWrapper(_, dataTypes))
  }
}
