"""The built package, for real: `scripts/dist.sh` makes an sdist and a wheel that ship one ready
jar per supported Spark minor (spark-versions.toml) and none of the build's tooling; the wheel,
installed into a fresh virtualenv outside the checkout and without pyspark, prints those jars and
a thrift profile, and refuses to compile.

Cost: dist.sh compiles each jar once into jvm/target (fingerprinted: later runs reuse it); the
virtualenv gets dbt from pip's cache and no pyspark.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

from buildtools import versions
from dbt_multijoin import __version__
from testkit import REPO, SPARK_VERSIONS

SUPPORTED = {minor.minor: minor for minor in versions.load()}
MINORS = {minor: entry.patch for minor, entry in SUPPORTED.items()}
EXTENSION = "org/apache/spark/sql/multijoin/MultiJoinExtensions.class"
BUILD_INFO = "org/apache/spark/sql/multijoin/BuildInfo$.class"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(["bash", "scripts/dist.sh", str(out)], cwd=REPO, capture_output=True, text=True, timeout=3600)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = out.glob("dbt_multijoin-*.whl")
    (sdist,) = out.glob("dbt_multijoin-*.tar.gz")
    return wheel, sdist


@pytest.fixture(scope="module")
def installed(dist, tmp_path_factory):
    """Runs the `dbt-multijoin` of a fresh virtualenv with the wheel and no pyspark, from a
    directory outside the checkout."""
    wheel, _ = dist
    root = tmp_path_factory.mktemp("installed")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-c", REPO / "constraints" / "spark-3.5.txt", wheel],
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stdout + pip.stderr
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}

    def run(*args: str, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [venv / "bin" / "dbt-multijoin", *args], cwd=root, capture_output=True, text=True, timeout=300,
            env={**env, "PYTHONPATH": str(pythonpath)} if pythonpath else env,
        )  # fmt: skip

    no_pyspark = subprocess.run([venv / "bin" / "python", "-c", "import pyspark"], capture_output=True)
    assert no_pyspark.returncode != 0, "the fresh virtualenv has pyspark"
    run.venv = venv
    return run


def test_sdist_carries_the_jars_and_the_scala_sources(dist):
    _, sdist = dist
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    jars = {name for name in names if name.startswith("dbt_multijoin/jars/")}
    assert jars == {f"dbt_multijoin/jars/{jar_name(minor)}" for minor in MINORS}
    assert "jvm/src/main/scala/org/apache/spark/sql/multijoin/MultiJoinExtensions.scala" in names
    assert any(name.startswith("jvm/src/shims/") for name in names)


def test_wheel_ships_the_same_jars_and_no_sources(dist):
    wheel, sdist = dist
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        wheel_jars = {name: archive.read(name) for name in names if name.endswith(".jar")}
    with tarfile.open(sdist) as archive:
        sdist_jars = {
            member.name.split("/", 1)[1]: archive.extractfile(member).read()
            for member in archive.getmembers()
            if member.name.endswith(".jar")
        }
    assert wheel_jars == sdist_jars  # byte for byte: the wheel is built from the sdist
    assert not any(name.endswith(".scala") for name in names)
    # What users run only: the package, no build tooling (buildtools/) and no test helpers.
    assert {name.split("/")[0] for name in names if name.endswith(".py")} == {"dbt_multijoin"}


@pytest.mark.parametrize("minor", sorted(MINORS))
def test_installed_without_pyspark_prints_the_shipped_jar(installed, minor):
    result = installed("jar", "--spark", minor)
    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.splitlines()
    jar = Path(line)
    assert jar.is_file() and jar.name == jar_name(minor)
    assert installed.venv in jar.parents  # inside the installed package, not the checkout
    with zipfile.ZipFile(jar) as archive:
        assert EXTENSION in archive.namelist()
        build_info = archive.read(BUILD_INFO)
    # BuildInfo.builtForSpark is the exact version the jar was compiled against.
    assert MINORS[minor].encode() in build_info
    assert not [other for other in SPARK_VERSIONS if other != MINORS[minor] and other.encode() in build_info]


def test_unknown_minor_is_an_error_listing_the_shipped_ones(installed):
    result = installed("jar", "--spark", "3.4")
    assert result.returncode == 1 and result.stdout == ""
    assert f"ships jars for Spark {', '.join(sorted(MINORS))}" in result.stderr


def test_jar_without_pyspark_says_to_pass_spark(installed):
    result = installed("jar")
    assert result.returncode == 1 and result.stdout == ""
    assert "pyspark is not installed" in result.stderr and "--spark MINOR" in result.stderr


def test_jar_with_a_pyspark_prints_the_shipped_jar_of_its_minor(installed):
    minor = next(m for m in SUPPORTED.values() if m.pyspark_home and (REPO / m.spark_home / "jars").is_dir())
    result = installed("jar", pythonpath=REPO / minor.pyspark_home)
    assert result.returncode == 0, result.stderr
    assert result.stdout == installed("jar", "--spark", minor.minor).stdout


def test_installed_package_does_not_compile(installed):
    minor = next(m for m in SUPPORTED.values() if m.pyspark_home and (REPO / m.spark_home / "jars").is_dir())
    result = installed("jar", "--spark-home", str(REPO / minor.spark_home))
    assert result.returncode == 1 and result.stdout == ""
    assert "compiling needs a source checkout" in result.stderr and "--spark MINOR" in result.stderr


def test_thrift_profile_without_pyspark(installed):
    result = installed("profile", "--method", "thrift", "--port", "10301", "--schema", "s")
    assert result.returncode == 0, result.stderr
    output = yaml.safe_load(result.stdout)["multijoin"]["outputs"]["thrift"]
    assert output["method"] == "thrift" and output["port"] == 10301
    assert "--jars \"$(dbt-multijoin jar --spark" in result.stdout
    session = installed("profile", "--method", "session")
    assert session.returncode == 1 and "pyspark is not installed" in session.stderr


def jar_name(minor: str) -> str:
    return f"{SUPPORTED[minor].jar_prefix}-{__version__}.jar"
