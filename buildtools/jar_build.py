"""Compile the extension jar from a source checkout, and run its unit tests.

`jvm/src` is built with the Maven build `jvm/pom.xml`, through its wrapper `jvm/mvnw` (which
fetches Maven itself: a checkout needs only Python and Java), against the jars of the pyspark
wheel the jar is for. This module passes the build everything it takes from that Spark home and
from the package (see `maven_properties`). The jar is rebuilt only when its fingerprint (the
sources, the build definition, the package's version, the Spark and Scala versions) changes, under
a lock. A jar built once is kept in a cache outside the checkout (`jar_cache`), under a key made of
the same inputs without the checkout's paths: another clone or worktree of the same sources, and
a branch switched back to, take it from there instead of compiling again (a compile costs a minute
or more of CPU on 2 cores, and a test run builds one jar per supported minor). An installed wheel
never runs this: it ships ready jars (`dbt_multijoin.jar`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from dbt_multijoin import __version__
from dbt_multijoin.errors import JarBuildError
from dbt_multijoin.jar import SparkInstall, installed_spark, jar_name
from dbt_multijoin.launch import user_cache_dir

CHECKOUT = Path(__file__).resolve().parent.parent
CHECKOUT_JVM = CHECKOUT / "jvm"
CHECKOUT_SOURCES = CHECKOUT_JVM / "src"
CHECKOUT_TARGET = CHECKOUT_JVM / "target"
POM = CHECKOUT_JVM / "pom.xml"
MAVEN_WRAPPER = CHECKOUT_JVM / "mvnw"


def shim_dir(spark_minor: str, sources: Path = CHECKOUT_SOURCES, *, base: bool = False) -> Path:
    """A directory of the sources of what differs between Spark versions, under `sources/shims`.
    A build compiles two: the base of the minor's line, `spark-<major>` (`base`), which holds what
    the line's minors share, and the `SparkShim` object with what changes from minor to minor,
    in the directory of the newest Spark at or before `spark_minor`, `spark-<major>.<minor>`
    (Spark 4.0 builds with spark-3.5's, 4.3 with 4.2's): each is written once, for the minor that
    brought it."""
    version = tuple(int(part) for part in spark_minor.split("."))
    shims = Path(sources) / "shims"
    if base:
        candidates = [shims / f"spark-{version[0]}"]
    else:
        minors = [d for d in shims.glob("spark-*") if re.fullmatch(r"spark-\d+\.\d+", d.name)]
        since = {tuple(int(part) for part in d.name.removeprefix("spark-").split(".")): d for d in minors}
        candidates = [since[v] for v in sorted(since, reverse=True) if v <= version]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise JarBuildError(f"no shim sources for Spark {spark_minor} under {shims}")


def scala_sources(spark: SparkInstall, sources: Path = CHECKOUT_SOURCES) -> list[Path]:
    """The sources of the jar: the common ones (`main/scala`) plus the shim of `spark`'s version, its
    line's base and its `SparkShim` object (`shim_dir`)."""
    common = sources / "main" / "scala"
    if not common.is_dir():
        raise JarBuildError(f"no Scala sources under {common}")
    shims = (
        [shim_dir(spark.spark_minor, sources, base=True), shim_dir(spark.spark_minor, sources)]
        if (sources / "shims").is_dir()
        else []
    )
    return sorted(common.rglob("*.scala")) + [source for shim in shims for source in sorted(shim.rglob("*.scala"))]


# The jars besides Spark's own that the build compiles against, by the pom property naming each
# one's version: their versions change with Spark's patch releases, so they are read off the
# Spark home, as Spark's and Scala's are (spark-versions.toml names those of the tested patches,
# which tests/test_versions.py checks against the Spark homes of the checkout).
VERSIONED_JARS = {
    "scala.version": r"scala-library-(.+)\.jar",
    "kryo.version": r"kryo-shaded-(.+)\.jar",
    "slf4j.version": r"slf4j-api-(.+)\.jar",
}


def jar_version(spark: SparkInstall, pattern: str) -> str:
    """The version in the name of the one jar of `spark` matching `pattern` (a regex with one
    group, the version)."""
    versions = [match.group(1) for jar in spark.jars.glob("*.jar") if (match := re.fullmatch(pattern, jar.name))]
    if len(versions) != 1:
        raise JarBuildError(f"expected one jar named like {pattern} under {spark.jars}, found {len(versions)}")
    return versions[0]


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
        **{name: jar_version(spark, pattern) for name, pattern in VERSIONED_JARS.items()},
        "shim.base.dir": str(shim_dir(spark.spark_minor, sources, base=True)),
        "shim.dir": str(shim_dir(spark.spark_minor, sources)),
        "multijoin.sources": str(sources),
        "multijoin.build.directory": str(build_directory(spark, target)),
    }


def maven_command(spark: SparkInstall, goals: list[str], properties: dict[str, str]) -> list[str]:
    """The command running `goals` of the build for `spark`'s minor (its profile) with `properties`."""
    if not MAVEN_WRAPPER.is_file() or not POM.is_file():
        raise JarBuildError(f"no Maven build at {CHECKOUT_JVM} (pom.xml and mvnw)")
    profile = f"spark-{spark.spark_minor}"
    if f"<id>{profile}</id>" not in POM.read_text():
        raise JarBuildError(
            f"jvm/pom.xml has no profile {profile}: Spark {spark.spark_version} is not a supported minor "
            "(spark-versions.toml lists them)"
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
    _digest_build_and_sources(digest, spark, sources)
    return digest.hexdigest()


def _digest_build_and_sources(digest, spark: SparkInstall, sources: Path) -> None:
    """Adds the build definition and every source the jar compiles (its path in `sources` and its
    bytes) to `digest`."""
    for build_file in (Path(__file__), POM, CHECKOUT_JVM / ".mvn" / "wrapper" / "maven-wrapper.properties"):
        digest.update(build_file.read_bytes() if build_file.is_file() else b"")
    for source in scala_sources(spark, sources):
        digest.update(str(source.relative_to(sources)).encode())
        digest.update(source.read_bytes())


# The properties that name a directory of this checkout or of the Spark home: not part of the
# cache key (the Spark home's jars are, by the versions the other properties give).
_PATH_PROPERTIES = ("spark.home", "shim.base.dir", "shim.dir", "multijoin.sources", "multijoin.build.directory")
# How many jars the cache keeps (the newest used): a few branches' worth for each minor.
JAR_CACHE_ENTRIES = 40


def jar_cache() -> Path | None:
    """Where built jars are kept across checkouts: MULTIJOIN_JAR_CACHE, or the user's cache
    directory; none when MULTIJOIN_JAR_CACHE is `off` (every build compiles)."""
    configured = os.environ.get("MULTIJOIN_JAR_CACHE")
    if configured == "off":
        return None
    if configured:
        return Path(configured)
    return user_cache_dir() / "extension-jars"


def cache_key(spark: SparkInstall, sources: Path = CHECKOUT_SOURCES, target: Path = CHECKOUT_TARGET) -> str:
    """The fingerprint's inputs without the checkout's paths: the same for every checkout of the
    same sources, build definition and versions."""
    properties = {k: v for k, v in maven_properties(spark, sources, target).items() if k not in _PATH_PROPERTIES}
    digest = hashlib.sha256()
    digest.update(repr(sorted(properties.items())).encode())
    for shim in (shim_dir(spark.spark_minor, sources, base=True), shim_dir(spark.spark_minor, sources)):
        digest.update(str(shim.relative_to(sources)).encode())
    _digest_build_and_sources(digest, spark, sources)
    return digest.hexdigest()


def _cached_jar(spark: SparkInstall, key: str) -> Path | None:
    cache = jar_cache()
    if cache is None:
        return None
    cached = cache / f"{key}-{jar_name(spark)}"
    if not cached.is_file():
        return None
    os.utime(cached)  # the newest used stay (_keep_in_cache)
    return cached


def _keep_in_cache(spark: SparkInstall, key: str, jar: Path) -> None:
    """Copies a built jar into the cache (renamed into place whole), then drops the least recently
    used beyond JAR_CACHE_ENTRIES. A cache that cannot be written only costs the next compile."""
    cache = jar_cache()
    if cache is None:
        return
    try:
        cache.mkdir(parents=True, exist_ok=True)
        partial = cache / f".{key}-{os.getpid()}.partial"
        shutil.copyfile(jar, partial)
        os.replace(partial, cache / f"{key}-{jar_name(spark)}")
        kept = sorted(cache.glob("*.jar"), key=lambda path: path.stat().st_mtime, reverse=True)
        for old in kept[JAR_CACHE_ENTRIES:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


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
    key = cache_key(spark, sources, target)
    built = None if force else _cached_jar(spark, key)
    if built is None:
        built = _compile(spark, sources, target)
        _keep_in_cache(spark, key, built)
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
    sources: Path | None = None,
    target: Path | None = None,
    force: bool = False,
) -> Path:
    """Compile `sources` (default: jvm/src) for `spark` (default: the installed pyspark) into
    `target` (default: jvm/target), unless the jar there is up to date; return its path."""
    spark = spark or installed_spark()
    sources, target = Path(sources or CHECKOUT_SOURCES).resolve(), Path(target or CHECKOUT_TARGET).resolve()
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
