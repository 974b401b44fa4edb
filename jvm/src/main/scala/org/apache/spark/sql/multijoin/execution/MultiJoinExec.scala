package org.apache.spark.sql.multijoin.execution

import org.apache.spark.TaskContext
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, AttributeSet, BindReferences, BoundReference, Expression, SortOrder, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, CodeGenerator, EmptyBlock, ExprCode, FalseLiteral, JavaCode}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.catalyst.plans.{FullOuter, JoinType}
import org.apache.spark.sql.catalyst.plans.physical.{ClusteredDistribution, Distribution, Partitioning, UnknownPartitioning, UnspecifiedDistribution}
import org.apache.spark.sql.execution.{CodegenSupport, SparkPlan}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.multijoin.MultiJoinConf
import org.apache.spark.sql.multijoin.logical.MultiJoin
import org.apache.spark.sql.multijoin.recognition.CoalescedKey
import org.apache.spark.sql.multijoin.storage.KeyGroupedInputs
import org.apache.spark.sql.types.StructType

/**
 * The k-way sort-merge join. Each child must be clustered on its own key, so EnsureRequirements
 * puts exactly one shuffle under each input and none between join levels. Unlike
 * SortMergeJoinExec, the operator sorts its inputs itself (see [[InputSorter]] for why), each
 * exactly once and only when the child does not already deliver it in key order. Execution (per
 * partition, a merge of N sorted iterators) lives in [[MultiJoinScanner]].
 *
 * Inside a whole-stage codegen stage the operator is the stage's source: the code generated for
 * the operators above it (the projection that computes the coalesced key and picks the columns,
 * a filter, an aggregation) reads the fields of the N input rows of each combination directly,
 * so each output row is written once, by them. Outside one (codegen off, or a plan Spark does
 * not generate code for) it concatenates the N rows into one output row instead.
 */
case class MultiJoinExec(
    keys: Seq[Seq[Expression]],
    joinType: JoinType,
    children: Seq[SparkPlan],
    keyColumns: Seq[Attribute] = Nil)
  extends SparkPlan with CodegenSupport {

  /** The inputs' columns side by side, as [[MultiJoin]] has them. */
  private def inputColumns: Seq[Attribute] = MultiJoin.output(joinType, children.map(_.output))

  /** FULL: the inputs' columns, then the key columns ([[MultiJoin]]), computed here per row. */
  override def output: Seq[Attribute] = inputColumns ++ keyColumns

  override def producedAttributes: AttributeSet = AttributeSet(keyColumns)

  /** Per key column, its value over the inputs' columns: the coalesce of the inputs' keys. */
  @transient private lazy val keyValues: Seq[Expression] =
    if (keyColumns.isEmpty) Nil
    else CoalescedKey.of(keys, inputColumns).getOrElse(throw new IllegalStateException(
      s"key columns ${keyColumns.mkString(", ")} over keys that are not null for a missing input"))

  /**
   * Whether the children are read co-partitioned by their storage layout (see
   * [[KeyGroupedInputs]]): the same partition index holds the same keys in every input. Checked
   * on the children themselves, so it holds for whatever plan this node ends up in.
   */
  @transient lazy val keyGroupedInputs: Boolean = KeyGroupedInputs.coPartitioned(keys, children)

  // Over co-partitioned inputs the operator needs nothing: asking for clustering would make
  // EnsureRequirements (which only checks key groups for two-child joins) shuffle them again.
  override def requiredChildDistribution: Seq[Distribution] =
    if (keyGroupedInputs) children.map(_ => UnspecifiedDistribution)
    else keys.map(ClusteredDistribution(_))

  /** The order the merge reads each input in: ascending on its key, nulls first. */
  private def keyOrder(input: Int): Seq[SortOrder] = keys(input).map(SortOrder(_, Ascending))

  /** The inputs the operator sorts: those whose child does not already deliver its key order. */
  private lazy val sortedHere: Seq[Boolean] = children.indices.map { i =>
    !SortOrder.orderingSatisfies(children(i).outputOrdering, keyOrder(i))
  }

  // LEFT and INNER: every output row carries its driver row, so the driver's partitioning and
  // key order hold (as SortMergeJoinExec reports its streamed side's).
  // FULL: no input's partitioning holds (a row may miss any input), but every row sits where its
  // coalesced key, its key columns, was partitioned by, when the inputs were partitioned alike
  // (see CoalescedKey; docs/architecture.md, "The key as a column of its own").
  // Over inputs read grouped by key of which some were shuffled into that layout by value, or are
  // read grouped onto it from a multiple of its bucket count (both report the layout flagged as
  // holding values it does not list), no layout is reported: a storage-partitioned join above
  // would push its partition values down into the scans of this plan, which lines the scans up
  // anew but not the rows already shuffled by the old values, and makes a scan of another bucket
  // count read only its buckets of those values. Spark 4.1 does so even when the layout is flagged
  // (measured: rows lost).
  override def outputPartitioning: Partitioning = joinType match {
    case _ if shuffledByValue => unknownPartitioning
    case FullOuter if keyColumns.isEmpty => unknownPartitioning
    case FullOuter if keyGroupedInputs =>
      KeyGroupedInputs.onKeyColumns(keys.head, children.head.outputPartitioning, keyColumns).getOrElse(unknownPartitioning)
    case FullOuter =>
      CoalescedKey.partitioning(keyColumns, keys, children.map(_.outputPartitioning)).getOrElse(unknownPartitioning)
    case _ => children.head.outputPartitioning
  }

  private def unknownPartitioning = UnknownPartitioning(children.head.outputPartitioning.numPartitions)

  /**
   * Whether an input was shuffled into the others' layout by value, or is read grouped onto it
   * from a multiple of its bucket count (Spark 4; see UseKeyGroupedInputs): its layout is flagged.
   */
  private def shuffledByValue: Boolean = keyGroupedInputs && keys.zip(children).exists { case (key, child) =>
    KeyGroupedInputs.layout(key, child.outputPartitioning).exists(_.shuffledByValue)
  }

  // FULL: the merge emits keys in ascending order, but a row whose key has a null component as
  // soon as it reaches the head of its input. With a single key column those rows come first in
  // every input, as nulls sort first; with several they may land among the others.
  override def outputOrdering: Seq[SortOrder] = joinType match {
    case FullOuter if keys.head.size == 1 || !keys.flatten.exists(_.nullable) =>
      keyColumns.map(SortOrder(_, Ascending))
    case FullOuter => Nil
    case _ => keyOrder(0)
  }

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"),
    "spillSize" -> SQLMetrics.createSizeMetric(sparkContext, "spill size"),
    "sortTime" -> SQLMetrics.createTimingMetric(sparkContext, "sort time"),
    "sortPeakMemory" -> SQLMetrics.createSizeMetric(sparkContext, "peak memory of the sorts"),
    "sortSpillSize" -> SQLMetrics.createSizeMetric(sparkContext, "spill size of the sorts")) ++
    children.indices.map { i =>
      MultiJoinExec.inputRowsMetric(i) ->
        SQLMetrics.createMetric(sparkContext, s"number of rows read from input ${i + 1}")
    }

  /**
   * One scanner per partition over the N children's rows, each sorted here if it does not
   * arrive sorted, as an RDD of `emit(scanner)`. Everything the tasks need is computed here, so
   * the closure does not capture the plan.
   */
  private def scan[T: scala.reflect.ClassTag](emit: MultiJoinScanner => Iterator[T]): RDD[T] = {
    val numOutputRows = longMetric("numOutputRows")
    val spillSize = longMetric("spillSize")
    val sortTime = longMetric("sortTime")
    val sortPeakMemory = longMetric("sortPeakMemory")
    val sortSpillSize = longMetric("sortSpillSize")
    val inputRows = children.indices.map(i => longMetric(MultiJoinExec.inputRowsMetric(i))).toArray
    val boundKeys = keys.zip(children).map { case (key, child) =>
      BindReferences.bindReferences(key, child.output)
    }
    val inputSchemas = children.map(_.schema)
    val sortsPerTask = sortedHere.count(identity)
    val sorters: Seq[Option[InputSorter]] = children.indices.map { i =>
      if (sortedHere(i)) {
        val boundOrder = boundKeys(i).map(SortOrder(_, Ascending))
        Some(new InputSorter(inputSchemas(i), boundOrder, conf.enableRadixSort, sortsPerTask))
      } else None
    }
    val inMemoryThreshold = conf.getConf(MultiJoinConf.BUFFER_IN_MEMORY_THRESHOLD)
    val spillThreshold = conf.getConf(MultiJoinConf.BUFFER_SPILL_THRESHOLD)

    new MultiZippedPartitionsRDD[InternalRow, T](
      sparkContext,
      children.map(_.execute()),
      (context: TaskContext, inputs: Seq[Iterator[InternalRow]]) => {
        val sortedInputs = inputs.indices.map { i =>
          val rows = MultiJoinExec.asUnsafeRows(inputs(i), inputSchemas(i))
          sorters(i).fold[InputInKeyOrder](RowsInKeyOrder(rows))(
            _.sort(rows, sortTime, sortPeakMemory, sortSpillSize))
        }
        val scanner = new MultiJoinScanner(
          joinType = joinType,
          inputs = sortedInputs.toArray,
          inputSchemas = inputSchemas,
          boundKeys = boundKeys,
          inMemoryThreshold = inMemoryThreshold,
          spillThreshold = spillThreshold,
          numOutputRows = numOutputRows,
          inputRows = inputRows,
          spillSize = spillSize)
        context.addTaskCompletionListener[Unit](_ => scanner.close())
        emit(scanner)
      })
  }

  /**
   * Without whole-stage codegen: each combination as one concatenated row, and the key columns
   * computed from it where there are.
   */
  protected override def doExecute(): RDD[InternalRow] = {
    if (keyColumns.isEmpty) scan[InternalRow](scanner => scanner)
    else {
      val (columns, values) = (inputColumns, keyValues)
      scan[InternalRow] { scanner =>
        val withKeys = UnsafeProjection.create(columns ++ values, columns)
        scanner.map(withKeys)
      }
    }
  }

  // --- as the source of a whole-stage codegen stage ---

  override def supportCodegen: Boolean = conf.getConf(MultiJoinConf.CODEGEN_ENABLED)

  /**
   * The stage's one input: per combination, the array of the N input rows. Typed as rows for the
   * stage, which hands its input iterator to the generated code untouched; only that code reads
   * the elements, as arrays.
   */
  override def inputRDDs(): Seq[RDD[InternalRow]] =
    Seq(scan[Array[UnsafeRow]](_.rowsIterator).asInstanceOf[RDD[InternalRow]])

  // The operator's loop hands the operators above one combination at a time and returns to the
  // stage after each (shouldStop), so no row has to be copied.
  override def needCopyResult: Boolean = false

  override protected def doProduce(ctx: CodegenContext): String = {
    val input = ctx.addMutableState("scala.collection.Iterator", "multiJoinInput",
      v => s"$v = inputs[0];", forceInline = true)
    val rowClass = classOf[UnsafeRow].getName
    val combination = ctx.freshName("combination")
    val rows = children.indices.map(i => ctx.freshName(s"input${i + 1}Row"))
    def readColumns() = children.zipWithIndex.flatMap { case (child, i) =>
      child.output.zipWithIndex.map { case (attribute, ordinal) =>
        column(ctx, rows(i), MultiJoin.mayBeMissing(joinType, i), attribute, ordinal)
      }
    }
    val columns = readColumns() ++ keyColumnsCode(ctx, readColumns)
    ctx.currentVars = null
    s"""
       |while ($input.hasNext()) {
       |  $rowClass[] $combination = ($rowClass[]) $input.next();
       |  ${rows.zipWithIndex.map { case (row, i) => s"$rowClass $row = $combination[$i];" }.mkString("\n")}
       |  ${consume(ctx, columns)}
       |  if (shouldStop()) return;
       |}
     """.stripMargin
  }

  /**
   * The code computing each key column from the input rows: the coalesce of the inputs' keys,
   * generated by Spark over reads of the input columns it needs, made for it alone (`read`
   * gives fresh ones), so that it evaluates nothing an operator above reads through its own.
   */
  private def keyColumnsCode(ctx: CodegenContext, read: () => Seq[ExprCode]): Seq[ExprCode] =
    keyValues.map { value =>
      val bound = BindReferences.bindReference(value, inputColumns)
      val used = bound.collect { case b: BoundReference => b.ordinal }.distinct.sorted
      val reads = read()
      ctx.currentVars = reads.zipWithIndex.map { case (r, o) =>
        if (used.contains(o)) r.copy(code = EmptyBlock) else null
      }
      ctx.INPUT_ROW = null
      // Spark's subexpression elimination of the operators above does not apply to this
      // expression, bound to the inputs' columns rather than to this operator's output.
      val Seq(key) = ctx.withSubExprEliminationExprs(Map.empty)(Seq(bound.genCode(ctx)))
      ctx.currentVars = null
      val readCode = used.map(reads(_).code.toString).mkString("\n")
      ExprCode(code"$readCode\n${key.code}", key.isNull, key.value)
    }

  /**
   * The code reading field `ordinal` of input row `row`: null when the input has no row in this
   * combination (`missing`) or the field is null. Evaluated only if an operator above uses it.
   */
  private def column(
      ctx: CodegenContext,
      row: String,
      missing: Boolean,
      attribute: Attribute,
      ordinal: Int): ExprCode = {
    val dataType = attribute.dataType
    val javaType = CodeGenerator.javaType(dataType)
    val value = ctx.freshName("value")
    val read = CodeGenerator.getValue(row, dataType, ordinal.toString)
    val nullWhen = (if (missing) Seq(s"$row == null") else Nil) ++
      (if (attribute.nullable) Seq(s"$row.isNullAt($ordinal)") else Nil)
    if (nullWhen.isEmpty) {
      ExprCode(code"$javaType $value = $read;", FalseLiteral, JavaCode.variable(value, dataType))
    } else {
      val isNull = ctx.freshName("isNull")
      val code =
        code"""
              |boolean $isNull = ${nullWhen.mkString(" || ")};
              |$javaType $value = $isNull ? ${CodeGenerator.defaultValue(dataType)} : ($read);
             """.stripMargin
      ExprCode(code, JavaCode.isNullVariable(isNull), JavaCode.variable(value, dataType))
    }
  }

  override def simpleString(maxFields: Int): String = {
    val sorted = sortedHere.zipWithIndex.collect { case (true, i) => i + 1 }
    val sorts = if (sorted.size == children.size) "all"
      else if (sorted.isEmpty) "none (all arrive in key order)"
      else sorted.mkString("[", ", ", "]")
    val layout = if (keyGroupedInputs) ", inputs grouped by key (no shuffle)" else ""
    s"${MultiJoin.describe(joinType, keys)}${MultiJoin.describeKeyColumns(keyColumns)}, sorts inputs: $sorts$layout"
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[SparkPlan]): MultiJoinExec =
    copy(children = newChildren)
}

object MultiJoinExec {
  /** The key of input `input`'s row count (0-based), numbered from 1 as its label is. */
  def inputRowsMetric(input: Int): String = s"numInputRows${input + 1}"

  /**
   * The sorter and the merge work on UnsafeRows, which Spark's operators emit; this converts the
   * rows of any child that does not.
   */
  private def asUnsafeRows(rows: Iterator[InternalRow], schema: StructType): Iterator[UnsafeRow] = {
    lazy val toUnsafe = UnsafeProjection.create(schema)
    rows.map {
      case unsafe: UnsafeRow => unsafe
      case other => toUnsafe(other)
    }
  }
}
