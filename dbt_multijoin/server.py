"""A local Spark server run by spark-submit in the background, known by its pid file: what
`thrift.py` (a Spark Thrift Server) and `connect.py` (a Spark Connect server) share.

Each server owns a state directory (by default one per kind and port under the user cache
directory): `server.pid`, `server.log`, its own `warehouse/` and Derby `metastore_db/`. It binds
127.0.0.1 only. Stopping signals the pid from the pid file, after checking that the process
is still this server (a pid can be reused), and waits for it to exit.
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from dbt_multijoin.errors import DbtMultijoinError
from dbt_multijoin.launch import HOST, user_cache_dir

STOP_TIMEOUT = 60.0

# Servers started by this process: stopping reaps them so that they do not linger as zombies.
_CHILDREN: dict[int, subprocess.Popen] = {}


def default_state_dir(kind: str, port: int) -> Path:
    return user_cache_dir() / f"{kind}-{port}"


@dataclass
class LocalServer:
    """A server identified by its port and state directory (pid file, log, warehouse, metastore).

    Subclasses name their kind (the default state directory), their error class, and how to
    recognise their own process on its command line.
    """

    port: int
    state_dir: Path = field(default=None)  # type: ignore[assignment]

    KIND: ClassVar[str] = "server"
    TITLE: ClassVar[str] = "server"
    ERROR: ClassVar[type[DbtMultijoinError]] = DbtMultijoinError

    def __post_init__(self) -> None:
        if not 0 < self.port < 65536:
            raise self.ERROR(f"invalid port {self.port}")
        self.state_dir = Path(self.state_dir or default_state_dir(self.KIND, self.port)).resolve()

    def is_own_command(self, command: str) -> bool:
        """Whether a process with this command line is this server (guards against reused pids)."""
        raise NotImplementedError

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

    def local_confs(self) -> dict[str, str]:
        """Driver on 127.0.0.1, warehouse and Derby metastore in the state directory."""
        return {
            "spark.driver.host": HOST,
            "spark.driver.bindAddress": HOST,
            "spark.sql.warehouse.dir": str(self.warehouse_dir),
            "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={self.metastore_dir};create=true",
        }

    def pid(self) -> int | None:
        """The pid of this running server, or None (no pid file, process gone, or pid reused)."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        if not _alive(pid):
            return None
        if pid in _CHILDREN:
            # This process's own child, not yet reaped, so its pid cannot have been reused; and a
            # dying one's command line is already gone, which the check below would take for
            # another process, leaving the child unstopped and unreaped.
            return pid
        command = _command_line(pid)
        if command is not None and not self.is_own_command(command):
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


def launch(server: LocalServer, command: list[str], timeout: float, env: Mapping[str, str] | None = None) -> None:
    """Run `command` in the background for `server` (log and pid file in its state directory),
    with `env` added to this process's environment, and wait until its port accepts connections.
    On a timeout, an early exit or an interrupt the process is stopped and server.ERROR carries
    the end of its log."""
    if server.pid() is not None:
        raise server.ERROR(
            f"a {server.TITLE} is already running on port {server.port} (pid {server.pid()}, {server.state_dir})"
        )
    if server.accepts_connections():
        raise server.ERROR(f"port {server.port} on {HOST} is already in use by another process")
    server.state_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **(env or {}), "SPARK_LOCAL_IP": HOST}
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
        terminate(server)
        raise


def _wait_until_listening(server: LocalServer, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise server.ERROR(
                f"the {server.TITLE} exited with code {process.returncode} before listening on port {server.port}; "
                f"log {server.log_file}:\n{server.log_tail()}"
            )
        if server.accepts_connections():
            return
        time.sleep(0.5)
    raise server.ERROR(
        f"the {server.TITLE} did not listen on {HOST}:{server.port} within {timeout:.0f}s (stopped it); "
        f"log {server.log_file}:\n{server.log_tail()}"
    )


def terminate(server: LocalServer, timeout: float = STOP_TIMEOUT) -> bool:
    """Stop the server by the pid in its pid file; True if one was running."""
    pid = server.pid()
    if pid is None:
        server.pid_file.unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGTERM)  # the JVM's shutdown hooks stop the server and SparkContext
    if not _wait_for_exit(pid, timeout):
        os.kill(pid, signal.SIGKILL)
        if not _wait_for_exit(pid, 10.0):
            raise server.ERROR(f"pid {pid} did not exit after SIGKILL")
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
