package org.apache.spark.sql.multijoin.loading

import java.io.File
import java.nio.file.{Files, Path, Paths}
import java.util.jar.JarFile

import org.apache.spark.sql.multijoin.MultiJoinExtensions

/**
 * Loads every class of the extension while the class loader that reads our jar is still open.
 *
 * Why: a Spark Thrift Server started with `--jars` (likewise `spark.jars` or `--packages`) reads
 * our jar through spark-submit's `MutableURLClassLoader`. Each statement of a Thrift session sets
 * the Hive session's class loader to Spark's shared `NonClosableMutableURLClassLoader`, whose
 * parent is that `MutableURLClassLoader`; when the client closes the session, Hive's
 * `SessionState.close` closes every loader from the session's one up to (not including) the
 * application class loader: the shared loader ignores it, but spark-submit's loader is closed,
 * and our jar with it. A class it loaded before stays usable (a loader answers it from its cache),
 * but a class of ours needed for the first time after that fails with `NoClassDefFoundError`.
 *
 * `MultiJoinExtensions.apply` calls [[loadAllClasses]] when Spark builds the server's session, so
 * before any client session exists, let alone closed. The list comes from the jar itself: every
 * class under the package of [[MultiJoinExtensions]], its sub-packages included, so every class is
 * covered, whatever we add or move later; and it is harmless where nothing is ever closed (our jar
 * on the application class path: `--driver-class-path`, `$SPARK_HOME/jars`).
 */
private[multijoin] object ExtensionClassLoading {

  /** Loads (without initialising) every class of our package; does the work once per loader. */
  def loadAllClasses(): Unit = loadedClassCount

  private lazy val loadedClassCount: Int = {
    val loader = getClass.getClassLoader
    val names = extensionClassNames
    // Loading is enough: initialising a class later reads nothing from the jar.
    names.foreach(name => Class.forName(name, false, loader))
    names.size
  }

  /** The names of every class of the extension, as [[loadAllClasses]] loads them. */
  private[loading] def extensionClassNames: Seq[String] = classNames(codeSource)

  /** Where the extension's classes sit in the jar: the root package's path, as a prefix. */
  private val packagePath = {
    val root = classOf[MultiJoinExtensions].getName
    root.take(root.lastIndexOf('.') + 1).replace('.', '/')
  }

  /** The jar, or the directory of class files, that our classes were loaded from. */
  private def codeSource: File = {
    val source = Option(getClass.getProtectionDomain.getCodeSource).flatMap(s => Option(s.getLocation))
    source.map(url => Paths.get(url.toURI).toFile).getOrElse(throw new IllegalStateException(
      s"${getClass.getName}: the class loader ${getClass.getClassLoader} does not say where our " +
        "classes come from, so they cannot be loaded ahead of a Thrift session's end"))
  }

  /** The names of the classes under our package in `source` (a jar or a directory). */
  private def classNames(source: File): Seq[String] = {
    val paths =
      if (source.isDirectory) filesUnder(source.toPath.resolve(packagePath)).map(p => relative(source, p))
      else jarEntries(source)
    paths.filter(p => p.startsWith(packagePath) && p.endsWith(".class"))
      .map(p => p.stripSuffix(".class").replace('/', '.'))
  }

  private def jarEntries(jar: File): Seq[String] = {
    val file = new JarFile(jar)
    try {
      val entries = file.entries()
      val names = Seq.newBuilder[String]
      while (entries.hasMoreElements) names += entries.nextElement().getName
      names.result()
    } finally {
      file.close()
    }
  }

  private def filesUnder(directory: Path): Seq[Path] = {
    val stream = Files.walk(directory)
    try {
      val files = Seq.newBuilder[Path]
      stream.iterator().forEachRemaining(p => if (Files.isRegularFile(p)) files += p)
      files.result()
    } finally {
      stream.close()
    }
  }

  private def relative(root: File, file: Path): String =
    root.toPath.relativize(file).toString.replace(File.separatorChar, '/')
}
