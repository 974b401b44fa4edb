"""The `dbt-multijoin jar` and `extension` commands: a stable interface for tools outside the repo.
In a checkout `jar` builds through jvm/pom.xml (buildtools/jar_build.py); that the pom's profiles
say what the build is told is tests/test_versions.py's."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from buildtools import versions
from buildtools.jar_build import CHECKOUT_SOURCES
from dbt_multijoin import EXTENSION_CLASS, __version__
from dbt_multijoin.jar import installed_spark


def cli(*args, cwd=None, env=None):
    return subprocess.run(
        [sys.executable, "-m", "dbt_multijoin.cli", *args], capture_output=True, text=True, timeout=600, cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def test_jar_prints_only_the_absolute_path_of_an_existing_jar(tmp_path):
    # Run outside the checkout, where only the installed package is importable: in a checkout the
    # command still finds the build's tooling next to the package.
    result = cli("jar", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    jar = Path(lines[0])
    assert jar.is_absolute() and jar.is_file()
    spark = installed_spark()  # the pyspark of this run: 3.5 with Scala 2.12, 4.x with 2.13
    assert jar.name == f"dbt-multijoin-spark{spark.spark_minor}_{spark.scala_binary}-{__version__}.jar"
    assert spark.scala_binary == next(m.scala_binary for m in versions.load() if m.minor == spark.spark_minor)
    with zipfile.ZipFile(jar) as archive:
        build_info = archive.read("org/apache/spark/sql/multijoin/BuildInfo$.class")
    assert __version__.encode() in build_info and spark.spark_version.encode() in build_info


def test_extension_prints_the_class_name():
    result = cli("extension")
    assert result.returncode == 0
    assert result.stdout == EXTENSION_CLASS + "\n"


@pytest.fixture
def source_copy(tmp_path):
    """A copy of jvm/src to change, and the `jar` arguments that compile it into tmp_path."""
    sources = tmp_path / "src"
    shutil.copytree(CHECKOUT_SOURCES, sources)
    return ["--sources", str(sources), "--target", str(tmp_path / "target")], sources


def jar_classes(jar: Path) -> set[str]:
    with zipfile.ZipFile(jar) as archive:
        return {name for name in archive.namelist() if name.endswith(".class")}


def test_jar_is_rebuilt_only_when_a_source_changes(source_copy, tmp_path):
    options, sources = source_copy
    cache = {"MULTIJOIN_JAR_CACHE": str(tmp_path / "jar-cache")}  # empty: the first build compiles
    extra = sources / "main" / "scala" / "org" / "apache" / "spark" / "sql" / "multijoin" / "Extra.scala"
    extra.write_text("package org.apache.spark.sql.multijoin\n\nobject Extra\n")
    first = cli("jar", *options, env=cache)
    assert first.returncode == 0, first.stderr
    jar = Path(first.stdout.strip())
    built = jar.stat().st_mtime_ns
    assert "org/apache/spark/sql/multijoin/Extra$.class" in jar_classes(jar)
    again = cli("jar", *options, env=cache)
    assert again.stdout == first.stdout and jar.stat().st_mtime_ns == built
    # Another checkout of the same sources takes the jar from the cache: no Maven build runs there.
    other = tmp_path / "other"
    shutil.copytree(sources, other / "src")
    taken = cli("jar", "--sources", str(other / "src"), "--target", str(other / "target"), env=cache)
    assert taken.returncode == 0, taken.stderr
    assert Path(taken.stdout.strip()).read_bytes() == jar.read_bytes()
    assert not list((other / "target").glob("spark-*/classes")), "the other checkout compiled"
    # A deleted source is a change too, and its classes must not outlive it in the jar.
    extra.unlink()
    changed = cli("jar", *options, env=cache)
    assert changed.returncode == 0, changed.stderr
    assert jar.stat().st_mtime_ns != built
    assert not [name for name in jar_classes(jar) if "Extra" in name]


def test_jar_compile_error_exits_non_zero_with_the_compiler_message(source_copy):
    options, sources = source_copy
    broken = next(sources.rglob("MultiJoinConf.scala"))
    broken.write_text(broken.read_text().replace("object MultiJoinConf {", "object MultiJoinConf { val x: Int = \"no\""))
    result = cli("jar", *options, env={"MULTIJOIN_JAR_CACHE": "off"})
    assert result.returncode != 0
    assert result.stdout == ""
    assert "MultiJoinConf.scala" in result.stderr and "type mismatch" in result.stderr
