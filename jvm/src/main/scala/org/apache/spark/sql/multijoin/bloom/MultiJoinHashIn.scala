package org.apache.spark.sql.multijoin.bloom

import java.nio.ByteBuffer

import org.apache.spark.sql.catalyst.{FunctionIdentifier, InternalRow}
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{BinaryExpression, Expression, ExpressionInfo, ImplicitCastInputTypes, Predicate}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{AbstractDataType, BinaryType, LongType}

/**
 * `multijoin_hash_in(hashes, hash)`: whether the long `hash` is one of `hashes`, a constant binary
 * of 8-byte big-endian longs (SQL writes it as `unhex('…')` of 16 hex digits per hash). It is the
 * exact filter the dbt materialization's changed_keys MERGE puts on its target
 * (macros/internal/_changed_keys_apply.sql, `_mj_replaced_rows_filter`), up to its hash-list
 * limit; above it, the bloom filter of [[BloomFilterFunctions]].
 *
 * Why not `xxhash64(k) IN (…)`: Spark turns a long IN list into `InSet`, whose generated code
 * looks each row up in a Scala immutable HashSet of boxed longs: a boxing, a hash and a walk down
 * the set's trie per row, and that MERGE runs the filter on every row of the target. Here the
 * lookup is one probe of a primitive open-addressing table (usually one slot), and the SQL
 * carries one string literal instead of a literal per hash that Spark parses and analyzes one
 * by one.
 */
case class MultiJoinHashIn(hashes: Expression, hash: Expression)
    extends BinaryExpression with Predicate with ImplicitCastInputTypes {

  override def left: Expression = hashes
  override def right: Expression = hash
  override def prettyName: String = "multijoin_hash_in"
  override def inputTypes: Seq[AbstractDataType] = Seq(BinaryType, LongType)
  override def nullable: Boolean = hash.nullable

  override def checkInputDataTypes(): TypeCheckResult = {
    val types = super.checkInputDataTypes()
    if (types.isFailure) types
    else if (!hashes.foldable) TypeCheckResult.TypeCheckFailure("multijoin_hash_in: hashes must be a constant binary")
    else TypeCheckResult.TypeCheckSuccess
  }

  /** Built once per copy of the expression: on the driver for generated code (which ships it
   * as a reference object), on an executor for interpreted evaluation. */
  @transient private lazy val set: LongHashSet = MultiJoinHashIn.setOf(hashes.eval())

  // The hashes are a constant: only a NULL hash makes the result NULL.
  override def eval(input: InternalRow): Any = {
    val value = hash.eval(input)
    if (value == null) null else set.contains(value.asInstanceOf[Long])
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val table = ctx.addReferenceObj("hashSet", set, classOf[LongHashSet].getName)
    val value = hash.genCode(ctx)
    ev.copy(code = code"""
      ${value.code}
      boolean ${ev.isNull} = ${value.isNull};
      boolean ${ev.value} = false;
      if (!${ev.isNull}) {
        ${ev.value} = $table.contains(${value.value});
      }""")
  }

  override protected def withNewChildrenInternal(newLeft: Expression, newRight: Expression): MultiJoinHashIn =
    copy(hashes = newLeft, hash = newRight)
}

object MultiJoinHashIn {
  private[multijoin] def setOf(value: Any): LongHashSet = value match {
    case bytes: Array[Byte] if bytes.length % 8 == 0 =>
      val buffer = ByteBuffer.wrap(bytes)
      LongHashSet(Array.fill(bytes.length / 8)(buffer.getLong()))
    case bytes: Array[Byte] =>
      throw new IllegalArgumentException(
        s"multijoin_hash_in: hashes must be whole 8-byte longs, got ${bytes.length} bytes")
    case _ => throw new IllegalArgumentException("multijoin_hash_in: hashes is NULL")
  }

  val function: (FunctionIdentifier, ExpressionInfo, Seq[Expression] => Expression) = (
    FunctionIdentifier("multijoin_hash_in"),
    new ExpressionInfo(classOf[MultiJoinHashIn].getName, null, "multijoin_hash_in",
      "_FUNC_(hashes, hash) - true when the long hash is one of hashes, a constant binary of " +
        "8-byte big-endian longs (unhex of 16 hex digits each); NULL when hash is NULL.",
      "", "", "", "predicate_funcs", "0.1.0", "", "built-in"),
    (arguments: Seq[Expression]) => arguments match {
      case Seq(hashes, hash) => MultiJoinHashIn(hashes, hash)
      case _ => throw new IllegalArgumentException("multijoin_hash_in takes two arguments: hashes, hash")
    })
}
