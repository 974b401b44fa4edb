"""A local Spark Thrift Server with the extension loaded, for development and tests.

`dbt-multijoin thrift start|stop|status` runs the server that a `method: thrift` dbt target
talks to: pyspark's own `bin/spark-submit` with the arguments of `launch.thrift_server_arguments`.

Each server owns a state directory (by default one per port under the user cache directory):
`server.pid`, `server.log`, its own `warehouse/` and Derby `metastore_db/`. The server, the
driver and the Spark UI bind to 127.0.0.1 only. `stop` signals the pid from the pid file
(after checking that it is this server) and waits for it to exit.
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from dbt_multijoin.errors import ThriftServerError
from dbt_multijoin.launch import HOST, SERVER_CLASS, spark_submit, thrift_server_arguments

DEFAULT_PORT = 10000
DEFAULT_MASTER = "local[*]"
START_TIMEOUT = 180.0
STOP_TIMEOUT = 60.0

# Servers started by this process: stop() reaps them so that they do not linger as zombies.
_CHILDREN: dict[int, subprocess.Popen] = {}


def default_state_dir(port: int) -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "dbt-multijoin" / f"thrift-{port}"


@dataclass
class ThriftServer:
    """A server identified by its port and state directory (pid file, log, warehouse, metastore)."""

    port: int = DEFAULT_PORT
    state_dir: Path = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if not 0 < self.port < 65536:
            raise ThriftServerError(f"invalid port {self.port}")
        self.state_dir = Path(self.state_dir or default_state_dir(self.port)).resolve()

    @property
    def pid_file(self) -> Path:
        return self.state_dir / "server.pid"

    @property
    def log_file(self) -> Path:
        return self.state_dir / "server.log"

    @property
    def warehouse_dir(self) -> Path:
        return self.state_dir / "warehouse"

    @property
    def metastore_dir(self) -> Path:
        return self.state_dir / "metastore_db"

    def pid(self) -> int | None:
        """The pid of this running server, or None (no pid file, process gone, or pid reused)."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        if not _alive(pid):
            return None
        command = _command_line(pid)
        # Guard against a recycled pid: it must still be a Thrift server on our port.
        if command is not None and (SERVER_CLASS not in command or f"thrift.port={self.port}" not in command):
            return None
        return pid

    def accepts_connections(self) -> bool:
        try:
            with socket.create_connection((HOST, self.port), timeout=1.0):
                return True
        except OSError:
            return False

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"


def build_command(
    server: ThriftServer,
    jar: Path | None,
    master: str = DEFAULT_MASTER,
    confs: dict[str, str] | None = None,
) -> list[str]:
    """The spark-submit command line; jar=None starts a vanilla server (no extension)."""
    settings = {
        "spark.driver.host": HOST,
        "spark.driver.bindAddress": HOST,
        "spark.sql.warehouse.dir": str(server.warehouse_dir),
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={server.metastore_dir};create=true",
        **(confs or {}),
    }
    options = ["--master", master, "--name", f"dbt-multijoin-thrift-{server.port}"]
    return [str(spark_submit()), *thrift_server_arguments(server.port, jar, options=options, confs=settings)]


def start(
    port: int = DEFAULT_PORT,
    state_dir: Path | str | None = None,
    *,
    jar: Path | None | bool = True,
    master: str = DEFAULT_MASTER,
    confs: dict[str, str] | None = None,
    timeout: float = START_TIMEOUT,
) -> ThriftServer:
    """Start a server and wait until its port accepts connections.

    jar=True uses `extension_jar()` (the jar for the installed pyspark), a Path uses that jar, and
    jar=None/False starts vanilla Spark without the extension. On a timeout or an early exit
    the process is stopped and ThriftServerError carries the end of its log.
    """
    server = ThriftServer(port, state_dir)
    if server.pid() is not None:
        raise ThriftServerError(f"a server is already running on port {port} (pid {server.pid()}, {server.state_dir})")
    if server.accepts_connections():
        raise ThriftServerError(f"port {port} on {HOST} is already in use by another process")
    if jar is True:
        from dbt_multijoin.jar import extension_jar

        jar = extension_jar()
    command = build_command(server, jar or None, master, confs)
    server.state_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, SPARK_LOCAL_IP=HOST)
    with open(server.log_file, "ab") as log:
        log.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} {shlex.join(command)}\n".encode())
        log.flush()
        # cwd: Derby and Hive drop files (derby.log) into the working directory.
        process = subprocess.Popen(
            command,
            cwd=server.state_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    _CHILDREN[process.pid] = process
    server.pid_file.write_text(f"{process.pid}\n")
    try:
        _wait_until_listening(server, process, timeout)
    except BaseException:  # timeout, early exit, Ctrl-C: leave nothing running
        stop(port, server.state_dir)
        raise
    return server


def _wait_until_listening(server: ThriftServer, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ThriftServerError(
                f"the Thrift server exited with code {process.returncode} before listening on port {server.port}; "
                f"log {server.log_file}:\n{server.log_tail()}"
            )
        if server.accepts_connections():
            return
        time.sleep(0.5)
    raise ThriftServerError(
        f"the Thrift server did not listen on {HOST}:{server.port} within {timeout:.0f}s (stopped it); "
        f"log {server.log_file}:\n{server.log_tail()}"
    )


def stop(port: int = DEFAULT_PORT, state_dir: Path | str | None = None, timeout: float = STOP_TIMEOUT) -> bool:
    """Stop the server by the pid in its pid file; True if one was running."""
    server = ThriftServer(port, state_dir)
    pid = server.pid()
    if pid is None:
        server.pid_file.unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGTERM)  # the JVM's shutdown hooks stop the server and SparkContext
    if not _wait_for_exit(pid, timeout):
        os.kill(pid, signal.SIGKILL)
        if not _wait_for_exit(pid, 10.0):
            raise ThriftServerError(f"pid {pid} did not exit after SIGKILL")
    server.pid_file.unlink(missing_ok=True)
    return True


def _wait_for_exit(pid: int, timeout: float) -> bool:
    child = _CHILDREN.get(pid)
    if child is not None:
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        del _CHILDREN[pid]
        return True
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    child = _CHILDREN.get(pid)
    if child is not None:
        return child.poll() is None  # reaps a zombie child
    try:  # a zombie (exited, not yet reaped by its parent) is not a running server
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return True


def _command_line(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except FileNotFoundError:
        pass
    try:  # no /proc (macOS)
        return subprocess.run(["ps", "-o", "command=", "-p", str(pid)], capture_output=True, text=True).stdout
    except OSError:
        return None
