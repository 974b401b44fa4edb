package org.apache.spark.sql.multijoin.bloom

/** A set of longs in one primitive array, open addressing with linear probing, at most half
 * full. 0 marks an empty slot, so whether 0 itself is in the set is kept apart. */
final class LongHashSet private (slots: Array[Long], containsZero: Boolean) extends Serializable {
  private val mask = slots.length - 1

  def contains(value: Long): Boolean = {
    if (value == 0L) return containsZero
    var i = LongHashSet.slotOf(value, mask)
    while (true) {
      val slot = slots(i)
      if (slot == value) return true
      if (slot == 0L) return false
      i = (i + 1) & mask
    }
    false
  }
}

object LongHashSet {
  // The set's members are hashes already (xxhash64), but a caller may pass any longs: mix the
  // high bits into the slot index (the murmur3 finalizer's first steps).
  private def slotOf(value: Long, mask: Int): Int = {
    val mixed = (value ^ (value >>> 33)) * 0xff51afd7ed558ccdL
    ((mixed ^ (mixed >>> 33)).toInt) & mask
  }

  def apply(values: Array[Long]): LongHashSet = {
    var capacity = 16
    while (capacity < values.length * 2) capacity <<= 1
    val slots = new Array[Long](capacity)
    val mask = capacity - 1
    var containsZero = false
    values.foreach { value =>
      if (value == 0L) containsZero = true
      else {
        var i = slotOf(value, mask)
        while (slots(i) != 0L && slots(i) != value) i = (i + 1) & mask
        slots(i) = value
      }
    }
    new LongHashSet(slots, containsZero)
  }
}
