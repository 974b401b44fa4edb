"""The `dbt-multijoin jar` and `extension` commands: a stable interface for tools outside the repo."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dbt_multijoin import EXTENSION_CLASS, __version__
from dbt_multijoin.jar import CHECKOUT_SOURCES, installed_spark


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "dbt_multijoin.cli", *args], capture_output=True, text=True, timeout=600
    )


def test_jar_prints_only_the_absolute_path_of_an_existing_jar():
    result = cli("jar")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    jar = Path(lines[0])
    assert jar.is_absolute() and jar.is_file()
    spark = installed_spark()  # the pyspark of this run: 3.5 with Scala 2.12, 4.x with 2.13
    assert jar.name == f"dbt-multijoin-spark{spark.spark_minor}_{spark.scala_binary}-{__version__}.jar"
    assert spark.scala_binary == ("2.12" if spark.spark_minor == "3.5" else "2.13")


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


def test_jar_is_rebuilt_only_when_a_source_changes(source_copy):
    options, sources = source_copy
    first = cli("jar", *options)
    assert first.returncode == 0, first.stderr
    jar = Path(first.stdout.strip())
    built = jar.stat().st_mtime_ns
    again = cli("jar", *options)
    assert again.stdout == first.stdout and jar.stat().st_mtime_ns == built
    conf = next(sources.rglob("MultiJoinConf.scala"))
    conf.write_text(conf.read_text() + "\n// a change\n")
    changed = cli("jar", *options)
    assert changed.returncode == 0, changed.stderr
    assert jar.stat().st_mtime_ns != built


def test_jar_compile_error_exits_non_zero_with_the_compiler_message(source_copy):
    options, sources = source_copy
    broken = next(sources.rglob("MultiJoinConf.scala"))
    broken.write_text(broken.read_text().replace("object MultiJoinConf {", "object MultiJoinConf { val x: Int = \"no\""))
    result = cli("jar", *options)
    assert result.returncode != 0
    assert result.stdout == ""
    assert "MultiJoinConf.scala" in result.stderr and "type mismatch" in result.stderr
