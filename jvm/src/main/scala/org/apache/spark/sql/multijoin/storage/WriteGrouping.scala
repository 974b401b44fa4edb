package org.apache.spark.sql.multijoin.storage

import java.util.Locale

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.analysis.{UnresolvedAttribute, UnresolvedFunction}
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, ExpressionInfo, Literal, TransformExpression}
import org.apache.spark.sql.catalyst.plans.logical.Command
import org.apache.spark.sql.catalyst.plans.physical.PartitioningCollection
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec
import org.apache.spark.sql.multijoin.shim.SparkShim
import org.apache.spark.sql.types.{ArrayType, StringType}
import org.apache.spark.sql.SparkSession
import org.apache.spark.unsafe.types.UTF8String

/**
 * Whether a query's output is already grouped the way a table it is written into is partitioned
 * (docs/table_formats.md, "Writing a table bucketed alike"): each of its partitions holds the rows
 * of one value of the table's partition transforms, by the partitioning its physical plan
 * reports. Iceberg then needs no redistribution of those rows before its writers (its default
 * `hash` write distribution shuffles the whole output into the table's partitions), and each
 * task writes one file per table partition it holds: one. The dbt materialization asks this of a
 * model's query before writing a table partitioned by buckets of the key.
 *
 * The answer is about files, never about rows: a write without redistribution is correct
 * whatever the query's grouping (Iceberg's writer computes each row's partition itself, and with
 * no required order its fanout writer takes rows of any partition in any order); only a query
 * not grouped alike would then write a small file per table partition per task.
 */
private[multijoin] object WriteGrouping {

  /**
   * "grouped: <transforms>, N partitions" when the plan of `sql` (as the calling session would
   * run it, after the extension's physical rules) reports its output grouped by exactly
   * `transforms` (`bucket(16, k)`, or a column, in the table's order) over its columns of those
   * names, each value in one partition and no other; else "not grouped: <why>".
   */
  def of(sql: String, transforms: Seq[String]): String = {
    val execution = SparkShim.unexecutedQuery(sql)
    if (execution.analyzed.exists(_.isInstanceOf[Command])) {
      throw new IllegalArgumentException(s"multijoin_write_grouping(sql, transforms) plans a query, not a command: $sql")
    }
    val plan = execution.executedPlan match {
      case adaptive: AdaptiveSparkPlanExec => adaptive.initialPlan
      case other => other
    }
    val parser = SparkSession.active.sessionState.sqlParser
    val targets = transforms.map { t =>
      try Right(parser.parseExpression(t))
      catch { case NonFatal(e) => Left(s"cannot read the transform '$t': ${e.getMessage}") }
    }
    targets.collectFirst { case Left(why) => s"not grouped: $why" }.getOrElse {
      grouping(plan, targets.map(_.toOption.get))
    }
  }

  private def grouping(plan: SparkPlan, targets: Seq[Expression]): String = {
    val candidates = plan.outputPartitioning match {
      case PartitioningCollection(ps) => ps
      case p => Seq(p)
    }
    val matched = candidates.flatMap { p =>
      SparkShim.keyGroupedPartitioning(p).map(grouped => (p, grouped))
    }.find { case (p, (expressions, _)) =>
      !SparkShim.mayContainUnknownPartitionKeys(p) && expressions.size == targets.size &&
        expressions.zip(targets).forall { case (e, t) => sameTransform(e, t, plan.output) }
    }
    matched match {
      case Some((p, (expressions, _))) =>
        s"grouped: ${expressions.map(describe).mkString(", ")}, ${p.numPartitions} partitions"
      case None =>
        val reported = candidates.map { p =>
          SparkShim.keyGroupedPartitioning(p).map { case (expressions, _) =>
            val unknown = if (SparkShim.mayContainUnknownPartitionKeys(p)) " (holding rows of other values too)" else ""
            s"grouped by ${expressions.map(describe).mkString(", ")}$unknown"
          }.getOrElse(p.getClass.getSimpleName)
        }
        s"not grouped: the query's output is ${reported.mkString(" or ")}, not grouped by ${targets.map(_.sql).mkString(", ")}"
    }
  }

  /** Whether the partition expression `e` is the table's transform `target` of an output column. */
  private def sameTransform(e: Expression, target: Expression, output: Seq[Attribute]): Boolean = {
    def column(a: Expression, name: Seq[String]): Boolean = a match {
      case attribute: Attribute => name.size == 1 && output.exists(_.exprId == attribute.exprId) &&
        attribute.name.toLowerCase(Locale.ROOT) == name.head.toLowerCase(Locale.ROOT)
      case _ => false
    }
    (e, target) match {
      case (t: TransformExpression, f: UnresolvedFunction) if t.children.size == 1 =>
        val name = f.nameParts.last.toLowerCase(Locale.ROOT)
        val (arguments, argument) = (f.arguments.init, f.arguments.last)
        t.function.name().toLowerCase(Locale.ROOT) == name &&
          arguments.map { case Literal(n: Int, _) => Some(n); case _ => None } == t.numBucketsOpt.toSeq.map(Some(_)) &&
          (argument match {
            case UnresolvedAttribute(parts) => column(t.children.head, parts)
            case _ => false
          })
      case (a: Attribute, UnresolvedAttribute(parts)) => column(a, parts)
      case _ => false
    }
  }

  private def describe(e: Expression): String = KeyGroupedInputs.layoutSql(Seq(e))

  /**
   * `multijoin_write_grouping(sql, transforms)`: whether the query `sql`, planned in the calling
   * session (not run), has its output grouped by `transforms` (an array of a table's partition
   * transforms as written in its PARTITIONED BY), as [[of]] tells. A constant of the calling
   * query, made when it is analysed.
   */
  val function: (FunctionIdentifier, ExpressionInfo, Seq[Expression] => Expression) = (
    FunctionIdentifier("multijoin_write_grouping"),
    new ExpressionInfo(
      WriteGrouping.getClass.getName, null, "multijoin_write_grouping", "_FUNC_(sql, transforms) - " +
        "whether the output of the query `sql`, as its physical plan reports it (the query is " +
        "not run), is grouped by the partition transforms `transforms` (an array of strings such " +
        "as 'bucket(16, k)'): 'grouped: ...' or 'not grouped: <why>'.",
      "", "", "", "misc_funcs", "0.1.0", "", "built-in"),
    (arguments: Seq[Expression]) => arguments match {
      case Seq(sql, transforms) if sql.foldable && sql.dataType == StringType && transforms.foldable &&
          transforms.dataType.isInstanceOf[ArrayType] &&
          transforms.dataType.asInstanceOf[ArrayType].elementType == StringType =>
        val text = Option(sql.eval()).map(_.asInstanceOf[UTF8String].toString).getOrElse(
          throw new IllegalArgumentException("multijoin_write_grouping(sql, transforms): sql is NULL"))
        val array = Option(transforms.eval()).map(_.asInstanceOf[ArrayData]).getOrElse(
          throw new IllegalArgumentException("multijoin_write_grouping(sql, transforms): transforms is NULL"))
        val names = (0 until array.numElements()).map(i => array.getUTF8String(i).toString)
        Literal(UTF8String.fromString(of(text, names)), StringType)
      case _ =>
        throw new IllegalArgumentException("multijoin_write_grouping(sql, transforms) takes the " +
          "text of a query and an array of partition transforms, both constants")
    })
}
