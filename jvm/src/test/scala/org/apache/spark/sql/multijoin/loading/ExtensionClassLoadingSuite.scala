package org.apache.spark.sql.multijoin.loading

import org.apache.spark.sql.multijoin.{MultiJoinConf, MultiJoinExtensions}
import org.apache.spark.sql.multijoin.bloom.DriverKeyHashes
import org.apache.spark.sql.multijoin.execution.MultiJoinScanner
import org.apache.spark.sql.multijoin.logical.MultiJoin
import org.apache.spark.sql.multijoin.recognition.ChainPatterns
import org.apache.spark.sql.multijoin.storage.KeyGroupedInputExec
import org.scalatest.funsuite.AnyFunSuite

/**
 * The classes ExtensionClassLoading loads while the class loader that reads the jar is still open
 * (a Thrift server closes it with the first client session; tests/test_thrift_loading.py runs
 * that end to end): every class of the extension, whichever part of the tree it lives in.
 */
class ExtensionClassLoadingSuite extends AnyFunSuite {

  private lazy val names = ExtensionClassLoading.extensionClassNames

  test("the classes of every part of the extension are loaded ahead, not only those of the loader's own package") {
    val ofEachPart: Seq[Class[_]] = Seq(classOf[MultiJoinExtensions], MultiJoinConf.getClass, classOf[MultiJoin],
      ChainPatterns.getClass, classOf[DriverKeyHashes], classOf[MultiJoinScanner], classOf[KeyGroupedInputExec],
      ExtensionClassLoading.getClass)
    ofEachPart.foreach(c => assert(names.contains(c.getName), c.getName))
  }

  test("only the extension's own classes, each a class that loads") {
    assert(names.forall(_.startsWith("org.apache.spark.sql.multijoin.")), names.filterNot(_.startsWith("org.apache.spark.sql.multijoin.")))
    assert(!names.exists(_.endsWith("Suite")), "the unit tests are not part of the extension")
    names.foreach(name => Class.forName(name, false, getClass.getClassLoader))
    ExtensionClassLoading.loadAllClasses()
  }
}
