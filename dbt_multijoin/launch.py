"""How Spark loads the extension: the one place that spells out the confs and the spark-submit
arguments. `thrift.py` runs them, `profiles.py` prints them in the profiles.yml snippets, and the
CLI help shows them (docs/architecture.md: the path of a query).

- A SparkSession built in-process (pyspark, dbt's session method): the two static confs of
  `session_confs`, set before the session starts.
- A Spark Thrift Server (dbt's thrift method): spark-submit of the server class with
  `extension_arguments`; confs that dbt sends once the server runs cannot load a jar.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import tempfile
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from dbt_multijoin import EXTENSION_CLASS
from dbt_multijoin.errors import PysparkNotInstalledError

SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
HOST = "127.0.0.1"  # a local server listens on the loopback interface only
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"


def user_cache_dir() -> Path:
    """The package's directory in the user cache: servers' state, fetched jars."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dbt-multijoin"


def session_confs(jar: Path | str) -> dict[str, str]:
    """The static confs that load the extension into a SparkSession (or dbt's server_side_parameters)."""
    return {"spark.jars": str(jar), "spark.sql.extensions": EXTENSION_CLASS}


def extension_arguments(jar: Path | str) -> list[str]:
    """The spark-submit arguments that load the extension into the application."""
    # The plain form Spark documents. --jars also ships the jar to the executors of a non-local
    # master. A Thrift server closes the class loader of --jars when a client session ends; the
    # extension loads all its classes when the server's session is built (ExtensionClassLoading),
    # so it needs no --driver-class-path.
    return ["--jars", str(jar), "--conf", f"spark.sql.extensions={EXTENSION_CLASS}"]


def thrift_server_arguments(
    port: int,
    jar: Path | str | None,
    *,
    options: Sequence[str] = (),
    confs: Mapping[str, str] | None = None,
) -> list[str]:
    """The arguments after `spark-submit` that run a Spark Thrift Server on HOST:port with the
    extension (jar=None: vanilla Spark); `options` (e.g. --master) go right after the class."""
    arguments = ["--class", SERVER_CLASS, *options]
    if jar is not None:
        arguments += extension_arguments(jar)
    for key, value in (confs or {}).items():
        arguments += ["--conf", f"{key}={value}"]
    arguments += [
        "--hiveconf", f"hive.server2.thrift.port={port}",
        "--hiveconf", f"hive.server2.thrift.bind.host={HOST}",
        "spark-internal",
    ]  # fmt: skip
    return arguments


def describe_thrift_command(port: int, jar: str, indent: str = "") -> str:
    """The spark-submit command of a Thrift Server with the extension, one option per line, for
    people to read (jar may be a placeholder)."""
    lines = ["spark-submit"]
    for argument in thrift_server_arguments(port, jar):
        if argument.startswith("--") or argument == "spark-internal":
            lines.append(argument)
        else:
            lines[-1] += " " + argument
    return f"\n{indent}  ".join(lines)


def spark_submit() -> Path:
    """The spark-submit of the installed pyspark (its wheel has no sbin/start-thriftserver.sh)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise PysparkNotInstalledError(
            "pyspark is not installed in this environment: a local Thrift server runs the pyspark's "
            "spark-submit (pip install 'dbt-multijoin[spark]')"
        )
    script = Path(spec.submodule_search_locations[0]).resolve() / "bin" / "spark-submit"
    if not script.exists():
        raise PysparkNotInstalledError(f"{script} not found: is pyspark installed completely?")
    return script


def thrift_server_class_path() -> list[Path]:
    """Jars a Thrift server of the installed pyspark needs on its class path beside Spark's own.

    Spark 4 no longer ships Hive's hive-llap-common (SPARK-51029), yet the server ends each client
    session through Hive's SessionState.close, which can initialise Hive's FunctionRegistry, and
    its static initialiser needs a class of that jar. Without it that close fails with
    NoClassDefFoundError (dbt reports it as the model's error), and Hive never marks its functions
    registered, so every later close that gets there waits forever. So on a pyspark without it:
    hive-llap-common at the version of the bundled hive-exec, fetched once from Maven Central into
    the user cache. Where it cannot be fetched the server starts without it, and this says so.
    """
    jars = spark_submit().parent.parent / "jars"
    if any(jars.glob("hive-llap-common-*.jar")):
        return []
    hive = next((m.group(1) for m in map(re.compile(r"hive-exec-(.+?)(?:-core)?\.jar").fullmatch, os.listdir(jars)) if m), None)
    if hive is None:
        return []
    coordinate = f"org.apache.hive:hive-llap-common:{hive}"
    try:
        return [maven_jar(coordinate, user_cache_dir() / "jars")]
    except OSError as error:
        print(
            f"dbt-multijoin: could not fetch {coordinate} from {MAVEN_CENTRAL} ({error}): the Thrift server "
            "starts without it, and a client session's end may fail with NoClassDefFoundError "
            "(org/apache/hadoop/hive/llap/security/LlapSigner$Signable) and later ones hang",
            file=sys.stderr,
        )
        return []


def maven_jar(coordinate: str, directory: Path) -> Path:
    """The jar of `coordinate` (group:artifact:version) in `directory`, fetched from Maven Central
    if it is not there yet. It downloads into a file of its own and is renamed into place, so two
    processes fetching it at once never read or write a half-written jar. OSError if it cannot be
    fetched."""
    group, artifact, version = coordinate.split(":")
    jar = directory / f"{artifact}-{version}.jar"
    if jar.exists():
        return jar
    directory.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=directory, suffix=".partial")
    os.close(handle)
    try:
        urllib.request.urlretrieve(f"{MAVEN_CENTRAL}/{group.replace('.', '/')}/{artifact}/{version}/{jar.name}", partial)
        os.chmod(partial, 0o644)  # mkstemp's file is its owner's only
        os.replace(partial, jar)
    finally:
        Path(partial).unlink(missing_ok=True)
    return jar
