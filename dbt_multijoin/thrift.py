"""A local Spark Thrift Server with the extension loaded, for development and tests.

`dbt-multijoin thrift start|stop|status` runs the server that a `method: thrift` dbt target
talks to: pyspark's own `bin/spark-submit` with the arguments of `launch.thrift_server_arguments`.

Each server owns a state directory (by default one per port under the user cache directory):
`server.pid`, `server.log`, its own `warehouse/` and Derby `metastore_db/`. The server, the
driver and the Spark UI bind to 127.0.0.1 only. `stop` signals the pid from the pid file
(after checking that it is this server) and waits for it to exit. What it shares with the
Spark Connect server (`connect.py`) lives in `server.py`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from dbt_multijoin import server as _server
from dbt_multijoin.errors import ThriftServerError
from dbt_multijoin.launch import HOST, SERVER_CLASS, spark_submit, thrift_server_arguments, thrift_server_class_path

__all__ = [
    "DEFAULT_MASTER", "DEFAULT_PORT", "HOST", "SERVER_CLASS", "START_TIMEOUT", "STOP_TIMEOUT",
    "ThriftServer", "build_command", "default_state_dir", "spark_submit", "start", "stop",
]  # fmt: skip

DEFAULT_PORT = 10000
DEFAULT_MASTER = "local[*]"
START_TIMEOUT = 180.0
STOP_TIMEOUT = _server.STOP_TIMEOUT


def default_state_dir(port: int) -> Path:
    return _server.default_state_dir("thrift", port)


@dataclass
class ThriftServer(_server.LocalServer):
    """A server identified by its port and state directory (pid file, log, warehouse, metastore)."""

    port: int = DEFAULT_PORT

    KIND: ClassVar[str] = "thrift"
    TITLE: ClassVar[str] = "Thrift server"
    ERROR: ClassVar[type[ThriftServerError]] = ThriftServerError

    def is_own_command(self, command: str) -> bool:
        # Guard against a recycled pid: it must still be a Thrift server on our port.
        return SERVER_CLASS in command and f"thrift.port={self.port}" in command


def build_command(
    server: ThriftServer,
    jar: Path | None,
    master: str = DEFAULT_MASTER,
    confs: dict[str, str] | None = None,
) -> list[str]:
    """The spark-submit command line; jar=None starts a vanilla server (no extension)."""
    settings = {**server.local_confs(), **(confs or {})}
    options = ["--master", master, "--name", f"dbt-multijoin-thrift-{server.port}"]
    return [str(spark_submit()), *thrift_server_arguments(server.port, jar, options=options, confs=settings)]


def start(
    port: int = DEFAULT_PORT,
    state_dir: Path | str | None = None,
    *,
    jar: Path | None | bool = True,
    master: str = DEFAULT_MASTER,
    confs: dict[str, str] | None = None,
    class_path: Sequence[Path | str] = (),
    timeout: float = START_TIMEOUT,
) -> ThriftServer:
    """Start a server and wait until its port accepts connections.

    jar=True uses `extension_jar()` (the jar for the installed pyspark), a Path uses that jar, and
    jar=None/False starts vanilla Spark without the extension. `class_path`: jars for the driver's
    system class loader, after Spark's own (a table format's runtime: a Thrift server closes the
    --jars class loader at the end of each client session). On a timeout or an early exit the
    process is stopped and ThriftServerError carries the end of its log.
    """
    server = ThriftServer(port, state_dir)
    if jar is True:
        from dbt_multijoin.jar import extension_jar

        jar = extension_jar()
    _server.launch(server, build_command(server, jar or None, master, confs), timeout, class_path_environment(class_path))
    return server


def class_path_environment(extra: Sequence[Path | str] = ()) -> dict[str, str]:
    """The jars of `thrift_server_class_path()` and `extra`, appended to the server's class path by
    Spark's launcher (SPARK_DIST_CLASSPATH): after Spark's own jars, on the driver's system class
    loader, where Hive's classes look for them. After, not before (as --driver-class-path puts
    them): a JVM started with a class-data-sharing archive of Spark's jars uses it only when its
    class path begins with the archive's."""
    jars = [str(jar) for jar in [*thrift_server_class_path(), *extra]]
    if not jars:
        return {}
    given = os.environ.get("SPARK_DIST_CLASSPATH")
    return {"SPARK_DIST_CLASSPATH": ":".join([given, *jars] if given else jars)}


def stop(port: int = DEFAULT_PORT, state_dir: Path | str | None = None, timeout: float = STOP_TIMEOUT) -> bool:
    """Stop the server by the pid in its pid file; True if one was running."""
    return _server.terminate(ThriftServer(port, state_dir), timeout)
