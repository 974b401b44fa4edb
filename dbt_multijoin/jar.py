"""Build and locate the Spark extension jar.

Two ways to get a jar, one per kind of installation:
- a source checkout builds `jvm/src` with the Maven build `jvm/pom.xml`, through its wrapper
  `jvm/mvnw` (which fetches Maven itself: a checkout needs only Python and Java), against the jars
  of the pyspark wheel the jar is for. This module passes the build everything it takes from that
  Spark home and from this package (see `maven_properties`). The jar is rebuilt only when its
  fingerprint (the sources, the build definition, our version, the Spark and Scala versions)
  changes;
- an installed wheel ships one ready jar per Spark minor in `dbt_multijoin/jars/` (put there by
  `scripts/dist.sh`), so it needs neither the sources nor a compiler, nor pyspark.
`extension_jar()` picks the right one for the pyspark of this environment.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from dbt_multijoin import __version__
from dbt_multijoin.errors import JarBuildError, JarNotFoundError, PysparkNotInstalledError

_PACKAGE_DIR = Path(__file__).resolve().parent
# In a checkout the package sits next to jvm/; installed from a wheel, jvm/ does not exist.
CHECKOUT_JVM = _PACKAGE_DIR.parent / "jvm"
CHECKOUT_SOURCES = CHECKOUT_JVM / "src"
CHECKOUT_TARGET = CHECKOUT_JVM / "target"
POM = CHECKOUT_JVM / "pom.xml"
MAVEN_WRAPPER = CHECKOUT_JVM / "mvnw"
SHIPPED_JARS = _PACKAGE_DIR / "jars"

_JAR_NAME = re.compile(r"dbt-multijoin-spark(\d+\.\d+)_(\d+\.\d+)-(.+)\.jar")


def spark_minor(version: str) -> str:
    """The Spark minor of a version string: "4.1" for "4.1.4" (a jar serves one minor)."""
    return ".".join(version.split(".")[:2])


@dataclass(frozen=True)
class SparkInstall:
    home: Path  # the pyspark directory, with jars/ and bin/
    spark_version: str  # e.g. 3.5.9
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

    def jar_version(self, pattern: str) -> str:
        """The version in the name of the one jar of this Spark matching `pattern` (a regex with
        one group, the version)."""
        versions = [match.group(1) for jar in self.jars.glob("*.jar") if (match := re.fullmatch(pattern, jar.name))]
        if len(versions) != 1:
            raise JarBuildError(f"expected one jar named like {pattern} under {self.jars}, found {len(versions)}")
        return versions[0]


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


# --- compiling (a checkout) --------------------------------------------------------------------


def shim_dir(spark: SparkInstall, sources: Path = CHECKOUT_SOURCES, *, base: bool = False) -> Path:
    """A directory of the sources of what differs between Spark versions, under `sources/shims`.
    A build compiles two: the base of `spark`'s line, `spark-<major>` (`base`), which holds what
    the line's minors share, and the `SparkShim` object with what changes from minor to minor,
    in the directory of the newest Spark at or before `spark`'s minor, `spark-<major>.<minor>`
    (Spark 4.0 builds with spark-3.5's, 4.3 with 4.2's): each is written once, for the minor that
    brought it."""
    version = tuple(int(part) for part in spark.spark_minor.split("."))
    shims = sources / "shims"
    if base:
        candidates = [shims / f"spark-{version[0]}"]
    else:
        minors = [d for d in shims.glob("spark-*") if re.fullmatch(r"spark-\d+\.\d+", d.name)]
        since = {tuple(int(part) for part in d.name.removeprefix("spark-").split(".")): d for d in minors}
        candidates = [since[v] for v in sorted(since, reverse=True) if v <= version]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise JarBuildError(f"no shim sources for Spark {spark.spark_version} under {shims}")


def scala_sources(spark: SparkInstall, sources: Path = CHECKOUT_SOURCES) -> list[Path]:
    """The sources of the jar: the common ones (`main/scala`) plus the shim of `spark`'s version, its
    line's base and its `SparkShim` object (`shim_dir`)."""
    common = sources / "main" / "scala"
    if not common.is_dir():
        raise JarBuildError(
            f"no Scala sources under {common}: compiling needs a source checkout; "
            "an installed package ships ready jars (dbt-multijoin jar --spark MINOR)"
        )
    shims = [shim_dir(spark, sources, base=True), shim_dir(spark, sources)] if (sources / "shims").is_dir() else []
    return sorted(common.rglob("*.scala")) + [source for shim in shims for source in sorted(shim.rglob("*.scala"))]


# The jars besides Spark's own that the build compiles against, by the pom property naming each
# one's version: their versions change with Spark's patch releases, so they are read off the
# Spark home, as Spark's and Scala's are.
_VERSIONED_JARS = {
    "scala.version": r"scala-library-(.+)\.jar",
    "kryo.version": r"kryo-shaded-(.+)\.jar",
    "slf4j.version": r"slf4j-api-(.+)\.jar",
}


def build_directory(spark: SparkInstall, target: Path = CHECKOUT_TARGET) -> Path:
    """Where Maven builds the jar for `spark`'s minor under `target`: classes, reports, the jar."""
    return Path(target) / f"spark-{spark.spark_minor}"


def maven_properties(spark: SparkInstall, sources: Path = CHECKOUT_SOURCES, target: Path = CHECKOUT_TARGET) -> dict[str, str]:
    """What `jvm/pom.xml` is told to build the jar for `spark` from `sources` into `target`: every
    version from the Spark home, the shim directories by `shim_dir`'s rule, the package's version."""
    return {
        "revision": __version__,
        "spark.home": str(spark.home),
        "spark.version": spark.spark_version,
        "spark.minor": spark.spark_minor,
        "scala.binary.version": spark.scala_binary,
        **{name: spark.jar_version(pattern) for name, pattern in _VERSIONED_JARS.items()},
        "shim.base.dir": str(shim_dir(spark, sources, base=True)),
        "shim.dir": str(shim_dir(spark, sources)),
        "multijoin.sources": str(sources),
        "multijoin.build.directory": str(build_directory(spark, target)),
    }


def maven_command(spark: SparkInstall, goals: list[str], properties: dict[str, str]) -> list[str]:
    """The command running `goals` of the build for `spark`'s minor (its profile) with `properties`."""
    if not MAVEN_WRAPPER.is_file() or not POM.is_file():
        raise JarBuildError(f"no Maven build at {CHECKOUT_JVM} (pom.xml and mvnw): compiling needs a source checkout")
    profile = f"spark-{spark.spark_minor}"
    if f"<id>{profile}</id>" not in POM.read_text():
        raise JarBuildError(
            f"jvm/pom.xml has no profile {profile}: Spark {spark.spark_version} is not a supported minor "
            "(scripts/spark-versions.sh lists them)"
        )
    return [
        str(MAVEN_WRAPPER),
        "--batch-mode",
        "--no-transfer-progress",
        "--file",
        str(POM),
        f"--activate-profiles={profile}",
        *(f"-D{name}={value}" for name, value in properties.items()),
        *goals,
    ]


def fingerprint(spark: SparkInstall, sources: Path = CHECKOUT_SOURCES, target: Path = CHECKOUT_TARGET) -> str:
    digest = hashlib.sha256()
    digest.update(repr(sorted(maven_properties(spark, sources, target).items())).encode())
    for build_file in (Path(__file__), POM, CHECKOUT_JVM / ".mvn" / "wrapper" / "maven-wrapper.properties"):
        digest.update(build_file.read_bytes() if build_file.is_file() else b"")
    for source in scala_sources(spark, sources):
        digest.update(str(source.relative_to(sources)).encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()


@contextlib.contextmanager
def _build_lock(target: Path) -> Iterator[None]:
    """Held while building into `target`, so that a test run, a CLI call and the unit tests never
    build into each other's files."""
    target.mkdir(parents=True, exist_ok=True)
    with open(target / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _compile(spark: SparkInstall, sources: Path, target: Path) -> Path:
    """Builds the jar with Maven into the build directory of `spark`'s minor; returns its path."""
    build = build_directory(spark, target)
    # The build compiles every source whenever one changed (the pom's recompileMode), over the
    # classes of the previous build: cleared first, so that a deleted source leaves no class behind.
    shutil.rmtree(build / "classes", ignore_errors=True)
    command = maven_command(spark, ["--quiet", "-Dmaven.test.skip=true", "package"], maven_properties(spark, sources, target))
    result = subprocess.run(command, capture_output=True, text=True, cwd=CHECKOUT_JVM)
    built = build / jar_name(spark)
    if result.returncode != 0 or not built.is_file():
        raise JarBuildError("the Maven build failed (exit %d):\n%s%s" % (result.returncode, result.stdout, result.stderr))
    return built


def _ensure_jar_locked(spark: SparkInstall, sources: Path, target: Path, force: bool) -> Path:
    jar = target / jar_name(spark)
    stamp = jar.with_suffix(".jar.fingerprint")
    wanted = fingerprint(spark, sources, target)
    if not force and jar.exists() and stamp.exists() and stamp.read_text() == wanted:
        return jar
    built = _compile(spark, sources, target)
    # Copied, then renamed into place: a JVM that has the previous jar open keeps reading it whole.
    partial = jar.with_name(jar.stem + ".partial.jar")
    try:
        shutil.copyfile(built, partial)
        os.replace(partial, jar)
    finally:
        partial.unlink(missing_ok=True)
    stamp.write_text(wanted)
    return jar


def ensure_jar(
    spark: SparkInstall | None = None,
    *,
    sources: Path = CHECKOUT_SOURCES,
    target: Path = CHECKOUT_TARGET,
    force: bool = False,
) -> Path:
    """Compile `sources` for `spark` (default: the installed pyspark) into `target`, unless the
    jar there is up to date; return its path."""
    spark = spark or installed_spark()
    sources, target = Path(sources).resolve(), Path(target).resolve()
    with _build_lock(target):
        return _ensure_jar_locked(spark, sources, target, force)


def run_unit_tests(spark: SparkInstall, extra_arguments: list[str] | None = None) -> tuple[int, Path]:
    """Runs the JVM unit tests (`jvm/src/test/scala`) of the checkout against `spark`'s jars, output
    to this process's stdout; returns Maven's exit code and the directory of the JUnit XML reports.
    Builds the jar first if it is not up to date, so that the tests run on the classes it holds."""
    sources, target = CHECKOUT_SOURCES.resolve(), CHECKOUT_TARGET.resolve()
    with _build_lock(target):
        _ensure_jar_locked(spark, sources, target, force=False)
        build = build_directory(spark, target)
        # The test classes are compiled afresh: the build recompiles them only when a test source
        # changed, not when the classes they call did. Old reports go too, to count only this run's.
        for stale in ("test-classes", "surefire-reports"):
            shutil.rmtree(build / stale, ignore_errors=True)
        command = maven_command(spark, [*(extra_arguments or []), "test"], maven_properties(spark, sources, target))
        result = subprocess.run(command, cwd=CHECKOUT_JVM)
    return result.returncode, build / "surefire-reports"


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
    return (CHECKOUT_SOURCES / "main" / "scala").is_dir()


def extension_jar() -> Path:
    """The jar for the installed pyspark: compiled from the sources in a checkout, the shipped one
    for its Spark minor otherwise."""
    if is_checkout():
        return ensure_jar()
    return shipped_jar(installed_spark().spark_minor)
