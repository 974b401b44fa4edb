package org.apache.spark.sql.multijoin.shim

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.plans.physical.Partitioning

/**
 * Spark's KeyGroupedPartitioning, read and rebuilt by reflection: it exists from Spark 3.5 to
 * 4.1, always with the same first three fields (expressions, numPartitions, partitionValues) but
 * more after them in later patch releases (the latest 4.1 patch has six), and was replaced in
 * Spark 4.2. A jar is built for a minor and must run on each of its patch releases, and this one
 * source on every line; on a Spark without it nothing is key-grouped, so every input is shuffled. The rest of the
 * extension reaches it through the typed members of [[SparkShimApi]].
 */
private[shim] object KeyGroupedPartitionings {
  private val ClassName = "org.apache.spark.sql.catalyst.plans.physical.KeyGroupedPartitioning"

  private val UnknownKeys = "mayContainUnknownPartitionKeys"

  /**
   * Its partition expressions and values, unless it is partially clustered (a value split over
   * several partitions; a flag a line lacks is false). A partitioning shuffled by value
   * (Spark 4's `mayContainUnknownPartitionKeys`) also holds rows of values it does not list:
   * see [[mayContainUnknownKeys]].
   */
  def byValue(p: Partitioning): Option[(Seq[Expression], Seq[InternalRow])] = p match {
    case product: Product if p.getClass.getName == ClassName && !flag(p, "isPartiallyClustered") =>
      Some((product.productElement(0).asInstanceOf[Seq[Expression]],
        product.productElement(2).asInstanceOf[Seq[InternalRow]]))
    case _ => None
  }

  def mayContainUnknownKeys(p: Partitioning): Boolean = flag(p, UnknownKeys)

  /** Whether `p`'s patch release can flag it as holding unknown keys (a field of later 4.x). */
  def canFlagUnknownKeys(p: Partitioning): Boolean = fieldNames(p).contains(UnknownKeys)

  /**
   * `template` over `expressions`, one partition per value of `values`, flagged as holding
   * unknown keys; needs [[canFlagUnknownKeys]].
   */
  def shuffledByValue(template: Partitioning, expressions: Seq[Expression],
      values: Seq[InternalRow]): Partitioning = {
    val names = fieldNames(template)
    val fields = Map("expressions" -> expressions, "numPartitions" -> Int.box(values.size),
      "partitionValues" -> values, "originalPartitionValues" -> values,
      "isPartiallyClustered" -> java.lang.Boolean.FALSE, UnknownKeys -> java.lang.Boolean.TRUE)
    rebuilt(template, fields.collect { case (name, value) if names.contains(name) => names.indexOf(name) -> value })
  }

  /** `p` over `expressions`, flagged as holding unknown keys if asked (None where it cannot be). */
  def withExpressions(p: Partitioning, expressions: Seq[Expression],
      mayContainUnknownKeys: Boolean): Option[Partitioning] = {
    val names = fieldNames(p)
    if (mayContainUnknownKeys && !names.contains(UnknownKeys)) None
    else {
      val flagged = if (mayContainUnknownKeys) Map(names.indexOf(UnknownKeys) -> java.lang.Boolean.TRUE) else Map.empty
      Some(rebuilt(p, Map[Int, AnyRef](0 -> expressions) ++ flagged))
    }
  }

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
}
