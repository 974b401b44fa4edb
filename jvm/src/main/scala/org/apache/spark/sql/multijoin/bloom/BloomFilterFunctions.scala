package org.apache.spark.sql.multijoin.bloom

import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{BloomFilterMightContain, Expression, ExpressionInfo}
import org.apache.spark.sql.types.NumericType

/**
 * Two SQL functions over the bloom filters of [[DriverKeysBloomFilterAggregate]], for the dbt
 * materialization's changed_keys MERGE (macros/internal/_changed_keys_apply.sql,
 * `_mj_replaced_rows_filter`). That MERGE also inserts, so Delta and Iceberg join its source to
 * the whole target with the target on the side that is not kept, which Spark cannot broadcast: a
 * condition on the target alone, pushed below that join, is what keeps the target's shuffle to
 * the rows it replaces. The macro lists the changed keys' hashes in the SQL up to a limit; above
 * it, it builds a filter of them once (`multijoin_bloom_filter`) and writes it into the MERGE as
 * a literal that `multijoin_might_contain` probes.
 *
 *  - `multijoin_bloom_filter(hash, fpp, max_bits)`: aggregate; the bloom filter of the long
 *    hashes (xxhash64 of the key), sized for the distinct hashes it sees at the false positive
 *    rate `fpp`, at most `max_bits` bits; binary, in Spark's own serialized form.
 *  - `multijoin_might_contain(filter, hash)`: Spark's `might_contain` (its runtime filters'
 *    probe, which Spark does not register as a SQL function): false only when `hash` was never
 *    put in `filter`, a constant.
 */
object BloomFilterFunctions {
  private type Function = (FunctionIdentifier, ExpressionInfo, Seq[Expression] => Expression)

  private def info(name: String, usage: String, group: String): ExpressionInfo =
    new ExpressionInfo(classOf[DriverKeysBloomFilterAggregate].getName, null, name, usage,
      "", "", "", group, "0.1.0", "", "built-in")

  private def constant(name: String, argument: String, value: Expression): Any = {
    if (!value.foldable || !value.dataType.isInstanceOf[NumericType]) {
      throw new IllegalArgumentException(s"$name: $argument must be a constant number")
    }
    Option(value.eval()).getOrElse(throw new IllegalArgumentException(s"$name: $argument is NULL"))
  }

  val aggregate: Function = (
    FunctionIdentifier("multijoin_bloom_filter"),
    info("multijoin_bloom_filter", "_FUNC_(hash, fpp, max_bits) - the bloom filter of the long " +
      "hashes, sized for the distinct hashes seen at the false positive rate fpp, at most " +
      "max_bits bits, as binary (what multijoin_might_contain probes).", "agg_funcs"),
    (arguments: Seq[Expression]) => arguments match {
      case Seq(hash, fpp, maxBits) =>
        val rate = constant("multijoin_bloom_filter", "fpp", fpp).toString.toDouble
        val bits = constant("multijoin_bloom_filter", "max_bits", maxBits).toString.toDouble.toLong
        if (!(rate > 0 && rate < 1) || bits < 64) {
          throw new IllegalArgumentException(
            s"multijoin_bloom_filter: fpp must be in (0, 1) and max_bits at least 64, got $rate and $bits")
        }
        DriverKeysBloomFilterAggregate(hash, rate, bits)
      case _ =>
        throw new IllegalArgumentException("multijoin_bloom_filter takes three arguments: hash, fpp, max_bits")
    })

  val probe: Function = (
    FunctionIdentifier("multijoin_might_contain"),
    info("multijoin_might_contain", "_FUNC_(filter, hash) - false when the long hash was never " +
      "put in the bloom filter (a constant binary of multijoin_bloom_filter), else true.",
      "misc_funcs"),
    (arguments: Seq[Expression]) => arguments match {
      case Seq(filter, hash) => BloomFilterMightContain(filter, hash)
      case _ =>
        throw new IllegalArgumentException("multijoin_might_contain takes two arguments: filter, hash")
    })
}
