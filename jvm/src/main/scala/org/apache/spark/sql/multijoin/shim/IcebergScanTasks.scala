package org.apache.spark.sql.multijoin.shim

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.spark.sql.connector.read.InputPartition

/** Files a scan reads: how many, and their bytes. */
private[multijoin] case class ScannedFiles(files: Long, bytes: Long)

/**
 * The files an Iceberg scan's input partitions will read, from its scan tasks: the one place
 * that knows Iceberg's classes, by reflection (the jar is built against Spark's jars only, and
 * runs with or without Iceberg on the class path); `SparkShim.icebergScanFiles` hands it out.
 * An Iceberg input partition (`SparkInputPartition`) holds a `ScanTaskGroup` (`taskGroup()`) of
 * tasks (`tasks()`); a content task (a data file's split, a changelog's added or deleted rows)
 * has `file()` and delete files to apply (`deletes()`, `existingDeletes()`, `addedDeletes()`).
 * Each data or delete file counts once (by `location()`, before Iceberg 1.7 `path()`), at its
 * whole size (`fileSizeInBytes()`: a split's `length()` leaves out the bytes before the first
 * row group). A task that is not a content task counts by its own `filesCount()` and
 * `sizeBytes()`.
 */
private[shim] object IcebergScanTasks {
  private val deleteLists = Seq("deletes", "existingDeletes", "addedDeletes")

  /** The files of `partitions`, or None if one of them is not an Iceberg partition. */
  def files(partitions: Seq[InputPartition]): Option[ScannedFiles] = try {
    val files = mutable.Map[String, Long]()
    var otherFiles = 0L
    var otherBytes = 0L
    for (partition <- partitions) {
      val tasks = call(call(partition, "taskGroup"), "tasks").asInstanceOf[java.util.Collection[AnyRef]]
      tasks.forEach { task =>
        method(task, "file") match {
          case Some(file) =>
            add(files, file.invoke(task))
            for (name <- deleteLists; list <- method(task, name)) {
              list.invoke(task).asInstanceOf[java.util.List[AnyRef]].forEach(delete => add(files, delete))
            }
          case None =>
            otherFiles += call(task, "filesCount").asInstanceOf[Int]
            otherBytes += call(task, "sizeBytes").asInstanceOf[Long]
        }
      }
    }
    Some(ScannedFiles(files.size + otherFiles, files.values.sum + otherBytes))
  } catch {
    case NonFatal(_) => None
  }

  /** A data or delete file (a `ContentFile`), by its location, at its whole size. */
  private def add(files: mutable.Map[String, Long], file: AnyRef): Unit =
    files(location(file)) = call(file, "fileSizeInBytes").asInstanceOf[Long]

  private def location(file: AnyRef): String =
    method(file, "location").orElse(method(file, "path")).map(_.invoke(file).toString)
      .getOrElse(throw new NoSuchMethodException(s"${file.getClass.getName}.location()"))

  /** `name()` of `target`'s class; accessible even when declared by a package-private class. */
  private def method(target: AnyRef, name: String): Option[java.lang.reflect.Method] =
    try {
      val found = target.getClass.getMethod(name)
      found.setAccessible(true)
      Some(found)
    } catch {
      case _: NoSuchMethodException => None
    }

  private def call(target: AnyRef, name: String): AnyRef =
    method(target, name).getOrElse(throw new NoSuchMethodException(s"${target.getClass.getName}.$name()"))
      .invoke(target)
}
