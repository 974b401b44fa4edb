package org.apache.spark.sql.multijoin

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.QueryExecution
import org.apache.spark.sql.multijoin.shim.SparkShim
import org.scalatest.{BeforeAndAfterAll, Suite}

/**
 * A local SparkSession with the extension loaded as users load it (spark.sql.extensions), for the
 * suites that plan or run queries. The extension's classes come from the build's own class
 * directory, the Spark from the jars of the minor under test.
 */
trait ExtensionSession extends BeforeAndAfterAll { self: Suite =>

  protected var spark: SparkSession = _

  /** Settings of the session on top of a small local one's. */
  protected def sessionConfs: Map[String, String] = Map.empty

  override def beforeAll(): Unit = {
    super.beforeAll()
    val builder = SparkSession.builder()
      .master("local[2]")
      .appName(getClass.getSimpleName)
      .config("spark.ui.enabled", "false")
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1")
      .config("spark.sql.shuffle.partitions", "4")
      .config("spark.sql.extensions", classOf[MultiJoinExtensions].getName)
    spark = sessionConfs.foldLeft(builder) { case (b, (key, value)) => b.config(key, value) }.getOrCreate()
  }

  override def afterAll(): Unit = {
    try {
      if (spark != null) spark.stop()
      SparkSession.clearActiveSession()
      SparkSession.clearDefaultSession()
    } finally super.afterAll()
  }

  /** The query `sql` in this session, planned on demand and not run. */
  protected def query(sql: String): QueryExecution = SparkShim.unexecutedQuery(sql)

  /** `body` with the session's confs `settings`, the previous values restored after. */
  protected def withConfs[T](settings: (String, String)*)(body: => T): T = {
    val previous = settings.map { case (key, _) => key -> spark.conf.getOption(key) }
    settings.foreach { case (key, value) => spark.conf.set(key, value) }
    try body
    finally previous.foreach {
      case (key, Some(value)) => spark.conf.set(key, value)
      case (key, None) => spark.conf.unset(key)
    }
  }

  /** Temporary views, one a `name -> query`. */
  protected def views(definitions: (String, String)*): Unit =
    definitions.foreach { case (name, sql) => spark.sql(s"CREATE OR REPLACE TEMPORARY VIEW $name AS $sql") }
}
