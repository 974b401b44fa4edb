package org.apache.spark.sql.multijoin.bloom

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import org.apache.spark.internal.Logging
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.aggregate.{BloomFilterAggregate, TypedImperativeAggregate}
import org.apache.spark.sql.catalyst.trees.UnaryLike
import org.apache.spark.sql.multijoin.MultiJoinConf
import org.apache.spark.sql.types.{BinaryType, DataType, LongType}
import org.apache.spark.util.collection.OpenHashSet
import org.apache.spark.util.sketch.BloomFilter

/**
 * The bloom filter of a LEFT or INNER multi-join's driver keys, sized from the keys it sees
 * (see docs/architecture.md, "How the bloom filter is sized").
 *
 * Spark's `bloom_filter_agg` needs the number of items before it sees the first row, and the
 * planner's guess of the driver's rows can be far off: without table statistics it is the
 * driver's file size / 8, which for well-compressed parquet is far fewer than its rows, and a
 * filter holding more items than it was sized for lets through many more rows than its
 * configured false positive rate. This aggregate collects the distinct hashes of the keys
 * instead, in the same single pass over the driver, and only then builds a filter of exactly
 * the bits the count needs: no extra job, nothing run at planning time, so EXPLAIN stays free.
 *
 * Memory stays bounded by `maxBits`: a buffer keeps the hashes (about 16 bytes each in a hash
 * set) only while they take no more memory than the largest filter (`maxBits / 8` bytes); past
 * that it turns into that largest filter, which then receives every further hash.
 *
 * @param child   the key's hash (XxHash64, as `might_contain` probes it), a long
 * @param fpp     the false positive rate the filter is sized for
 * @param maxBits the largest filter built
 */
case class DriverKeysBloomFilterAggregate(
    child: Expression,
    fpp: Double,
    maxBits: Long,
    mutableAggBufferOffset: Int = 0,
    inputAggBufferOffset: Int = 0)
  extends TypedImperativeAggregate[DriverKeyHashes] with UnaryLike[Expression] {

  override def prettyName: String = "multijoin_bloom_filter"
  // The plan shows what sizes the filter (fpp, bound), not the buffers' offsets.
  override protected def flatArguments: Iterator[Any] = Iterator(child, fpp, maxBits)

  override def dataType: DataType = BinaryType
  override def nullable: Boolean = false

  override def checkInputDataTypes(): TypeCheckResult =
    if (child.dataType == LongType) TypeCheckResult.TypeCheckSuccess
    else TypeCheckResult.TypeCheckFailure(s"$prettyName hashes longs, not ${child.dataType}")

  override def createAggregationBuffer(): DriverKeyHashes = new DriverKeyHashes(fpp, maxBits)

  override def update(buffer: DriverKeyHashes, input: InternalRow): DriverKeyHashes = {
    val hash = child.eval(input)
    if (hash != null) buffer.add(hash.asInstanceOf[Long])
    buffer
  }

  override def merge(buffer: DriverKeyHashes, other: DriverKeyHashes): DriverKeyHashes =
    buffer.merge(other)

  override def eval(buffer: DriverKeyHashes): Any = BloomFilterAggregate.serialize(buffer.toBloomFilter)

  override def serialize(buffer: DriverKeyHashes): Array[Byte] = buffer.toBytes

  override def deserialize(bytes: Array[Byte]): DriverKeyHashes = DriverKeyHashes(fpp, maxBits, bytes)

  override def withNewMutableAggBufferOffset(offset: Int): DriverKeysBloomFilterAggregate =
    copy(mutableAggBufferOffset = offset)

  override def withNewInputAggBufferOffset(offset: Int): DriverKeysBloomFilterAggregate =
    copy(inputAggBufferOffset = offset)

  override protected def withNewChildInternal(newChild: Expression): DriverKeysBloomFilterAggregate =
    copy(child = newChild)
}

object DriverKeysBloomFilterAggregate {

  /** The bits a filter of `keys` keys needs for a false positive rate of `fpp` (64 at least). */
  def bitsFor(keys: Long, fpp: Double): Long = BloomFilter.optimalNumOfBits(keys.max(1L), fpp).max(64L)

  /** The keys the largest filter (`maxBits`) holds at `fpp`: the inverse of [[bitsFor]]. */
  def keysFor(maxBits: Long, fpp: Double): Long =
    (maxBits * math.log(2) * math.log(2) / -math.log(fpp)).toLong.max(1L)
}

/**
 * The aggregation buffer of [[DriverKeysBloomFilterAggregate]]: the distinct key hashes seen, or,
 * once they would take more memory than the largest filter, that filter itself.
 */
final class DriverKeyHashes(fpp: Double, maxBits: Long) extends Logging {
  import DriverKeyHashes._
  import DriverKeysBloomFilterAggregate.{bitsFor, keysFor}

  private var hashes: OpenHashSet[Long] = new OpenHashSet[Long]
  private var largest: BloomFilter = _ // set (and `hashes` dropped) once past maxHashes

  /** Hashes kept at most: 16 bytes each (a hash set's slots) in the largest filter's bytes. */
  private def maxHashes: Long = maxBits / 8 / BytesPerHash

  def add(hash: Long): Unit =
    if (largest != null) largest.putLong(hash)
    else {
      hashes.add(hash)
      if (hashes.size > maxHashes) becomeLargest()
    }

  def merge(other: DriverKeyHashes): DriverKeyHashes = {
    if (other.largest != null) {
      if (largest == null) becomeLargest()
      largest.mergeInPlace(other.largest)
    } else {
      other.hashes.iterator.foreach(add)
    }
    this
  }

  private def becomeLargest(): Unit = {
    // Every buffer builds the same largest filter (same keys, same bits), so they merge.
    largest = BloomFilter.create(keysFor(maxBits, fpp), maxBits)
    hashes.iterator.foreach(largest.putLong)
    hashes = null
  }

  /** The filter of the hashes seen: exactly the bits their number needs, or the largest one. */
  def toBloomFilter: BloomFilter =
    if (largest != null) {
      logInfo(s"Bloom filter of the driver's keys built with the most bits allowed, $maxBits " +
        s"(${MultiJoinConf.BLOOM_FILTER_MAX_BITS.key}): the driver has more than $maxHashes " +
        s"distinct keys")
      largest
    } else {
      val keys = hashes.size.toLong
      val bits = bitsFor(keys, fpp).min(maxBits)
      logInfo(s"Bloom filter of the driver's keys built for the $keys distinct keys it has: " +
        s"$bits bits, false positive rate $fpp")
      val filter = BloomFilter.create(keys.max(1L), bits)
      hashes.iterator.foreach(filter.putLong)
      filter
    }

  def toBytes: Array[Byte] = {
    val bytes = new ByteArrayOutputStream()
    val out = new DataOutputStream(bytes)
    if (largest != null) {
      out.writeBoolean(true)
      largest.writeTo(out)
    } else {
      out.writeBoolean(false)
      out.writeInt(hashes.size)
      hashes.iterator.foreach(out.writeLong)
    }
    out.close()
    bytes.toByteArray
  }
}

object DriverKeyHashes {
  private val BytesPerHash = 16L

  def apply(fpp: Double, maxBits: Long, bytes: Array[Byte]): DriverKeyHashes = {
    val buffer = new DriverKeyHashes(fpp, maxBits)
    val in = new DataInputStream(new ByteArrayInputStream(bytes))
    if (in.readBoolean()) {
      buffer.hashes = null
      buffer.largest = BloomFilter.readFrom(in)
    } else {
      (0 until in.readInt()).foreach(_ => buffer.hashes.add(in.readLong()))
    }
    buffer
  }
}
