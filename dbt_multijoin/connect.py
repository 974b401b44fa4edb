"""A local Spark Connect server with the extension loaded, for development and tests.

`dbt-multijoin connect start|stop|status` runs pyspark's own `bin/spark-submit` with the server
class of Spark Connect, the extension's jar and conf (`launch.extension_arguments`, the same as a
Thrift server's) and a gRPC endpoint on 127.0.0.1:<port>. A Spark Connect client
(`SparkSession.builder.remote("sc://127.0.0.1:<port>")`, pyspark[connect]) then gets a session of
the server's one SparkContext: `spark.sql.extensions` is a static conf read when a session is
built, so it applies to every client session, while a client cannot set it itself.

Spark 4 wheels ship the server (`pyspark/jars/spark-connect_2.13-<v>.jar`). For Spark 3.5 it is a
separate Maven Central artifact, `org.apache.spark:spark-connect_2.12:<v>`, that spark-submit
fetches with `--packages`; when it cannot be resolved the server exits and `start` says so.

State directory, pid file, binding to 127.0.0.1 and stopping by pid: see `server.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from dbt_multijoin import server as _server
from dbt_multijoin.errors import DbtMultijoinError
from dbt_multijoin.launch import HOST, extension_arguments, spark_submit

DEFAULT_PORT = 15002  # Spark Connect's own default port
DEFAULT_MASTER = "local[*]"
START_TIMEOUT = 180.0
STOP_TIMEOUT = _server.STOP_TIMEOUT
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


class ConnectServerError(DbtMultijoinError):
    """The Spark Connect server could not be started or stopped; the message says why (with a log tail)."""


def default_state_dir(port: int) -> Path:
    return _server.default_state_dir("connect", port)


@dataclass
class ConnectServer(_server.LocalServer):
    """A Spark Connect server identified by its port and state directory."""

    port: int = DEFAULT_PORT

    KIND: ClassVar[str] = "connect"
    TITLE: ClassVar[str] = "Spark Connect server"
    ERROR: ClassVar[type[ConnectServerError]] = ConnectServerError

    @property
    def url(self) -> str:
        """What a client passes to `SparkSession.builder.remote` (or sets as SPARK_REMOTE)."""
        return f"sc://{HOST}:{self.port}"

    def is_own_command(self, command: str) -> bool:
        # Guard against a recycled pid: it must still be a Connect server on our port.
        return SERVER_CLASS in command and f"spark.connect.grpc.binding.port={self.port}" in command


def pyspark_version() -> str:
    """The version of the installed pyspark, read without importing it (no JVM, no py4j)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pyspark")
    except PackageNotFoundError:
        spark_submit()  # raises the error that says how to install pyspark
        raise


def server_package(spark_version: str) -> str | None:
    """The Maven coordinates spark-submit must fetch for the server, or None when the pyspark
    wheel ships it (Spark 4 and later)."""
    major = int(spark_version.split(".")[0])
    if major >= 4:
        return None
    # Spark 3.x builds for Scala 2.12; the connect server was never part of the pyspark wheel.
    return f"org.apache.spark:spark-connect_2.12:{spark_version}"


def connect_server_arguments(
    port: int,
    jar: Path | str | None,
    *,
    spark_version: str,
    options: list[str] | tuple[str, ...] = (),
    confs: dict[str, str] | None = None,
) -> list[str]:
    """The arguments after `spark-submit` that run a Spark Connect server on HOST:port with the
    extension (jar=None: vanilla Spark); `options` (e.g. --master) go right after the class."""
    arguments = ["--class", SERVER_CLASS, *options]
    package = server_package(spark_version)
    if package is not None:
        arguments += ["--packages", package]
    if jar is not None:
        arguments += extension_arguments(jar)
    settings = {
        "spark.connect.grpc.binding.address": HOST,
        "spark.connect.grpc.binding.port": str(port),
        # Fail instead of silently listening on the next free port, where no client looks.
        "spark.connect.grpc.port.maxRetries": "0",
        **(confs or {}),
    }
    for key, value in settings.items():
        arguments += ["--conf", f"{key}={value}"]
    return [*arguments, "spark-internal"]


def describe_connect_command(port: int, jar: str, spark_version: str, indent: str = "") -> str:
    """The spark-submit command of a Connect server with the extension, one option per line, for
    people to read (jar may be a placeholder)."""
    lines = ["spark-submit"]
    for argument in connect_server_arguments(port, jar, spark_version=spark_version):
        if argument.startswith("--") or argument == "spark-internal":
            lines.append(argument)
        else:
            lines[-1] += " " + argument
    return f"\n{indent}  ".join(lines)


def build_command(
    server: ConnectServer,
    jar: Path | None,
    master: str = DEFAULT_MASTER,
    confs: dict[str, str] | None = None,
    spark_version: str | None = None,
) -> list[str]:
    """The spark-submit command line; jar=None starts a vanilla server (no extension)."""
    settings = {**server.local_confs(), **(confs or {})}
    options = ["--master", master, "--name", f"dbt-multijoin-connect-{server.port}"]
    arguments = connect_server_arguments(
        server.port, jar, spark_version=spark_version or pyspark_version(), options=options, confs=settings
    )
    return [str(spark_submit()), *arguments]


def start(
    port: int = DEFAULT_PORT,
    state_dir: Path | str | None = None,
    *,
    jar: Path | None | bool = True,
    master: str = DEFAULT_MASTER,
    confs: dict[str, str] | None = None,
    timeout: float = START_TIMEOUT,
) -> ConnectServer:
    """Start a server and wait until its port accepts connections.

    jar=True uses `extension_jar()` (the jar for the installed pyspark), a Path uses that jar, and
    jar=None/False starts vanilla Spark without the extension. On a timeout or an early exit the
    process is stopped and ConnectServerError carries the end of its log.
    """
    server = ConnectServer(port, state_dir)
    if jar is True:
        from dbt_multijoin.jar import extension_jar

        jar = extension_jar()
    version = pyspark_version()
    try:
        _server.launch(server, build_command(server, jar or None, master, confs, version), timeout)
    except ConnectServerError as error:
        package = server_package(version)
        if package is None:
            raise
        unresolved = "unresolved dependency" in str(error)
        raise ConnectServerError(
            f"{error}\nSpark {version} does not ship the Spark Connect server: spark-submit fetches {package} "
            "with --packages (Maven Central, or the repositories of spark.jars.repositories / spark.jars.ivySettings)"
            + (f", and it could not resolve {package} there." if unresolved else ".")
        ) from None
    return server


def stop(port: int = DEFAULT_PORT, state_dir: Path | str | None = None, timeout: float = STOP_TIMEOUT) -> bool:
    """Stop the server by the pid in its pid file; True if one was running."""
    return _server.terminate(ConnectServer(port, state_dir), timeout)
