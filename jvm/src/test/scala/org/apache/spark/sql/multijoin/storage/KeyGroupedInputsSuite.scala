package org.apache.spark.sql.multijoin.storage

import scala.util.Try

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, Expression, TransformExpression}
import org.apache.spark.sql.catalyst.plans.{FullOuter, JoinType, LeftOuter}
import org.apache.spark.sql.catalyst.plans.physical.{HashPartitioning, Partitioning, UnknownPartitioning, UnspecifiedDistribution}
import org.apache.spark.sql.connector.catalog.functions.{BoundFunction, ScalarFunction}
import org.apache.spark.sql.execution.{LeafExecNode, SparkPlan}
import org.apache.spark.sql.execution.exchange.{ENSURE_REQUIREMENTS, REPARTITION_BY_NUM, ShuffleExchangeExec}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.multijoin.{ExtensionSession, MultiJoinConf}
import org.apache.spark.sql.multijoin.execution.MultiJoinExec
import org.apache.spark.sql.multijoin.shim.SparkShim
import org.apache.spark.sql.types.{DataType, IntegerType}
import org.scalatest.funsuite.AnyFunSuite

/** A scan as the planner sees it: its columns and the layout it reports. Planned, never run. */
case class ScanOfLayout(output: Seq[Attribute], override val outputPartitioning: Partitioning) extends LeafExecNode {
  override protected def doExecute(): RDD[InternalRow] = throw new UnsupportedOperationException("planned only")
}

/**
 * A bucket transform, as a catalog hands it to Spark: computable on a row, and named the same
 * every time (a bound function's default canonical name is unique to each call).
 */
object Bucket extends ScalarFunction[Integer] {
  override def inputTypes(): Array[DataType] = Array(IntegerType)
  override def resultType(): DataType = IntegerType
  override def name(): String = "bucket"
  override def canonicalName(): String = "test.bucket"
}

/** A transform a catalog can only name, not compute (a bound function that is not scalar). */
object Opaque extends BoundFunction {
  override def inputTypes(): Array[DataType] = Array(IntegerType)
  override def resultType(): DataType = IntegerType
  override def name(): String = "opaque"
  override def canonicalName(): String = "test.opaque"
}

/**
 * Spark's KeyGroupedPartitioning (3.5 to 4.1), made as a DataSource V2 scan reports it: over
 * `expressions`, one partition per value of `values`. By reflection, as the extension reads it:
 * its fields differ between patch releases, and it is gone from Spark 4.2.
 */
object KeyGroupedPartitioningOf {
  private val constructor = Try(Class.forName("org.apache.spark.sql.catalyst.plans.physical.KeyGroupedPartitioning"))
    .toOption.map(_.getConstructors.maxBy(_.getParameterCount))

  /** Whether this Spark has it. */
  def exists: Boolean = constructor.isDefined

  /** Its fields: expressions, numPartitions, partitionValues, then (by line) the original values and flags. */
  def apply(expressions: Seq[Expression], values: Seq[InternalRow], partiallyClustered: Boolean = false): Partitioning = {
    val parameters = constructor.get.getParameterTypes
    var flags = 0
    val args = parameters.indices.map {
      case 0 => expressions
      case 1 => Int.box(values.size)
      case i if parameters(i) == classOf[Boolean] =>
        // isPartiallyClustered comes first; anything after it (mayContainUnknownPartitionKeys) is off.
        flags += 1
        java.lang.Boolean.valueOf(flags == 1 && partiallyClustered)
      case _ => values // partitionValues, originalPartitionValues
    }
    constructor.get.newInstance(args: _*).asInstanceOf[Partitioning]
  }
}

/**
 * When inputs read grouped by key (storage-partitioned, as Iceberg tables bucketed on the key)
 * are joined without a shuffle (KeyGroupedInputs, UseKeyGroupedInputs, KeyGroupedInputExec), on
 * plans of scans reporting Spark's own KeyGroupedPartitioning. On a Spark without it (4.2 and
 * later) nothing is key-grouped, and the suite checks that every input keeps its shuffle.
 */
class KeyGroupedInputsSuite extends AnyFunSuite with ExtensionSession {
  import KeyGroupedInputs._

  private val k1 = AttributeReference("k", IntegerType)()
  private val k2 = AttributeReference("k", IntegerType)()
  private val k3 = AttributeReference("k", IntegerType)()
  private val other = AttributeReference("v", IntegerType)()

  private def bucket(n: Int, column: Expression): Expression = TransformExpression(Bucket, Seq(column), Some(n))
  private def values(vs: Int*): Seq[InternalRow] = vs.map(v => InternalRow(v)).toList
  private def grouped(column: Attribute, by: Expression, vs: Int*): ScanOfLayout =
    ScanOfLayout(Seq(column, other), KeyGroupedPartitioningOf(Seq(by), values(vs: _*)))

  /** FULL: the key column, as the collapse gives it. */
  private val keyColumn = AttributeReference("k", IntegerType)()
  private def keyColumns(joinType: JoinType): Seq[Attribute] = if (joinType == FullOuter) Seq(keyColumn) else Nil

  /** A multi-join over `scans` as EnsureRequirements leaves it: each input under a hash shuffle. */
  private def shuffled(joinType: JoinType, scans: ScanOfLayout*): MultiJoinExec =
    MultiJoinExec(scans.map(s => Seq(s.output.head)), joinType,
      scans.map(s => ShuffleExchangeExec(HashPartitioning(Seq(s.output.head), 4), s, ENSURE_REQUIREMENTS)),
      keyColumns(joinType))

  private def rewritten(join: MultiJoinExec): MultiJoinExec =
    UseKeyGroupedInputs(join).collectFirst { case m: MultiJoinExec => m }.get

  private def partitionValues(plan: SparkPlan): Seq[Int] =
    SparkShim.keyGroupedPartitioning(plan.outputPartitioning).get._2.map(_.getInt(0))

  test("an input hash-partitioned has no key-grouped layout, and its shuffle stays") {
    val hashed = ScanOfLayout(Seq(k1, other), HashPartitioning(Seq(k1), 4))
    assert(layout(Seq(k1), hashed.outputPartitioning) == Left("its partitioning is HashPartitioning, not grouped by key"))
    val join = shuffled(FullOuter, hashed, ScanOfLayout(Seq(k2, other), HashPartitioning(Seq(k2), 4)))
    assert(!join.keyGroupedInputs)
    assert(UseKeyGroupedInputs(join) eq join)
  }

  if (KeyGroupedPartitioningOf.exists) {

    test("a layout's shape: each partition expression as a function (name, buckets) of a key component") {
      assert(layout(Seq(k1), grouped(k1, bucket(8, k1), 0, 1).outputPartitioning).map(_.shape) ==
        Right(Seq(Shape(Some(("test.bucket", Some(8))), 0, "INT"))))
      assert(layout(Seq(k1), grouped(k1, k1, 5, 7).outputPartitioning).map(_.shape) == Right(Seq(Shape(None, 0, "INT"))))
    }

    test("grouped by a column that is not the key, or partially clustered, is no usable layout") {
      val byOther = layout(Seq(k1), KeyGroupedPartitioningOf(Seq(bucket(8, other)), values(0)))
      assert(byOther.left.exists(_.contains("is not a function of exactly one component of its key")), byOther)
      val split = layout(Seq(k1), KeyGroupedPartitioningOf(Seq(k1), values(0, 1), partiallyClustered = true))
      assert(split.left.exists(_.contains("not grouped by key")), split)
    }

    test("grouped on part of the key: usable only where Spark co-partitions on a subset of the keys") {
      val partly = KeyGroupedPartitioningOf(Seq(bucket(8, k1)), values(0))
      val key = Seq(k1, other)
      withConfs(SQLConf.REQUIRE_ALL_CLUSTER_KEYS_FOR_CO_PARTITION.key -> "true") {
        assert(layout(key, partly).left.exists(_.contains("not on every column of its key")))
      }
      withConfs(SQLConf.REQUIRE_ALL_CLUSTER_KEYS_FOR_CO_PARTITION.key -> "false") {
        assert(layout(key, partly).isRight)
      }
    }

    test("co-partitioned: the same functions of the key, and the same values in the same order") {
      def coPartitioned(scans: ScanOfLayout*): Boolean = KeyGroupedInputs.coPartitioned(scans.map(s => Seq(s.output.head)), scans)
      assert(coPartitioned(grouped(k1, bucket(8, k1), 0, 1, 2), grouped(k2, bucket(8, k2), 0, 1, 2)))
      assert(!coPartitioned(grouped(k1, bucket(8, k1), 0, 1, 2), grouped(k2, bucket(8, k2), 0, 2, 1)), "another order")
      assert(!coPartitioned(grouped(k1, bucket(8, k1), 0, 1, 2), grouped(k2, bucket(8, k2), 0, 1)), "other values")
      assert(!coPartitioned(grouped(k1, bucket(8, k1), 0, 1), grouped(k2, bucket(4, k2), 0, 1)), "other bucket counts")
      assert(!coPartitioned(grouped(k1, bucket(8, k1), 0, 1), grouped(k2, k2, 0, 1)), "a bucket and the column")
    }

    test("the common values: the sorted union of every input's, each once") {
      val layouts = Seq(grouped(k1, bucket(8, k1), 3, 0, 5), grouped(k2, bucket(8, k2), 5, 1))
        .zip(Seq(k1, k2)).map { case (s, k) => layout(Seq(k), s.outputPartitioning).toOption.get }
      assert(commonValues(layouts.head.expressions, layouts.map(_.values)).map(_.getInt(0)) == Seq(0, 1, 3, 5))
    }

    test("reducible onto another layout: the same one, or a multiple of its bucket count whose source says how") {
      def layoutOf(key: Attribute, expression: Expression, values: Int*) =
        layout(Seq(key), grouped(key, expression, values: _*).outputPartitioning).toOption.get
      val eight = layoutOf(k1, bucket(8, k1), 0, 1)
      assert(reducibleOnto(layoutOf(k2, bucket(8, k2), 1), eight).contains(Seq(None)), "the same layout: nothing to map")
      assert(reducibleOnto(layoutOf(k2, bucket(4, k2), 1), eight).isEmpty, "fewer buckets")
      assert(reducibleOnto(layoutOf(k2, bucket(12, k2), 1), eight).isEmpty, "not a multiple")
      assert(reducibleOnto(layoutOf(k2, k2, 1), eight).isEmpty, "the column itself")
      // A multiple, but this test's transform is no ReducibleFunction: no mapping is made up.
      assert(reducibleOnto(layoutOf(k2, bucket(16, k2), 1), eight).isEmpty, "a source that cannot reduce")
    }

    test("over co-partitioned inputs the operator requires no distribution; FULL reports the layout on its key column, LEFT the driver's") {
      val scans = Seq(grouped(k1, bucket(8, k1), 0, 1), grouped(k2, bucket(8, k2), 0, 1))
      for (joinType <- Seq(FullOuter, LeftOuter)) {
        val join = MultiJoinExec(Seq(Seq(k1), Seq(k2)), joinType, scans, keyColumns(joinType))
        assert(join.keyGroupedInputs)
        assert(join.requiredChildDistribution == Seq(UnspecifiedDistribution, UnspecifiedDistribution))
        assert(join.simpleString(100).endsWith(", inputs grouped by key (no shuffle)"))
        if (joinType == FullOuter) {
          val (expressions, reported) = SparkShim.keyGroupedPartitioning(join.outputPartitioning).get
          assert(expressions == Seq(bucket(8, keyColumn)), "one column under the partition expression")
          assert(reported.map(_.getInt(0)) == Seq(0, 1))
          assert(!SparkShim.mayContainUnknownPartitionKeys(join.outputPartitioning))
          val keyless = MultiJoinExec(Seq(Seq(k1), Seq(k2)), joinType, scans)
          assert(keyless.outputPartitioning.isInstanceOf[UnknownPartitioning], "no key column: nothing to report on")
        } else assert(join.outputPartitioning == scans.head.outputPartitioning)
      }
    }

    test("Spark's own partition values pushed into the scans later (a storage-partitioned join above) are passed on as they are") {
      val scan = grouped(k1, bucket(8, k1), 0, 2)
      val input = KeyGroupedInputExec(scan, values(0, 1, 2), values(0, 2))
      assert(partitionValues(input) == Seq(0, 1, 2))
      val pushed = input.withNewChildren(Seq(grouped(k1, bucket(8, k1), 0, 1, 2, 3)))
      assert(partitionValues(pushed) == Seq(0, 1, 2, 3))
      assert(pushed.simpleString(100).contains("as Spark grouped the scan"))
    }

    test("inputs in one layout lose their shuffles, each re-indexed onto the union of their values") {
      val join = rewritten(shuffled(FullOuter, grouped(k1, bucket(8, k1), 0, 2), grouped(k2, bucket(8, k2), 1, 2),
        grouped(k3, bucket(8, k3), 2, 3)))
      assert(join.keyGroupedInputs)
      assert(join.collect { case e: ShuffleExchangeExec => e }.isEmpty, join.treeString)
      assert(join.children.forall(_.isInstanceOf[KeyGroupedInputExec]), join.treeString)
      assert(join.children.map(partitionValues) == Seq.fill(3)(Seq(0, 1, 2, 3)))
    }

    test("an input in another layout: shuffled into the others' by partition value on Spark 4, every input by hash on 3.5") {
      val join = shuffled(LeftOuter, grouped(k1, bucket(8, k1), 0, 1), grouped(k2, bucket(8, k2), 1, 2),
        grouped(k3, bucket(4, k3), 0, 3))
      if (org.apache.spark.SPARK_VERSION.startsWith("3.")) {
        assert(UseKeyGroupedInputs(join) eq join)
      } else {
        val result = rewritten(join)
        assert(result.keyGroupedInputs)
        // Rows of values the layout does not list may sit anywhere, and a join above would push
        // its partition values into the scans below: the output reports no layout at all.
        assert(result.outputPartitioning.isInstanceOf[UnknownPartitioning], result.outputPartitioning)
        assert(result.children.take(2).forall(_.isInstanceOf[KeyGroupedInputExec]), result.treeString)
        val shuffle = result.children(2).asInstanceOf[ShuffleExchangeExec]
        assert(shuffle.shuffleOrigin == REPARTITION_BY_NUM, "adaptive execution must not coalesce it")
        assert(shuffle.child == join.children(2).children.head)
        assert(SparkShim.mayContainUnknownPartitionKeys(shuffle.outputPartitioning))
        val (expressions, shuffledValues) = SparkShim.keyGroupedPartitioning(shuffle.outputPartitioning).get
        assert(expressions == Seq(bucket(8, k3)), "the kept inputs' transform over this input's key")
        assert(shuffledValues.map(_.getInt(0)) == Seq(0, 1, 2))
      }
    }

    test("a transform that cannot be computed on a row keeps every shuffle of a mixed layout") {
      def opaque(column: Expression): Expression = TransformExpression(Opaque, Seq(column), Some(8))
      val join = shuffled(FullOuter, grouped(k1, opaque(k1), 0, 1), grouped(k2, opaque(k2), 0, 1), grouped(k3, k3, 0, 1))
      assert(UseKeyGroupedInputs(join) eq join)
    }

    test("with spark.multijoin.keyGroupedInputs.enabled false every input keeps its shuffle") {
      val join = shuffled(FullOuter, grouped(k1, bucket(8, k1), 0, 1), grouped(k2, bucket(8, k2), 0, 1))
      withConfs(MultiJoinConf.KEY_GROUPED_INPUTS.key -> "false") {
        assert(UseKeyGroupedInputs(join) eq join)
      }
    }

  } else {

    test("this Spark has no KeyGroupedPartitioning: no input is read grouped by key") {
      assert(!KeyGroupedPartitioningOf.exists)
      assert(SparkShim.keyGroupedPartitioning(HashPartitioning(Seq(k1), 4)).isEmpty)
    }
  }
}
