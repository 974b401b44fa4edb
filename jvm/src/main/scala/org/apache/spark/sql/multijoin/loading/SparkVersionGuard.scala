package org.apache.spark.sql.multijoin.loading

import org.apache.spark.sql.multijoin.BuildInfo

/**
 * One jar per Spark minor: the extension uses Spark internals that move between minors
 * (3.5, 4.0, 4.1, ...), so a jar compiled for one must not run on another.
 *
 * Spark skips, with only a warning, an extension whose loading throws a class-loading error
 * (NoClassDefFoundError, ClassNotFoundException, ClassCastException), and fails the session on
 * any other exception. A jar compiled for Spark 3.5 (Scala 2.12) under Spark 4 (Scala 2.13)
 * meets a NoClassDefFoundError as soon as it touches a Scala collection, a lambda or a string
 * interpolation. So this object uses none of them: Java strings and concatenation only, and it
 * is checked before anything else of the jar is loaded.
 */
private[multijoin] object SparkVersionGuard {

  /** Throws an IllegalStateException, which fails the session, unless `running` is our minor. */
  def requireBuiltFor(running: String): Unit = {
    val builtFor = BuildInfo.builtForSpark
    if (minor(running) != minor(builtFor)) {
      throw new IllegalStateException("The dbt-multijoin extension jar was built for Spark " +
        builtFor + ", but this session runs Spark " + running + ". A jar works only with the " +
        "Spark minor it was compiled against: use the jar for Spark " + minor(running) +
        " instead (`dbt-multijoin jar --spark " + minor(running) + "` prints its path).")
    }
  }

  /** "4.3" of "4.3.1" (or of "4.3.1-SNAPSHOT"). */
  private def minor(version: String): String = {
    val parts = version.split("\\.")
    if (parts.length < 2) version else parts(0) + "." + parts(1)
  }
}
