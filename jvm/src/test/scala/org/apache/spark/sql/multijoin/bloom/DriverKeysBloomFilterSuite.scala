package org.apache.spark.sql.multijoin.bloom

import java.io.{ByteArrayInputStream, ByteArrayOutputStream}

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.BoundReference
import org.apache.spark.sql.types.{IntegerType, LongType}
import org.apache.spark.util.sketch.BloomFilter
import org.scalatest.funsuite.AnyFunSuite

/** How the bloom filter of a LEFT/INNER multi-join's driver keys is sized (DriverKeysBloomFilter). */
class DriverKeysBloomFilterSuite extends AnyFunSuite {
  import DriverKeysBloomFilterAggregate.{bitsFor, keysFor}

  private val fpp = 0.03
  // Small enough that a few hundred keys make the buffer give up on exact counting: the hashes
  // are kept while they take at most the largest filter's bytes, 16 bytes each.
  private val maxBits = 8L * 16 * 100
  private val maxHashes = 100

  private def hashes(count: Int, seed: Long): Seq[Long] = {
    val random = new Random(seed)
    Seq.fill(count)(random.nextLong())
  }

  private def buffer(keys: Seq[Long], bits: Long = maxBits): DriverKeyHashes = {
    val buffer = new DriverKeyHashes(fpp, bits)
    keys.foreach(buffer.add)
    buffer
  }

  private def bytesOf(filter: BloomFilter): Seq[Byte] = {
    val out = new ByteArrayOutputStream()
    filter.writeTo(out)
    out.toByteArray.toSeq
  }

  /** The bits a BloomFilter of `bits` really has: it rounds up to whole longs. */
  private def allocated(bits: Long): Long = (bits + 63) / 64 * 64

  test("bitsFor grows with the keys and the precision, and is 64 at least") {
    assert(bitsFor(0, fpp) == 64 && bitsFor(1, fpp) == 64)
    assert(bitsFor(1000, fpp) < bitsFor(2000, fpp))
    assert(bitsFor(1000, 0.01) > bitsFor(1000, fpp))
    // The textbook size: n * ln(1/p) / ln(2)^2, about 7.3 bits per key at 3%.
    assert(math.abs(bitsFor(1000000, fpp) - 1000000 * 7.298) < 1000)
  }

  test("keysFor is the inverse of bitsFor: the keys the largest filter holds at its rate") {
    for (bits <- Seq(1L << 12, 1L << 20, 64L << 20)) {
      val keys = keysFor(bits, fpp)
      assert(math.abs(bitsFor(keys, fpp) - bits).toDouble / bits < 0.001, s"$bits bits hold $keys keys")
    }
  }

  test("the filter is sized for the distinct keys seen, however often each one repeats") {
    val keys = hashes(80, seed = 1)
    val once = buffer(keys).toBloomFilter
    val repeated = buffer(Seq.fill(5)(keys).flatten).toBloomFilter
    assert(once.bitSize == allocated(bitsFor(80, fpp)))
    assert(repeated.bitSize == once.bitSize)
  }

  test("a driver with no keys gets the smallest filter, which lets nothing through") {
    val filter = buffer(Nil).toBloomFilter
    assert(filter.bitSize == 64)
    assert(hashes(1000, seed = 2).forall(!filter.mightContainLong(_)))
  }

  test("no key seen is ever filtered out, below and above the exact-count bound") {
    for (count <- Seq(50, 500)) {
      val keys = hashes(count, seed = count)
      val filter = buffer(keys).toBloomFilter
      assert(keys.forall(filter.mightContainLong), s"$count keys")
    }
  }

  test("past the exact-count bound the buffer becomes the largest filter, of exactly maxBits") {
    val atBound = buffer(hashes(maxHashes, seed = 3)).toBloomFilter
    assert(atBound.bitSize == allocated(bitsFor(maxHashes, fpp)))
    val pastBound = buffer(hashes(maxHashes + 1, seed = 3)).toBloomFilter
    assert(pastBound.bitSize == maxBits)
  }

  test("the filter never exceeds maxBits, even when the exact count asks for more") {
    val tiny = 1e-40 // about 192 bits a key: 100 keys would need 19,000 bits
    val keys = hashes(maxHashes, seed = 4)
    val strict = new DriverKeyHashes(tiny, maxBits)
    keys.foreach(strict.add)
    assert(bitsFor(maxHashes, tiny) > maxBits)
    assert(strict.toBloomFilter.bitSize == maxBits)
  }

  test("the false positive rate stays near the configured one") {
    val keys = hashes(5000, seed = 5)
    val filter = buffer(keys, bits = 64L << 20).toBloomFilter
    val others = hashes(100000, seed = 6)
    val rate = others.count(filter.mightContainLong).toDouble / others.size
    assert(rate < fpp * 1.5, s"false positive rate $rate")
  }

  test("merging two exact buffers gives the filter of their union") {
    val left = hashes(40, seed = 7)
    val right = hashes(30, seed = 8) ++ left.take(10)
    val merged = buffer(left).merge(buffer(right)).toBloomFilter
    assert(merged.bitSize == allocated(bitsFor(70, fpp)))
    assert((left ++ right).forall(merged.mightContainLong))
  }

  test("merging with a buffer that became the largest filter makes the result the largest filter") {
    val small = hashes(10, seed = 9)
    val large = hashes(maxHashes * 3, seed = 10)
    for ((a, b) <- Seq((small, large), (large, small))) {
      val merged = buffer(a).merge(buffer(b)).toBloomFilter
      assert(merged.bitSize == maxBits)
      assert((a ++ b).forall(merged.mightContainLong))
    }
  }

  test("a buffer survives serialisation, as hashes and as the largest filter") {
    for (count <- Seq(0, 60, maxHashes * 2)) {
      val original = buffer(hashes(count, seed = 11))
      val restored = DriverKeyHashes(fpp, maxBits, original.toBytes)
      assert(bytesOf(restored.toBloomFilter) == bytesOf(original.toBloomFilter), s"$count keys")
    }
  }

  test("the aggregate hashes longs, skips null hashes and returns the serialized filter") {
    val aggregate = DriverKeysBloomFilterAggregate(BoundReference(0, LongType, nullable = true), fpp, maxBits)
    assert(aggregate.checkInputDataTypes().isSuccess)
    val partial = Seq(Seq[Any](5L, null, 7L), Seq[Any](9L)).map { rows =>
      rows.foldLeft(aggregate.createAggregationBuffer())((b, v) => aggregate.update(b, InternalRow(v)))
    }
    val merged = aggregate.merge(partial(0), aggregate.deserialize(aggregate.serialize(partial(1))))
    val bytes = aggregate.eval(merged).asInstanceOf[Array[Byte]]
    val filter = BloomFilter.readFrom(new ByteArrayInputStream(bytes))
    assert(Seq(5L, 7L, 9L).forall(filter.mightContainLong))
    assert(filter.bitSize == allocated(bitsFor(3, fpp)))
    val onInts = aggregate.copy(child = BoundReference(0, IntegerType, nullable = true))
    assert(onInts.checkInputDataTypes().isFailure)
  }
}
