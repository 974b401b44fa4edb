"""Locate the Spark extension jar.

Two ways to get a jar, one per kind of installation:
- an installed wheel ships one ready jar per Spark minor in `dbt_multijoin/jars/` (put there by
  `scripts/dist.sh`), so it needs neither the sources nor a compiler, nor pyspark;
- a source checkout compiles `jvm/src` for the installed pyspark when a source changed, with the
  build's own tooling, `buildtools/jar_build.py`, which sits next to this package in the checkout
  and never ships with it.
`extension_jar()` picks the right one for the pyspark of this environment.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from dbt_multijoin import __version__
from dbt_multijoin.errors import JarBuildError, JarNotFoundError, PysparkNotInstalledError

_PACKAGE_DIR = Path(__file__).resolve().parent
# In a checkout the package sits next to jvm/ and the build's tooling, buildtools/; installed
# from a wheel, neither exists.
_CHECKOUT_BUILD = _PACKAGE_DIR.parent / "buildtools"
_CHECKOUT_SOURCES = _PACKAGE_DIR.parent / "jvm" / "src" / "main" / "scala"
SHIPPED_JARS = _PACKAGE_DIR / "jars"

_JAR_NAME = re.compile(r"dbt-multijoin-spark(\d+\.\d+)_(\d+\.\d+)-(.+)\.jar")


def spark_minor(version: str) -> str:
    """The Spark minor of a version string, its first two numbers (a jar serves one minor)."""
    return ".".join(version.split(".")[:2])


@dataclass(frozen=True)
class SparkInstall:
    home: Path  # the pyspark directory, with jars/ and bin/
    spark_version: str  # major.minor.patch
    scala_binary: str  # e.g. 2.12

    @classmethod
    def from_home(cls, home: Path | str) -> SparkInstall:
        """The Spark in `home`: a pyspark directory, or a directory holding one (`pip install --target`)."""
        home = Path(home).resolve()
        if not (home / "jars").is_dir() and (home / "pyspark" / "jars").is_dir():
            home = home / "pyspark"
        for jar in (home / "jars").glob("spark-core_*.jar"):
            match = re.fullmatch(r"spark-core_(\d+\.\d+)-(\d+\.\d+\.\d+).*\.jar", jar.name)
            if match:
                return cls(home, spark_version=match.group(2), scala_binary=match.group(1))
        raise JarBuildError(f"no spark-core jar under {home / 'jars'}: not a Spark home, or an incomplete pyspark")

    @property
    def jars(self) -> Path:
        return self.home / "jars"

    @property
    def spark_minor(self) -> str:
        return spark_minor(self.spark_version)


def installed_spark() -> SparkInstall:
    """The Spark that the pyspark of this environment brings (found without importing it)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        shipped = shipped_jars()
        raise PysparkNotInstalledError(
            "pyspark is not installed in this environment: install it (pip install 'dbt-multijoin[spark]')"
            + (f", or name the Spark version with --spark MINOR (shipped: {', '.join(shipped)})" if shipped else "")
        )
    return SparkInstall.from_home(spec.submodule_search_locations[0])


def jar_name(spark: SparkInstall) -> str:
    return f"dbt-multijoin-spark{spark.spark_minor}_{spark.scala_binary}-{__version__}.jar"


# --- shipped jars (an installed wheel) ---------------------------------------------------------


def shipped_jars(directory: Path = SHIPPED_JARS) -> dict[str, Path]:
    """The ready jars of this installation by Spark minor ("3.5": path), oldest minor first."""
    jars = {}
    for jar in directory.glob("*.jar"):
        match = _JAR_NAME.fullmatch(jar.name)
        if match and match.group(3) == __version__:
            jars[match.group(1)] = jar
    return dict(sorted(jars.items(), key=lambda item: tuple(map(int, item[0].split(".")))))


def shipped_jar(spark_minor: str) -> Path:
    """The ready jar for Spark `spark_minor` (e.g. "4.3") that ships with this installation."""
    jars = shipped_jars()
    if spark_minor in jars:
        return jars[spark_minor]
    if not jars:
        raise JarNotFoundError(
            f"no jar for Spark {spark_minor}: this installation ships no jars (a source checkout compiles "
            "them: `dbt-multijoin jar` for the installed pyspark; scripts/dist.sh builds a wheel with all of them)"
        )
    raise JarNotFoundError(f"no jar for Spark {spark_minor}; this installation ships jars for Spark {', '.join(jars)}")


def is_checkout() -> bool:
    """Whether this package runs from a source checkout, which compiles its jars."""
    return (_CHECKOUT_BUILD / "jar_build.py").is_file() and _CHECKOUT_SOURCES.is_dir()


def checkout_build() -> ModuleType:
    """The checkout's `buildtools.jar_build`, which compiles the jar. Loaded from the directory next
    to this package: an editable install puts only `dbt_multijoin` on the import path."""
    if not is_checkout():
        raise JarBuildError(
            "compiling needs a source checkout; an installed package ships ready jars (dbt-multijoin jar --spark MINOR)"
        )
    package = sys.modules.get("buildtools")
    if package is None:
        spec = importlib.util.spec_from_file_location(
            "buildtools", _CHECKOUT_BUILD / "__init__.py", submodule_search_locations=[str(_CHECKOUT_BUILD)]
        )
        package = importlib.util.module_from_spec(spec)
        sys.modules["buildtools"] = package
        spec.loader.exec_module(package)
    if [Path(path).resolve() for path in package.__path__] != [_CHECKOUT_BUILD]:
        raise JarBuildError(f"another buildtools package is imported ({list(package.__path__)}), not {_CHECKOUT_BUILD}")
    return importlib.import_module("buildtools.jar_build")


def extension_jar() -> Path:
    """The jar for the installed pyspark: compiled from the sources in a checkout when one changed,
    the shipped one for its Spark minor otherwise."""
    if is_checkout():
        return checkout_build().ensure_jar()
    return shipped_jar(installed_spark().spark_minor)
