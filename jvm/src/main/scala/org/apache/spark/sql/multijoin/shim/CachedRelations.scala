package org.apache.spark.sql.multijoin.shim

import scala.util.Try

import org.apache.spark.sql.execution.CacheManager
import org.apache.spark.sql.execution.columnar.InMemoryRelation

/**
 * The cached relations of a session's cache manager, found by the name CACHE TABLE gave them, by
 * reflection: the manager finds cached data only by a plan that gives the same result, and the
 * plan of a view over an Iceberg changelog does not give it twice (Spark 4.1 resolves the
 * changelog table anew on each reference, and that table has no equality of its own). The list
 * is a private field of the same name on every line. Nothing else of the extension reaches it.
 */
private[shim] object CachedRelations {

  /** The relation cached under `name` (CACHE TABLE's table or view name), if there is one. */
  def named(manager: CacheManager, name: String): Option[InMemoryRelation] = Try {
    val field = classOf[CacheManager].getDeclaredField("cachedData")
    field.setAccessible(true)
    val entries = field.get(manager).asInstanceOf[Iterable[AnyRef]]
    entries.iterator.map(entry => entry.getClass.getMethod("cachedRepresentation").invoke(entry))
      .collect { case relation: InMemoryRelation => relation }
      .find(_.cacheBuilder.tableName.exists(cached => unquoted(cached).equalsIgnoreCase(unquoted(name))))
  }.toOption.flatten

  private def unquoted(name: String): String = name.replace("`", "")
}
