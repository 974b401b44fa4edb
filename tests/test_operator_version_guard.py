"""One jar per Spark minor: a jar compiled for another Spark minor refuses to start a session,
with a message that names both versions and what to do.

The test starts a real session on this venv's Spark with the jar of the other Spark line (the
3.5 jar under Spark 4, the 4.x jar under Spark 3.5), in a subprocess, built by the other venv.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyspark
import pytest

from dbt_multijoin.jar import spark_minor
from testkit import REPO

VENVS = {"3": REPO / ".venv", "4": REPO / ".venv-spark4"}

START_SESSION = """
import sys
from pyspark.sql import SparkSession
SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false") \\
    .config("spark.jars", sys.argv[1]) \\
    .config("spark.sql.extensions", "org.apache.spark.sql.multijoin.MultiJoinExtensions") \\
    .getOrCreate()
print("SESSION STARTED")
"""


@pytest.fixture(scope="module")
def other_line_jar() -> tuple[Path, str]:
    """The jar the other venv builds for its Spark, and that Spark's version."""
    other = VENVS["3" if pyspark.__version__.startswith("4") else "4"]
    if not (other / "bin" / "dbt-multijoin").exists():
        pytest.skip(f"no venv with the other Spark line at {other}")
    jar = subprocess.run(
        [str(other / "bin" / "dbt-multijoin"), "jar"], capture_output=True, text=True, check=True
    ).stdout.strip()
    version = subprocess.run(
        [str(other / "bin" / "python"), "-c", "import pyspark; print(pyspark.__version__)"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    return Path(jar), version


def test_a_jar_built_for_another_spark_minor_fails_the_session_with_what_to_do(other_line_jar, tmp_path):
    jar, built_for = other_line_jar
    result = subprocess.run(
        [sys.executable, "-c", START_SESSION, str(jar)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "SESSION STARTED" not in output, output
    running = spark_minor(pyspark.__version__)
    assert f"built for Spark {built_for}" in output, output
    assert f"this session runs Spark {pyspark.__version__}" in output, output
    assert f"dbt-multijoin jar --spark {running}" in output, output
